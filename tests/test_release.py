"""Installable the way users install: the version's one source, the sdist and wheel as PyPI takes
them, the wheel alone in a clean environment speaking an export without torch, the compose files as
a compose implementation reads them, the workflows as actionlint reads them, and the files users
build from naming only public images. The images themselves are built and run by `make image-check`
and `make addon-check` (scripts/image.sh)."""

from __future__ import annotations

import email
import io
import os
import re
import shutil
import subprocess
import sys
import tomllib
import wave
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
import yaml
from needs import need_programs
from packaging.requirements import Requirement
from supervisor import clone, clone_files

import hearth
from hearth.streaming.sinks import to_pcm

ROOT = Path(__file__).parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REPOSITORY = PYPROJECT["project"]["urls"]["Repository"]
OWNER = re.fullmatch(r"https://github\.com/([^/]+)/[^/]+", REPOSITORY).group(1)
IMAGE = f"ghcr.io/{OWNER}/hearth"
# The files a user builds or runs as they are: none may name an image that exists only where it was made.
COMPOSE_FILES = ["compose.yaml", "compose.openwebui.yaml", "compose.wyoming.yaml"]
USER_FILES = ["Dockerfile", ".dockerignore", *COMPOSE_FILES, "repository.yaml",
              *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "homeassistant").rglob("*")) if p.is_file()),
              *(str(p.relative_to(ROOT)) for p in sorted((ROOT / ".github").rglob("*.yml")))]
REQUIRE_ALL = os.environ.get("HEARTH_REQUIRE_ALL_TESTS") == "1"


def test_the_version_has_one_source():
    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hearth.__version__"}
    version = hearth.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?", version)
    addon = yaml.safe_load((ROOT / "homeassistant/hearth/config.yaml").read_text(encoding="utf-8"))
    assert addon["version"] == version  # the Supervisor's BUILD_VERSION: what the add-on installs
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    newest = re.search(r"^## (\S+) - (unreleased|\d{4}-\d{2}-\d{2})$", changelog, re.M)
    assert newest and newest.group(1) == version, "CHANGELOG.md's newest section is not this version"
    r = subprocess.run([sys.executable, "-m", "hearth.cli", "--version"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 0 and r.stdout == f"hearth {version}\n" and r.stderr == "", r


def test_the_repository_address_is_one():
    """The compose files' image, the add-on's and the repository's url, and the docs name one address."""
    addon = yaml.safe_load((ROOT / "homeassistant/hearth/config.yaml").read_text(encoding="utf-8"))
    repository = yaml.safe_load((ROOT / "repository.yaml").read_text(encoding="utf-8"))
    assert addon["url"] == repository["url"] == REPOSITORY
    for name in COMPOSE_FILES:
        services = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))["services"]
        for service, spec in services.items():
            if "hearth" in spec.get("image", "") or "build" in spec:
                assert spec["image"] == f"{IMAGE}:${{HEARTH_VERSION:-latest}}" and spec["build"] == ".", service
    for doc in ("README.md", "docs/home-assistant.md", "homeassistant/hearth/DOCS.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert REPOSITORY in text, f"{doc} does not give the repository's address"
        assert not re.findall(r"github\.com/(?!" + re.escape(OWNER) + r"/)[\w.-]+/hearth\b", text), doc


def test_no_file_a_user_runs_names_a_local_stand_in():
    for name in USER_FILES:
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        assert not re.search(r"\blocalhost/", text), f"{name} names a localhost/ image"
        assert not re.search(r"^(ENV|ARG)\b.*(PIP_CERT|\.crt|\.pem)", text, re.M | re.I), f"{name} sets a CA bundle"
        assert not re.search(r"^(COPY|ADD)\b.*\.(crt|pem)\b", text, re.M | re.I), f"{name} copies a CA bundle"
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^ARG BASE=docker\.io/library/debian:bookworm-slim$", dockerfile, re.M)
    # The CA bundle stays possible, as an optional secret used only when present.
    assert "--mount=type=secret,id=ca,required=false" in dockerfile and '[ -s /run/secrets/ca ]' in dockerfile


def compose(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "podman_compose", *args, "config"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False, env={**os.environ, **env})


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_the_compose_files_are_yaml(name):
    parsed = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))
    assert set(parsed) == {"services", "volumes"}


def test_a_compose_implementation_reads_them_and_keeps_the_key_guard():
    need_programs("podman")  # podman-compose reads the files through it
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
    r = compose("-f", "compose.yaml", "-f", "compose.openwebui.yaml", env={**env, "HEARTH_API_KEY": "k-1"})
    assert r.returncode == 0, r.stderr
    config = yaml.safe_load(r.stdout)
    hearth_service = config["services"]["hearth"]
    assert hearth_service["image"] == f"{IMAGE}:latest"
    assert hearth_service["environment"]["HEARTH_API_KEY"] == "k-1" and hearth_service["command"] == ["serve"]
    assert Path(hearth_service["build"]["context"]).resolve() == ROOT.resolve()
    assert config["services"]["open-webui"]["environment"]["AUDIO_TTS_OPENAI_API_KEY"] == "k-1"
    assert hearth_service["ports"] == ["8000:8000"]
    assert compose("-f", "compose.yaml", env={**env, "HEARTH_API_KEY": "k", "HEARTH_VERSION": "0.1.0"}).returncode == 0
    pinned = yaml.safe_load(compose("-f", "compose.yaml", env={**env, "HEARTH_API_KEY": "k",
                                                               "HEARTH_VERSION": "0.1.0"}).stdout)
    assert pinned["services"]["hearth"]["image"] == f"{IMAGE}:0.1.0"
    local = yaml.safe_load(compose("-f", "compose.yaml", env={**env, "HEARTH_API_KEY": "k",
                                                              "HEARTH_PUBLISH": "127.0.0.1:8080"}).stdout)
    assert local["services"]["hearth"]["ports"] == ["127.0.0.1:8080:8000"]
    refused = compose("-f", "compose.yaml", env=env)  # no key: refused, with what to set
    assert refused.returncode != 0 and "set HEARTH_API_KEY" in refused.stderr, refused.stderr
    wyoming = compose("-f", "compose.wyoming.yaml", env=env)  # Home Assistant's server needs no key
    assert wyoming.returncode == 0, wyoming.stderr
    service = yaml.safe_load(wyoming.stdout)["services"]["wyoming"]
    assert service["image"] == f"{IMAGE}:latest" and service["command"] == ["wyoming"]
    assert service["ports"] == ["10200:10200"] and service["volumes"] == ["hearth-data:/data"]


def test_the_workflows_pass_actionlint():
    if shutil.which("shellcheck") is None and REQUIRE_ALL:
        pytest.fail("shellcheck is not installed: actionlint would not check the workflows' scripts")
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert {w.name for w in workflows} >= {"ci.yml", "release.yml"}
    r = subprocess.run(["actionlint", "-no-color", *map(str, workflows)], capture_output=True, text=True,
                       timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    release = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8"))
    assert release[True]["push"]["tags"] == ["v*"]  # (YAML 1.1 reads the key `on` as true)
    jobs = release["jobs"]
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}  # trusted publishing, no token
    assert any(s.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for s in jobs["pypi"]["steps"])
    pushed = [s["with"] for job in ("image", "addon") for s in jobs[job]["steps"]
              if s.get("uses", "").startswith("docker/build-push-action@")]
    assert pushed[0]["platforms"] == "linux/amd64,linux/arm64" and pushed[0]["context"] == "."
    assert pushed[1]["context"] == "homeassistant/hearth"
    assert {i["platform"] for i in jobs["addon"]["strategy"]["matrix"]["include"]} == {"linux/amd64", "linux/arm64"}
    ci = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text(encoding="utf-8"))
    assert any(s.get("run") == ".ci/run" for s in ci["jobs"]["test"]["steps"])


# The wheel and the sdist, built as the release workflow builds them.

@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """`python -m build` on the files a clone holds (a `build/` folder in the working tree would
    shadow the build module, and untracked files have no place in a release)."""
    src = clone(ROOT, tmp_path_factory.mktemp("clone"))
    out = tmp_path_factory.mktemp("dist")
    # Offline, with this environment's setuptools (the release workflow builds in isolation).
    r = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                       capture_output=True, text=True, timeout=300, check=False, cwd=out)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


@pytest.mark.slow
def test_the_sdist_and_wheel_pass_twine_check(dist):
    files = sorted(dist.iterdir())
    version = hearth.__version__
    assert [f.name for f in files] == [f"hearth_tts-{version}-py3-none-any.whl", f"hearth_tts-{version}.tar.gz"]
    r = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)], capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0 and r.stdout.count("PASSED") == 2, r.stdout + r.stderr


@pytest.mark.slow
def test_the_wheel_holds_the_package_its_data_and_entry_points(dist):
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(z.read(info))
        entry_points = z.read(info.replace("METADATA", "entry_points.txt")).decode()
    tracked = {p.relative_to(ROOT).as_posix() for p in clone_files(ROOT) if p.parts[len(ROOT.parts)] == "hearth"}
    assert tracked and tracked <= names, sorted(tracked - names)  # every file of the package, its page and C source
    assert not any(n.startswith(("tests/", "scripts/")) for n in names)
    assert meta["Name"] == "hearth-tts" and meta["Version"] == hearth.__version__
    assert meta["License-Expression"] == "Apache-2.0" and meta["Requires-Python"] == ">=3.11"
    assert "hearth = hearth.cli:run" in entry_points and "hearth-container = hearth.tools.container:run" in entry_points
    runtime = {Requirement(r).name for r in meta.get_all("Requires-Dist") if "extra ==" not in r}
    assert runtime == {"numpy", "tokenizers", "safetensors", "huggingface_hub", "threadpoolctl", "openvino",
                       "onnxruntime", "num2words"}
    assert {"serve", "wyoming", "convert", "play"} <= set(meta.get_all("Provides-Extra"))


def closure(requirements: list[Requirement], extras: frozenset[str] = frozenset()) -> set[metadata.Distribution]:
    """The distributions of this environment that `requirements` (with `extras`) pull in, transitively."""
    found: dict[str, metadata.Distribution] = {}
    todo = [(r, extras) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (wanted or {""})):
            continue
        dist = metadata.distribution(req.name)
        assert dist.version in req.specifier or not req.specifier, (req, dist.version)
        key = dist.metadata["Name"].lower()
        if key in found:
            continue
        found[key] = dist
        todo += [(Requirement(r), frozenset(req.extras)) for r in dist.requires or []]
    return set(found.values())


@pytest.fixture(scope="module")
def runtime_venv(dist, tmp_path_factory) -> Path:
    """A clean venv holding the wheel without extras and exactly what it declares, transitively: its
    dependencies are taken from this environment (no package index is reached; each at the version
    installed here), linked in whole, so nothing the wheel does not ask for is importable."""
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path_factory.mktemp("runtime") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps",
                    "--no-index", "-q", str(wheel)], check=True, timeout=300)
    site = next((venv / "lib").glob("python3*/site-packages"))
    with zipfile.ZipFile(wheel) as z:
        meta = email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))))
    for dist in closure([Requirement(r) for r in meta.get_all("Requires-Dist")]):
        base = Path(dist.locate_file(""))
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            if not (site / top).exists() and (base / top).exists():
                (site / top).symlink_to(base / top)
    return venv


def _kernel_choices() -> dict[str, str]:
    """The environment's settings that pick this machine's math kernels and thread pools. The same codes
    are promised on one machine (docs/determinism.md), and these settings are part of the machine: under
    OPENBLAS_CORETYPE=Haswell (set in some build sandboxes) numpy's products round otherwise than under
    the kernels OpenBLAS picks itself, and the compiled backends project the text with numpy (on an AMD
    Zen 5, seed 3: 8 of the last frame's 16 codes differed)."""
    kinds = ("OPENBLAS_", "MKL_", "OMP_", "ONEDNN_", "DNNL_", "NPY_")
    return {k: v for k, v in os.environ.items() if k.startswith(kinds)}


@pytest.mark.slow
def test_the_wheel_alone_speaks_an_export_without_torch(runtime_venv, tiny_export, tmp_path):
    bin_ = runtime_venv / "bin"
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "HOME": str(tmp_path), "HEARTH_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT / "tests" / "audit"), "HEARTH_AUDIT_LOG": os.environ["HEARTH_AUDIT_LOG"],
           "HEARTH_IGNORE_TUNED": "1", "HF_HUB_OFFLINE": "1", **_kernel_choices()}
    version = subprocess.run([str(bin_ / "hearth"), "--version"], capture_output=True, text=True, env=env,
                             timeout=60, check=False)
    assert version.stdout == f"hearth {hearth.__version__}\n", version
    missing = subprocess.run([str(bin_ / "python"), "-c", "import torch"], capture_output=True, env=env, timeout=60,
                             check=False)
    assert missing.returncode != 0 and b"No module named 'torch'" in missing.stderr
    said = subprocess.run([str(bin_ / "hearth"), "say", "Installed from the wheel.", "--model", str(tiny_export),
                           "--backend", "openvino", "--voice", "ryan", "--seed", "3", "--max-new-tokens", "6",
                           "--no-guard", "--out", "-"], capture_output=True, env=env, timeout=300, check=False)
    assert said.returncode == 0, said.stderr.decode()[-3000:]
    engine = hearth.load(tiny_export, backend="openvino")
    try:
        want = engine.synthesize("Installed from the wheel.", "ryan", seed=3, max_new_tokens=6, budget=None).samples
    finally:
        engine.close()
    with wave.open(io.BytesIO(said.stdout)) as w:
        assert w.readframes(w.getnframes()) == to_pcm(want, "s16")
    assert np.asarray(want).size > 0

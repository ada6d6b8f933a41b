"""The container and the Home Assistant add-on, what is cheap to check without building an image:
the repository as the Supervisor reads a clone of it (tests/supervisor.py: repository.yaml at the
root, the add-on found by its config, the build's inputs), the add-on's config against the
Supervisor's rules for it, its Dockerfile against its build context (the add-on's folder alone), its
run script's option handling (as the Supervisor writes /data/options.json), the defaults `hearth
wyoming` takes from it, and the Dockerfile's stages as the README names them. The images are built
and run by `make image-check` and `make addon-check` (scripts/image.sh)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import supervisor
import yaml
from cli import hearth

ROOT = Path(__file__).parent.parent
ADDON = ROOT / "homeassistant" / "hearth"
RUN = ADDON / "run"

# The Supervisor's add-on arches and option types (its schema: str, bool, int, float with an optional
# range, list(a|b), email, url, port, password, match(...); a trailing ? makes an option optional).
ARCHES = {"armhf", "armv7", "aarch64", "amd64", "i386"}
TYPE = re.compile(r"^(str|bool|email|url|port|password|(int|float)(\((-?[\d.]*),(-?[\d.]*)\))?"
                  r"|list\(([^|()]+(\|[^|()]+)*)\)|match\(.+\))(\?)?$")


def config() -> dict:
    return yaml.safe_load((ADDON / "config.yaml").read_text(encoding="utf-8"))


def fits(value: object, kind: str) -> bool:
    m = TYPE.match(kind)
    assert m, kind
    base = m.group(1)
    if base.startswith(("int", "float")):
        number = (int,) if base.startswith("int") else (int, float)
        if isinstance(value, bool) or not isinstance(value, number):
            return False
        low, high = m.group(4), m.group(5)
        return (not low or value >= float(low)) and (not high or value <= float(high))
    if base.startswith("list("):
        return value in m.group(6).split("|")
    if base == "bool":
        return isinstance(value, bool)
    return isinstance(value, str)


def test_the_addon_config_follows_the_supervisors_rules():
    c = config()
    for key in ("name", "version", "slug", "description", "arch"):
        assert c.get(key), key
    assert re.fullmatch(r"[a-z0-9_]+", c["slug"]) and isinstance(c["version"], str)
    assert set(c["arch"]) == {"amd64", "aarch64"} and set(c["arch"]) <= ARCHES
    assert c["ports"] == {"10200/tcp": 10200} and "10200/tcp" in c["ports_description"]
    assert c["discovery"] == ["wyoming"] and c["hassio_api"] is True  # (the discovery API needs the latter)
    assert c["map"] == [{"type": "share", "read_only": True}]  # exports and lexicons are put under /share
    schema, options = c["schema"], c["options"]
    for key, kind in schema.items():
        assert TYPE.match(kind), (key, kind)
        if not kind.endswith("?"):
            assert key in options, f"{key} is required but has no default"
    for key, value in options.items():
        assert key in schema and fits(value, schema[key]), (key, value)
    assert (ADDON / "DOCS.md").is_file() and (ADDON / "CHANGELOG.md").read_text(encoding="utf-8").startswith("# ")
    assert set(yaml.safe_load((ADDON / "build.yaml").read_text(encoding="utf-8"))["build_from"]) == set(c["arch"])
    assert os.access(RUN, os.X_OK)


def test_a_supervisor_accepts_the_repository_and_finds_the_addon():
    files = supervisor.clone_files(ROOT)
    assert supervisor.repository(ROOT)["name"] == "Hearth"
    assert supervisor.addon_configs(ROOT, files) == [ADDON / "config.yaml"]  # and no other config file
    assert supervisor.addon(ADDON / "config.yaml")["slug"] == "hearth"
    with pytest.raises(supervisor.RepositoryError, match="refuses the address"):
        supervisor.repository(ROOT / "homeassistant")  # where it was: not a repository's root


@pytest.mark.parametrize("arch", ["amd64", "aarch64"])
def test_the_addon_builds_from_the_supervisors_inputs_alone(arch):
    """Home Assistant's Debian base for the architecture (its Alpine default has no onnxruntime or
    OpenVINO wheels), Hearth from the package index at the add-on's version, and nothing from outside
    the add-on's folder, which is the whole build context."""
    plan = supervisor.build_plan(ADDON / "config.yaml", arch)
    assert plan.base == f"ghcr.io/home-assistant/{arch}-base-debian:bookworm"
    assert plan.args["BUILD_VERSION"] == config()["version"] and plan.args["BUILD_ARCH"] == arch
    dockerfile = plan.dockerfile.read_text(encoding="utf-8")
    assert re.search(r"^ARG BUILD_FROM=ghcr\.io/home-assistant/base-debian:bookworm\nFROM \$\{BUILD_FROM\}$",
                     dockerfile, re.M)  # (the multi-arch name, for a build without build.yaml)
    assert '"hearth-tts[wyoming]==${BUILD_VERSION}"' in dockerfile
    assert "ARG HEARTH_PIP_INDEX=\n" in dockerfile  # empty: PyPI, unless a test names its own index
    for line in re.findall(r"^(?:COPY|ADD) (.+)$", dockerfile, re.M):
        *sources, _ = [w for w in line.split() if not w.startswith("--")]
        for source in sources:
            assert (plan.folder / source).resolve().is_relative_to(plan.folder), f"{source} is outside the context"
            assert (plan.folder / source).exists(), source
    assert "docker buildx build . --tag" in " ".join(plan.command("t")) and "--platform" in plan.command("t")


def run_script(tmp_path: Path, options: object, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    path = tmp_path / "options.json"
    path.write_text(options if isinstance(options, str) else json.dumps(options), encoding="utf-8")
    return subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, **(env or {}), "HEARTH_OPTIONS": str(path)})


def test_the_run_script_maps_the_options_to_the_server(tmp_path):
    defaults = config()["options"]
    r = run_script(tmp_path, {**defaults, "voice": "aiden", "language": "de", "speed": 1.5, "playback": "eager",
                              "seed": 7, "preset": "small"}, "--check")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    cmd = out["command"]
    assert cmd[:2] == ["hearth-container", "wyoming"] and out["preset"] == "small"
    assert out["model"] == defaults["model"]
    flags = dict(zip(cmd[2::2], cmd[3::2], strict=False))
    assert flags["--voice"] == "aiden" and flags["--language"] == "de" and flags["--speed"] == "1.5"
    assert flags["--playback"] == "eager" and flags["--seed"] == "7"
    assert "--zeroconf" in cmd  # no Supervisor: the server announces itself
    supervised = json.loads(run_script(tmp_path, defaults, "--check", env={"SUPERVISOR_TOKEN": "t"}).stdout)
    assert "--zeroconf" not in supervised["command"] and "--language" not in supervised["command"]  # auto
    export = tmp_path / "my-export"
    export.mkdir()
    given = json.loads(run_script(tmp_path, {**defaults, "model": str(export)}, "--check").stdout)
    assert given["model"] == str(export) and given["listen"] is None  # speech alone unless asked
    for listen in ("Qwen/Qwen3-ASR-1.7B", f" {export} "):
        hearing = json.loads(run_script(tmp_path, {**defaults, "listen": listen}, "--check").stdout)
        assert hearing["listen"] == listen.strip() and hearing["command"] == out["command"][:2] + hearing["command"][2:]
    assert json.loads(run_script(tmp_path, {**defaults, "listen": ""}, "--check").stdout)["listen"] is None


def test_the_container_serves_the_listening_model_beside_the_speech_model(tmp_path, monkeypatch, capsys):
    """What the run script's HEARTH_LISTEN becomes: `--listen` on the server `hearth-container`
    starts, its export read as it is (the export of a hub id is `hearth export`'s, tested in
    test_runtime_only), and a folder that is neither export nor checkpoint refused by name."""
    from hearth.tools import container

    speech, hearing = tmp_path / "speech", tmp_path / "asr"
    for folder in (speech, hearing):
        folder.mkdir()
        (folder / "hearth-export.json").write_text("{}", encoding="utf-8")
    assert container.prepare(str(hearing), "default", "HEARTH_LISTEN") == hearing
    monkeypatch.setenv("HEARTH_PORT", "10300")
    command, port = container.server_command("wyoming", speech, hearing, ["--voice", "ryan"], None)
    assert command == ["hearth", "wyoming", "--uri", "tcp://0.0.0.0:10300", "--model", str(speech),
                       "--listen", str(hearing), "--voice", "ryan"] and port == 10300
    command, _ = container.server_command("serve", speech, None, [], "k")
    assert "--listen" not in command and command[command.index("--api-key") + 1] == "k"
    with pytest.raises(SystemExit):
        container.prepare(str(tmp_path), "default", "HEARTH_LISTEN")
    assert f"HEARTH_LISTEN={tmp_path}: neither an export" in capsys.readouterr().err


@pytest.mark.parametrize(("options", "said"), [
    ("{not json", "not valid JSON"),
    ([1, 2], "must hold an object"),
    ({"preset": "fastest"}, "preset 'fastest': choose one of default, fast, small"),
    ({"speed": 9}, "speed 9: a number from 0.25 to 4.0"),
    ({"speed": "fast"}, "speed 'fast'"),
    ({"playback": "loud"}, "playback 'loud'"),
    ({"seed": -1}, "seed -1"),
    ({"voice": " "}, "voice must be a non-empty text"),
    ({"model": "/share/nowhere"}, "no such folder"),
    ({"model": "justaname"}, "give a hub id (owner/name"),
    ({"volume": 3}, "unknown option 'volume'"),
    ({"listen": "asr"}, "listen 'asr': give a hub id (owner/name, e.g. Qwen/Qwen3-ASR-0.6B)"),
    ({"listen": "/share/no-asr"}, "listen '/share/no-asr': no such folder"),
    ({"listen": 5}, "listen 5: a Qwen3-ASR hub id"),
])
def test_a_bad_option_is_named_in_the_addon_log_with_what_to_set(tmp_path, options, said):
    r = run_script(tmp_path, options)
    assert r.returncode == 2 and said in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert r.stderr.startswith("[hearth] cannot start:")


def test_every_problem_is_said_at_once(tmp_path):
    r = run_script(tmp_path, {"preset": "x", "speed": 0, "playback": "y"})
    assert r.returncode == 2 and all(k in r.stderr for k in ("preset 'x'", "speed 0", "playback 'y'")), r.stderr


def test_a_missing_options_file_says_who_writes_it(tmp_path):
    r = subprocess.run([sys.executable, str(RUN)], capture_output=True, text=True, timeout=60, check=False,
                       env={**os.environ, "HEARTH_OPTIONS": str(tmp_path / "none.json")})
    assert r.returncode == 2 and "Configuration tab" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(("flags", "said"), [
    (["--voice", "nobody"], "--voice"),
    (["--language", "klingon"], "--language"),
])
def test_wyoming_checks_its_default_voice_and_language_before_loading(tiny_dir, flags, said):
    r = hearth("wyoming", "--model", str(tiny_dir), "--uri", "tcp://127.0.0.1:0", *flags, timeout=60)
    assert r.returncode != 0 and said.encode() in r.stderr and b"Traceback" not in r.stderr, r.stderr


def test_the_dockerfile_stages_are_the_ones_the_docs_name():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    stages = re.findall(r"^FROM \S+ AS (\w+)$", dockerfile, re.M)
    assert stages == ["base", "build", "runtime"]
    docs = (ROOT / "docs" / "home-assistant.md").read_text(encoding="utf-8")
    for stage in stages:
        assert f"`{stage}`" in docs, stage
    assert "USER hearth" in dockerfile and "HEALTHCHECK" in dockerfile and "STOPSIGNAL SIGTERM" in dockerfile
    # A CA bundle is never baked in: it can only come as the optional build secret, for pip's one step.
    assert not re.search(r"^(COPY|ADD|ENV|ARG)\b.*(\.crt|\.pem|PIP_CERT)", dockerfile, re.M)
    assert "export PIP_CERT=/run/secrets/ca" in dockerfile
    # The build context is what the Dockerfile copies, and only that.
    allowed = {line[1:].rstrip("/") for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
               if line.startswith("!")}
    copied = {w for line in re.findall(r"^COPY (?!--from)(.+) \S+$", dockerfile, re.M) for w in line.split()}
    assert allowed == copied, (allowed, copied)

"""The container's entry point: find or make the model in the volume, then run the server.

    hearth-container wyoming [hearth wyoming flags]   Home Assistant's protocol on 0.0.0.0:10200
    hearth-container serve [hearth serve flags]       the OpenAI-compatible server on 0.0.0.0:8000
    hearth-container export                           only prepare the model (then exit)
    hearth-container health                           the image's health check
    hearth-container slim                             (image builds) drop from this venv what a CPU
                                                      server never opens

HEARTH_MODEL names the speech model: an export (a `hearth export` directory, read as it is), a
checkpoint directory, or a hub id. HEARTH_LISTEN, if set, names a Qwen3-ASR model the same ways: the
server then transcribes too (`--listen`; Wyoming's speech-to-text, /v1/audio/transcriptions). A
checkpoint or hub id is exported once into /data/exports/NAME-PRESET and read from there on every
later start, with no network (HF_HUB_OFFLINE=1 works then). Exporting needs the converter (torch,
onnx), which the runtime image leaves out: it is installed into /data/converter for that start and
removed after (HEARTH_KEEP_CONVERTER=1 keeps it), from the package index (HEARTH_TORCH_INDEX:
PyTorch's CPU wheels by default on x86-64; HEARTH_TORCH: the requirement). HEARTH_PRESET (default,
fast, small) chooses the speech export's preset. Logs go to stderr; SIGTERM stops the server.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["main", "run"]

DATA = Path(os.environ.get("HEARTH_DATA", "/data"))
STATE = Path(os.environ.get("HEARTH_STATE", "/tmp/hearth-container.json"))  # what `health` checks
PRESETS = ("default", "fast", "small")


def say(message: str) -> None:
    print(f"hearth-container: {message}", file=sys.stderr, flush=True)


def fail(message: str) -> None:
    say(message)
    raise SystemExit(2)


def is_export(path: Path) -> bool:
    return (path / "hearth-export.json").is_file()


def is_checkpoint(path: Path) -> bool:
    weights = (path / "model.safetensors").is_file() or (path / "model.safetensors.index.json").is_file()
    return (path / "config.json").is_file() and weights


def export_name(model: str, preset: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model.strip("/")).strip("-") + f"-{preset}"


def converter() -> Path:
    """A venv with the converter's own packages (torch on the CPU, onnx, onnxscript, OpenVINO with its
    frontends) that sees the image's (hearth, the rest) through a .pth file: made now, for this start."""
    venv = DATA / "converter"
    python = venv / "bin" / "python"
    if python.is_file() and subprocess.run([python, "-c", "import torch, onnxscript, hearth"], capture_output=True,
                                           check=False).returncode == 0:
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    say(f"installing the converter (torch on the CPU, onnx) into {venv}: for this start only")
    t0 = time.monotonic()
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    image_site = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                capture_output=True, encoding="utf-8", errors="replace", check=True).stdout.strip()
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, encoding="utf-8", errors="replace", check=True).stdout.strip()
    index = os.environ.get("HEARTH_TORCH_INDEX")
    if index is None and platform.machine() == "x86_64":
        index = "https://download.pytorch.org/whl/cpu"  # PyPI's x86 torch is the CUDA build (several GB)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    torch = os.environ.get("HEARTH_TORCH", "torch==2.13.0" if platform.machine() == "x86_64" else "torch>=2.5,<2.11")
    subprocess.run([*pip, *(["--index-url", index] if index else []), torch], check=True)
    # OpenVINO whole: the image's copy lacks the frontends that read torch's networks.
    from importlib.metadata import version

    subprocess.run([*pip, "onnx>=1.17", "onnxscript>=0.5", f"openvino=={version('openvino')}"], check=True)
    # After the installs: pip installs whole what the image has too (its OpenVINO lacks the frontends).
    Path(site, "hearth-image.pth").write_text(image_site + "\n", encoding="utf-8")
    say(f"converter installed in {time.monotonic() - t0:.0f} s")
    return venv


def prepare(model: str, preset: str, variable: str = "HEARTH_MODEL") -> Path:
    """The export to serve for `model` (named by the environment's `variable`): as given, kept from
    an earlier start, or made now (the converter is removed by `main` once every model is ready)."""
    if preset not in PRESETS:
        fail(f"HEARTH_PRESET={preset!r}: use one of {', '.join(PRESETS)}")
    model = model.strip()
    given = Path(model)
    try:
        if given.is_dir() and is_export(given):
            return given
        if given.is_absolute() and not given.exists():
            fail(f"{variable}={model}: no such directory in the container (mount it, e.g. -v "
                 "/srv/models:/models:ro)")
        if given.is_absolute() and not is_checkpoint(given):
            fail(f"{variable}={model}: neither an export (hearth-export.json) nor a checkpoint (config.json and "
                 "model.safetensors)")
    except PermissionError as e:
        fail(f"{variable}={model}: the server's user (uid {os.getuid()}) may not read {e.filename}: make the "
             "folder and its files readable by all (chmod -R a+rX on the host)")
    out = DATA / "exports" / export_name(model, preset)
    if is_export(out):
        say(f"the model: {out} (exported on an earlier start)")
        return out
    venv = converter()
    say(f"exporting {model} ({preset}) into {out}: once; later starts read it")
    t0 = time.monotonic()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".part")
    shutil.rmtree(partial, ignore_errors=True)
    env = {**os.environ, "HEARTH_CACHE": str(DATA / "cache" / "convert")}
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "hearth.cli", "export", model, str(partial),
                           "--preset", preset], env=env, check=False)
    if done.returncode != 0:
        fail(f"the export of {model} failed (its messages are above)")
    partial.rename(out)
    shutil.rmtree(DATA / "cache" / "convert", ignore_errors=True)
    say(f"exported in {time.monotonic() - t0:.0f} s")
    return out


def server_command(mode: str, model: Path, listen: Path | None, flags: list[str],
                   key: str | None) -> tuple[list[str], int]:
    """The `hearth wyoming` or `hearth serve` command for the prepared models, on all addresses, and its port."""
    hearing = ["--listen", str(listen)] if listen is not None else []
    if mode == "wyoming":
        port = int(os.environ.get("HEARTH_PORT", "10200"))
        return ["hearth", "wyoming", "--uri", f"tcp://0.0.0.0:{port}", "--model", str(model), *hearing, *flags], port
    port = int(os.environ.get("HEARTH_PORT", "8000"))
    return ["hearth", "serve", "--host", "0.0.0.0", "--port", str(port), "--model", str(model), *hearing,
            *(["--api-key", key] if key else []), *flags], port


def health() -> int:
    """0 when the server answers: Wyoming's describe, or HTTP /health."""
    try:
        state = json.loads(STATE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 1  # not started yet
    port = int(state["port"])
    if state["mode"] == "serve":
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                return 0 if r.status == 200 else 1
        except OSError:
            return 1
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b'{"type": "describe"}\n')
            s.settimeout(5)
            return 0 if b'"info"' in s.recv(65536) else 1
    except OSError:
        return 1


# OpenVINO's parts that a server on the CPU never opens: the GPU and NPU plugins, the meta-devices,
# and the frontends that read other frameworks' models (Hearth's graphs are OpenVINO IR). The
# converter that exports a checkpoint on a first start installs OpenVINO whole into its own venv.
_UNUSED_OPENVINO = ("libs/libopenvino_intel_gpu_plugin.so", "libs/libopenvino_intel_npu_plugin.so",
                    "libs/libopenvino_auto_batch_plugin.so", "libs/libopenvino_hetero_plugin.so",
                    "libs/libopenvino_auto_plugin.so", "libs/libopenvino_onnx_frontend.so*",
                    "libs/libopenvino_paddle_frontend.so*", "libs/libopenvino_pytorch_frontend.so*",
                    "libs/libopenvino_tensorflow_frontend.so*", "libs/libopenvino_tensorflow_lite_frontend.so*",
                    "libs/libopenvino_jax_frontend.so*", "tools", "frontend/tensorflow", "frontend/pytorch",
                    "frontend/jax", "frontend/paddle", "frontend/onnx")


def slim() -> int:
    """Remove from this environment's site-packages what a CPU server never opens (OpenVINO's other
    devices and frontends), the packages' own tests and bytecode caches; then compile Hearth's
    bytecode, so that a read-only image does not recompile it at every start. For image builds."""
    import compileall
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    freed = 0
    doomed = [*(d for d in site.rglob("*") if d.is_dir() and d.name in ("tests", "test", "__pycache__")),
              *(f for pattern in _UNUSED_OPENVINO for f in (site / "openvino").glob(pattern))]
    for path in doomed:
        if not path.exists():
            continue  # (inside a folder removed before it)
        files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
        freed += sum(f.stat().st_size for f in files)
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    compileall.compile_dir(site / "hearth", quiet=1)
    say(f"slimmed {site}: {freed / 1e6:.0f} MB removed")
    return 0


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "wyoming"
    if mode == "health":
        return health()
    if mode == "slim":
        return slim()
    if mode not in ("wyoming", "serve", "export"):
        fail(f"unknown command {mode!r}: wyoming, serve, export, health or slim")
    try:
        model = prepare(os.environ.get("HEARTH_MODEL", "Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice"),
                        os.environ.get("HEARTH_PRESET", "default"))
        hearing = os.environ.get("HEARTH_LISTEN", "").strip()
        listen = prepare(hearing, "default", "HEARTH_LISTEN") if hearing else None  # (its networks: int8)
    finally:
        if os.environ.get("HEARTH_KEEP_CONVERTER") != "1":
            shutil.rmtree(DATA / "converter", ignore_errors=True)
    if mode == "export":
        say(f"the model is ready: {model}" + (f"; the listening model: {listen}" if listen else ""))
        return 0
    key = os.environ.get("HEARTH_API_KEY") if mode == "serve" else None  # (compose passes it from the host)
    command, port = server_command(mode, model, listen, argv[1:], key)
    STATE.write_text(json.dumps({"mode": mode, "port": port}), encoding="utf-8")
    say(" ".join("***" if key and a == key else a for a in command))
    os.execvp(command[0], command)  # the server takes SIGTERM itself
    return 0


def run() -> None:
    """The console entry point `hearth-container`."""
    raise SystemExit(main(sys.argv[1:]))


if __name__ == "__main__":
    run()

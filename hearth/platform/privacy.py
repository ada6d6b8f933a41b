"""Nothing leaves the machine: the switches that keep Hearth's dependencies from reporting home.

Hearth itself contacts nothing but the addresses a user names (a server's clients, `hearth chat`'s
LLM) and the Hugging Face hub, only to download a model the user named that is not in its cache
(`HF_HUB_OFFLINE=1` forbids even that). Three dependencies would otherwise report usage:

- OpenVINO. Importing `openvino` imports its model-conversion API (`openvino.tools.ovc`), which
  sends an event to Google Analytics through the `openvino-telemetry` package at import and at every
  `convert_model`; NNCF (int4 weights) does the same. Where the user never answered OpenVINO's
  consent question (no `~/intel/openvino_telemetry` file), that counts as consent: a client ID and a
  usage counter are written under `~/intel`, and each event forks the process to send it (a fork of
  a multithreaded process, which can deadlock: `hearth chat` was left hanging that way).
- ONNX Runtime (1.32 on Linux seen): importing it records a "ProcessInfo" event (a device ID, the
  OS, the Python executable's path, the network's kind) in a store of events to upload,
  `~/.cache/Microsoft/DeveloperTools/.onnxruntime/onnxruntime.db`, beside a `deviceid` file; on a
  machine with a network they leave it. `onnxruntime.disable_telemetry_events()` does not stop that
  event (it is recorded at import); the `ORT_DISABLE_TELEMETRY` variable, set before the import,
  does: no event, no file.
- Ray (`hearth cluster`), whose local cluster reports usage statistics unless told not to.

For OpenVINO the cleanest supported switch is the one both OpenVINO and NNCF provide for a missing
`openvino-telemetry` package: each imports it in a `try` and falls back to a stub that sends nothing
(`openvino.tools.ovc.telemetry_stub`, `nncf.telemetry.wrapper.NNCFTelemetryStub`). Marking the
module as absent in this process (`sys.modules[name] = None`, which makes `import` raise
ImportError) selects those stubs. It changes nothing on disk: the user's own consent setting for
other OpenVINO tools and processes stays as it is. The alternatives are worse: the consent file is
the user's, shared with every OpenVINO tool; the `CI` variable that also disables it changes other
libraries' behaviour. This must run before anything imports `openvino`, so the package runs it
first (`hearth/__init__.py`); a program that imported OpenVINO before Hearth has the telemetry
object already made, and it is switched off for the rest of that process instead.

For ONNX Runtime, `ORT_DISABLE_TELEMETRY=1` is set in this process's environment (unless the user
set it), before anything imports it; the processes Hearth starts inherit it. Where ONNX Runtime
was imported before Hearth, its import's event is recorded already; its later events are switched
off (`disable_telemetry_events`).

For Ray the supported switch is `RAY_USAGE_STATS_ENABLED=0` in the environment of the processes
that start a cluster, and one more file keeps its head process from asking cloud metadata services
who hosts the machine (`quiet_local_ray`). A Ray cluster the user started follows the user's own
settings.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["TELEMETRY_MODULE", "block_telemetry", "quiet_local_ray"]

log = logging.getLogger(__name__)

TELEMETRY_MODULE = "openvino_telemetry"


def block_telemetry() -> None:
    """Make OpenVINO, NNCF and ONNX Runtime send nothing from this process (see the module's docstring)."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    onnxruntime = sys.modules.get("onnxruntime")
    if onnxruntime is not None and hasattr(onnxruntime, "disable_telemetry_events"):
        onnxruntime.disable_telemetry_events()
    loaded = sys.modules.get(TELEMETRY_MODULE)
    if loaded is None:
        sys.modules[TELEMETRY_MODULE] = None  # type: ignore[assignment]  # "absent": import raises ImportError
        return
    # Imported before Hearth (by the program that imports Hearth): its singleton may exist already,
    # made with the user's consent. Every send checks its `consent` flag; clear it in memory only.
    try:
        instance = loaded.Telemetry()  # the existing singleton; raises if none was made yet
    except Exception:  # noqa: BLE001 - no instance yet, or an API of another version
        instance = None
    if instance is not None and getattr(instance, "consent", False):
        instance.consent = False
        log.debug("OpenVINO's telemetry, imported before hearth, is off for the rest of this process")


@contextlib.contextmanager
def quiet_local_ray(cache: Path) -> Iterator[None]:
    """The environment in which to start a local Ray (`ray.init()`), whose processes inherit it:

    - `RAY_USAGE_STATS_ENABLED=0`, Ray's supported switch for its usage statistics;
    - RAY_TMPDIR in Hearth's cache (where the path is short enough for Ray's sockets);
    - HOME at a folder of Hearth's cache holding an empty `ray_bootstrap_config.yaml`. Ray's head
      process runs its usage-statistics module even when statistics are off, and that module looks
      for the autoscaler's `~/ray_bootstrap_config.yaml`; without one it asks the cloud metadata
      services who hosts the machine (a DNS lookup of metadata.google.internal, HTTP to
      169.254.169.254), which the audit in tests/test_cluster.py caught. With the file there it
      reads that instead and asks nobody. `HEARTH_CACHE` and `HF_HOME` are pinned first, so that the
      replicas Ray starts still find the user's converted models and downloads.

    HOME is restored when the block ends; the processes started inside keep what they inherited."""
    from huggingface_hub import constants

    home = cache / "ray-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "ray_bootstrap_config.yaml").write_text("{}\n", encoding="utf-8")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray's session files (logs, sockets) under the cache too, not /tmp/ray, where the path leaves
    # room for Ray's socket names (a Unix socket's path is at most 107 bytes).
    temp = cache / "rt"
    if len(str(temp)) <= 36 and "RAY_TMPDIR" not in os.environ:
        temp.mkdir(parents=True, exist_ok=True)
        os.environ["RAY_TMPDIR"] = str(temp)
    os.environ.setdefault("HEARTH_CACHE", str(cache))
    os.environ.setdefault("HF_HOME", str(constants.HF_HOME))
    previous = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = previous

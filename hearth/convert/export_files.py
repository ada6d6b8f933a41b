"""What every `hearth export` writes the same way, of a speech or a hearing model: the files copied
(readable by all), their size, and the versions of the tools that made them."""

from __future__ import annotations

import os
import shutil
from contextlib import suppress
from pathlib import Path

from hearth.checkpoint.exported import MANIFEST

__all__ = ["RUNTIMES", "copy_tree", "tool_versions", "tree_size"]

RUNTIMES = ("openvino", "onnxruntime")


def tool_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("hearth-tts", "openvino", "onnxruntime", "torch", "nncf", "onnxscript"):
        with suppress(PackageNotFoundError):
            found[package] = version(package)
    return found


def copy_tree(source: Path, target: Path, skip: tuple[str, ...] = (".", "converted", "voices", MANIFEST)) -> int:
    """The files under `source` but those whose first part starts with one of `skip`, hard-linked
    where the file system allows it, else copied; their bytes. Every file of an export is readable
    by all (it is copied to other machines and read by other users: a container's, a service's):
    a file that is not stays apart, copied and made so (safetensors writes its files 0600)."""
    total = 0
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if path.is_dir() or rel.parts[0].startswith(skip):
            continue
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        readable = path.stat().st_mode & 0o444 == 0o444
        try:
            if not readable:
                raise OSError("copied, to be made readable")
            os.link(path.resolve(), dest)
        except OSError:
            shutil.copy2(path, dest)
            dest.chmod(dest.stat().st_mode | 0o444)
        total += dest.stat().st_size
    return total


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())

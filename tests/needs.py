"""What a test needs from outside Python (a program or a library from the system's packages).

Where it is missing, the test skips and says what to install; under CI (`HEARTH_REQUIRE_ALL_TESTS`,
set by conftest.py from `CI=true`) it fails instead, since `.ci/run` installs every one of them.
"""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["need", "need_programs"]


def need(present: bool, reason: str) -> None:
    """Skip (or, under CI, fail) the calling test with `reason` unless `present`."""
    if present:
        return
    if os.environ.get("HEARTH_REQUIRE_ALL_TESTS"):  # CI (conftest.py)
        pytest.fail(f"{reason}; it is part of the CI set-up (.ci/run)")
    pytest.skip(reason)


def need_programs(*programs: str, package: str | None = None) -> list[str]:
    """The paths of `programs`, each found on PATH, else skip (fail under CI), naming the Debian
    package(s) that provide them."""
    paths = [shutil.which(p) for p in programs]
    need(all(paths), f"no {', '.join(p for p, path in zip(programs, paths, strict=True) if not path)}: "
                     f"apt-get install {package or ' '.join(programs)}")
    return [p for p in paths if p]

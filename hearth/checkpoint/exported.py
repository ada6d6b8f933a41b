"""Reading a model directory that `hearth export` wrote: a checkpoint in the official layout with
its conversions, stored voices and a manifest (`hearth-export.json`) beside it.

A conversion is found in the export by its runtime, its name and its key, the same key the cache
uses less the tools it was made with and the weights files' times (`conversions._same_conversion`), so
a copy on another machine finds the same entries. Nothing here converts: that is
hearth/tools/export.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MANIFEST", "Export", "export_options", "find_export"]

MANIFEST = "hearth-export.json"
FORMAT = "hearth-export-1"


@dataclass(frozen=True)
class Export:
    root: Path
    manifest: dict[str, Any]

    def converted(self, runtime: str) -> Path:
        return self.root / "converted" / runtime

    def entries(self, runtime: str, name: str) -> list[Path]:
        """The finished conversions named `name` (e.g. "lm-int8") for `runtime`."""
        folder = self.converted(runtime)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob(f"{name}-*") if (p / "manifest.json").is_file())

    @property
    def voices(self) -> Path:
        return self.root / "voices"

    @property
    def load_options(self) -> dict[str, Any]:
        """The backend keywords the export was made for (its preset's), used where a load gives none."""
        options = self.manifest.get("load_options")
        return dict(options) if isinstance(options, dict) else {}


def find_export(path: Path) -> Export | None:
    """The export `path` is in (the model directory, or its speech_tokenizer folder), else None."""
    for folder in (path, path.parent):
        manifest = folder / MANIFEST
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise ValueError(f"{manifest} is damaged ({e}); export the model again (hearth export)") from e
            if data.get("format") != FORMAT:
                raise ValueError(f"{manifest} is of format {data.get('format')!r}, which this Hearth does not read "
                                 f"({FORMAT}); export the model again with this version")
            return Export(folder, data)
    return None


def export_options(model: object, given: dict[str, Any]) -> dict[str, Any]:
    """`given` backend keywords, with the export's preset filling in when the load chose neither a
    backend, weights nor the fast preset (a model exported `--preset fast` runs fast by itself)."""
    if any(given.get(k) is not None for k in ("backend", "weights", "fast", "small")):
        return given
    try:
        export = find_export(Path(str(model)))
    except (OSError, ValueError):
        return given  # the load itself says what is wrong
    if export is None:
        return given
    return {**given, **{k: v for k, v in export.load_options.items() if given.get(k) is None}}

"""A memory-mapped, validating reader for .safetensors files.

The format is an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
shape and byte range, then the raw bytes. Reading it here (rather than through a loader that
copies) lets a 622 MB embedding table stay on disk until rows of it are used, and lets a truncated
or corrupt file be reported with its name before any tensor is built.

`array` gives numpy views (the runtime's, no torch); `get` gives torch tensors (converting, the
torch reference), imported only then.
"""

from __future__ import annotations

import json
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

__all__ = ["SafetensorsError", "SafetensorsFile", "TensorInfo", "widen"]

# Each dtype's numpy view (bfloat16, which numpy lacks, is read as its raw 16 bits: see `widen`).
_NUMPY = {
    "F32": np.float32,
    "F16": np.float16,
    "BF16": np.uint16,
    "F64": np.float64,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U8": np.uint8,
    "BOOL": np.bool_,
}
FLOATING = ("F32", "F16", "BF16", "F64")
_TORCH = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64", "I64": "int64", "I32": "int32",
          "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}


def widen(values: np.ndarray, dtype: str) -> np.ndarray:
    """Values of a tensor stored as `dtype` (an `array` view or rows of it) as float32; exact for
    bfloat16 (its bits are a float32's upper half) and float16."""
    if dtype == "BF16":
        return (values.astype(np.uint32) << 16).view(np.float32)
    return values.astype(np.float32)

_MAX_HEADER = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    """The file is not a readable safetensors file (truncated, corrupt, or of another format)."""


@dataclass(frozen=True)
class TensorInfo:
    dtype: str  # the file's own name: "F32", "BF16", ...
    shape: tuple[int, ...]
    begin: int  # absolute byte offset in the file
    end: int

    @property
    def is_floating_point(self) -> bool:
        return self.dtype in FLOATING


class SafetensorsFile:
    """Tensors of one file as zero-copy views of a private (copy-on-write) memory map."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed by the with-block below
        except OSError as e:
            raise SafetensorsError(f"{self.path}: cannot open ({e.strerror})") from e
        with f:
            size = f.seek(0, 2)
            f.seek(0)
            if size < 8:
                raise SafetensorsError(f"{self.path}: file is {size} bytes, too short to be safetensors")
            (header_len,) = struct.unpack("<Q", f.read(8))
            if header_len > min(_MAX_HEADER, size - 8):
                raise SafetensorsError(f"{self.path}: header length {header_len} is impossible; file corrupt")
            try:
                header = json.loads(f.read(header_len))
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise SafetensorsError(f"{self.path}: header is not valid JSON; file corrupt") from e
            # ACCESS_COPY gives writable pages (torch.frombuffer requires that) that are never
            # written back; untouched pages cost no resident memory.
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) if size > 0 else None
        data_start = 8 + header_len
        self.metadata = header.pop("__metadata__", None) or {}
        self.tensors: dict[str, TensorInfo] = {}
        for name, spec in header.items():
            try:
                dtype = str(spec["dtype"])
                itemsize = np.dtype(_NUMPY[dtype]).itemsize
                shape = tuple(int(d) for d in spec["shape"])
                begin, end = (int(x) for x in spec["data_offsets"])
            except (KeyError, TypeError, ValueError) as e:
                raise SafetensorsError(f"{self.path}: entry '{name}' is malformed") from e
            count = 1
            for d in shape:
                count *= d
            if end - begin != count * itemsize or begin < 0:
                raise SafetensorsError(f"{self.path}: entry '{name}' has a byte range that does not fit its shape")
            if data_start + end > size:
                raise SafetensorsError(
                    f"{self.path}: truncated ({size} bytes, tensor '{name}' ends at {data_start + end}); "
                    "re-download the file"
                )
            self.tensors[name] = TensorInfo(dtype, shape, data_start + begin, data_start + end)

    def array(self, name: str) -> np.ndarray:
        """A zero-copy numpy view (bfloat16 as its raw uint16 bits: `widen` turns them into float32)."""
        info = self.tensors[name]
        dtype = np.dtype(_NUMPY[info.dtype])
        count = (info.end - info.begin) // dtype.itemsize
        if count == 0 or self._map is None:
            return np.empty(info.shape, dtype)
        return np.frombuffer(self._map, dtype=dtype, count=count, offset=info.begin).reshape(info.shape)

    def floats(self, name: str) -> np.ndarray:
        """A floating-point tensor as a float32 array (a copy unless stored as float32)."""
        return widen(self.array(name), self.tensors[name].dtype)

    def get(self, name: str) -> torch.Tensor:
        """A zero-copy torch view (converting and the torch reference; imports torch)."""
        import torch

        info = self.tensors[name]
        dtype = getattr(torch, _TORCH[info.dtype])
        count = (info.end - info.begin) // dtype.itemsize
        if count == 0:
            return torch.empty(info.shape, dtype=dtype)
        flat = torch.frombuffer(self._map, dtype=dtype, count=count, offset=info.begin)
        return flat.view(info.shape)

    def release(self, name: str) -> None:
        """Drop the resident pages of a tensor already copied elsewhere (they are re-read if touched).

        Only whole pages inside the tensor's byte range are dropped, so neighbours stay intact.
        """
        if self._map is None or not hasattr(mmap, "MADV_DONTNEED"):
            return
        info = self.tensors[name]
        page = mmap.PAGESIZE
        start = -(-info.begin // page) * page
        end = (info.end // page) * page
        if end > start:
            self._map.madvise(mmap.MADV_DONTNEED, start, end - start)

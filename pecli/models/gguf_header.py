"""A GGUF file's header, checked against the file's size before anything trusts it.

A GGUF file (llama.cpp's ``gguf-py/gguf/gguf_reader.py`` and the format's description in
``ggml/include/gguf.h``) starts with the magic ``GGUF``, a version (2 or 3), the number of tensors and
the number of metadata entries; then each entry (a key string, a value type, the value — a scalar, a
string, or an array of either), then each tensor's name, dimensions, type and offset, then the
tensors' data, aligned. Every count and length in it is a claim: :func:`check_header` walks the header
once and refuses, as one :class:`~pecli.errors.ConfigError` line (key ``gguf``), any claim the file
cannot hold — before ``gguf.GGUFReader`` builds a list or an array of that size. It reads the header
only, through a memory map: a file of many gigabytes costs the pages of its header.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
from dataclasses import dataclass

from pecli.errors import ConfigError

#: The versions gguf-py reads.
VERSIONS = (2, 3)
#: Bytes of each scalar value type (GGUF's ``GGUFValueType``: 8 is a string, 9 an array).
SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY = 8, 9
#: The most dimensions a ggml tensor has.
MAX_DIMS = 4
#: The longest key or tensor name accepted (llama.cpp's keys are a few dozen characters).
MAX_NAME = 1 << 16


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the header: its name, shape (ggml order: fastest dimension first), type, offset."""

    name: str
    dims: tuple[int, ...]
    ggml_type: int
    offset: int


class _Walker:
    """Reads little-endian values from a memory map, refusing any read past the end of the file."""

    def __init__(self, view: mmap.mmap, path: str) -> None:
        self.view, self.path, self.at, self.size = view, path, 0, len(view)

    def fail(self, what: str) -> ConfigError:
        return ConfigError("gguf", f"{self.path} is not a readable GGUF file: {what} (byte {self.at:,} of {self.size:,})")

    def take(self, count: int, what: str) -> int:
        if count < 0 or self.at + count > self.size:
            raise self.fail(f"{what} runs past the end of the file")
        start = self.at
        self.at += count
        return start

    def uint(self, width: int, what: str) -> int:
        start = self.take(width, what)
        return int.from_bytes(self.view[start:start + width], "little")

    def string(self, what: str, limit: int | None = None) -> str:
        length = self.uint(8, f"the length of {what}")
        if limit is not None and length > limit:
            raise self.fail(f"{what} claims {length:,} bytes")
        start = self.take(length, what)
        try:
            return self.view[start:start + length].decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8") from None

    def skip_value(self, kind: int, key: str) -> None:
        if kind in SCALAR_BYTES:
            self.take(SCALAR_BYTES[kind], f"the value of {key}")
        elif kind == STRING:
            self.string(f"the value of {key}")
        elif kind == ARRAY:
            item, count = self.uint(4, f"the array type of {key}"), self.uint(8, f"the array length of {key}")
            if item in SCALAR_BYTES:
                self.take(count * SCALAR_BYTES[item], f"the {count:,} items of {key}")
            elif item == STRING:
                if count * 8 > self.size - self.at:  # each string is at least its 8-byte length
                    raise self.fail(f"{key} claims {count:,} strings")
                for _ in range(count):
                    self.string(f"an item of {key}")
            else:
                raise self.fail(f"{key} is an array of type {item}, which GGUF metadata does not use")
        else:
            raise self.fail(f"{key} has value type {kind}, not a GGUF type")


def check_header(path: str) -> tuple[int, list[TensorEntry]]:
    """Walk the header of the GGUF file at ``path``; return where the tensor data starts and the tensors.

    Raises
    ------
    ConfigError
        (key ``gguf``) The file cannot be opened; no ``GGUF`` magic; a version gguf-py does not read; a
        count, length or type the file cannot hold; a tensor whose data lies past the end of the file.
    """
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; the file is then
        # refused by its fstat unless it is a regular file (a FIFO, a device, a directory cannot be mapped)
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(descriptor, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise ConfigError("gguf", f"{path} is not a regular file (a FIFO, a device or a directory); "
                                  "give a GGUF file")
            if status.st_size < 24:
                raise ConfigError("gguf", f"{path} is too short for a GGUF header ({status.st_size} bytes)")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return _walk(_Walker(view, path))
    except OSError as error:
        raise ConfigError("gguf", f"cannot read {path}: {error.strerror or error}") from None


def _walk(walker: _Walker) -> tuple[int, list[TensorEntry]]:
    if walker.view[:4] != b"GGUF":
        raise walker.fail("no GGUF magic at its start")
    walker.at = 4
    version = walker.uint(4, "the version")
    if version not in VERSIONS:
        raise walker.fail(f"version {version} (gguf reads {', '.join(map(str, VERSIONS))}; a big-endian file is not read)")
    tensors, entries = walker.uint(8, "the tensor count"), walker.uint(8, "the metadata count")
    # every entry takes at least 8 + 4 + 1 bytes, every tensor 8 + 4 + 4 + 8
    if entries * 13 + tensors * 24 > walker.size - walker.at:
        raise walker.fail(f"it claims {entries:,} metadata entries and {tensors:,} tensors")
    alignment = 32
    for _ in range(entries):
        key = walker.string("a metadata key", MAX_NAME)
        kind = walker.uint(4, f"the type of {key}")
        start = walker.at
        walker.skip_value(kind, key)
        if key == "general.alignment":
            alignment = int.from_bytes(walker.view[start:walker.at], "little") if kind == 4 else 0
            if alignment <= 0 or alignment & (alignment - 1):
                raise walker.fail("general.alignment is not a power of two (uint32)")
    found = [_tensor_entry(walker) for _ in range(tensors)]
    data = walker.at + (-walker.at) % alignment
    for tensor in found:
        _check_extent(walker, tensor, data)
    return data, found


def _tensor_entry(walker: _Walker) -> TensorEntry:
    name = walker.string("a tensor name", MAX_NAME)
    count = walker.uint(4, f"the dimension count of {name}")
    if not 1 <= count <= MAX_DIMS:
        raise walker.fail(f"tensor {name} has {count} dimensions (ggml has 1 to {MAX_DIMS})")
    dims = tuple(walker.uint(8, f"a dimension of {name}") for _ in range(count))
    return TensorEntry(name, dims, walker.uint(4, f"the type of {name}"), walker.uint(8, f"the offset of {name}"))


def _check_extent(walker: _Walker, tensor: TensorEntry, data: int) -> None:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block, size = GGML_QUANT_SIZES[GGMLQuantizationType(tensor.ggml_type)]
    except (ValueError, KeyError):
        raise walker.fail(f"tensor {tensor.name} has ggml type {tensor.ggml_type}, which gguf does not know") from None
    elements = 1
    for dim in tensor.dims:
        elements *= dim
    if elements % block:
        raise walker.fail(f"tensor {tensor.name} has {elements:,} elements, not a multiple of its block of {block}")
    end = data + tensor.offset + elements // block * size
    if end > walker.size:
        raise walker.fail(f"tensor {tensor.name} claims bytes up to {end:,}, past the end of the file")


__all__ = ["TensorEntry", "check_header"]

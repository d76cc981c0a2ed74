"""A GGUF file's header, checked against the file's size before anything trusts it, and read.

A GGUF file (llama.cpp's ``gguf-py/gguf/gguf_reader.py`` and the format's description in
``ggml/include/gguf.h``) starts with the magic ``GGUF``, a version (2 or 3), the number of tensors and
the number of metadata entries; then each entry (a key string, a value type, the value — a scalar, a
string, or an array of either), then each tensor's name, dimensions, type and offset, then the
tensors' data, aligned. Every count and length in it is a claim: :func:`read_header` walks the header
once and refuses, as one :class:`~pecli.errors.ConfigError` line (key ``gguf``), any claim the file
cannot hold, and keeps the metadata values as ``gguf.GGUFReader`` gives them (``ReaderField.contents``:
a scalar as a Python number, a string decoded as UTF-8, an array of scalars as a list), each key's
value type, and the tensors' entries. Arrays of strings (a tokenizer's 128k tokens and 280k merges) are
walked, never decoded or kept: one pass of a few hundred milliseconds where ``GGUFReader`` builds two
NumPy arrays per string (31 s for a Llama 3 header on this project's 2-core machine, against 0.05 s).

The bytes come from a :class:`Source`: a local file through a memory map (:class:`LocalFile`: a file of
many gigabytes costs the pages of its header), or a remote one read by ranges as the walk needs them
(:mod:`pecli.models.gguf_remote`): the same walk, the same answer.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
from dataclasses import dataclass, field
from typing import Any, Protocol

from pecli.errors import ConfigError

#: The versions gguf-py reads.
VERSIONS = (2, 3)
#: Bytes of each scalar value type (GGUF's ``GGUFValueType``: 8 is a string, 9 an array).
SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
#: The little-endian ``struct`` format of each scalar type, and its ``GGUFValueType`` name.
SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
TYPE_NAMES = {0: "UINT8", 1: "INT8", 2: "UINT16", 3: "INT16", 4: "UINT32", 5: "INT32", 6: "FLOAT32", 7: "BOOL",
              8: "STRING", 9: "ARRAY", 10: "UINT64", 11: "INT64", 12: "FLOAT64"}
STRING, ARRAY = 8, 9
#: The most dimensions a ggml tensor has.
MAX_DIMS = 4
#: The longest key or tensor name accepted (llama.cpp's keys are a few dozen characters).
MAX_NAME = 1 << 16
#: Items kept of an array of numbers (per-layer arrays hold a few hundred; the rest is walked, not kept).
MAX_KEPT_ITEMS = 1 << 16
_LENGTH = struct.Struct("<Q")


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the header: its name, shape (ggml order: fastest dimension first), type, offset."""

    name: str
    dims: tuple[int, ...]
    ggml_type: int
    offset: int


@dataclass
class Header:
    """What :func:`read_header` found: where the tensor data starts, the tensors, the metadata values
    (arrays of strings and the ``tokenizer.`` keys left out) and each kept key's ``GGUFValueType`` name."""

    data: int
    tensors: list[TensorEntry]
    values: dict[str, Any] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)


class Source(Protocol):
    """Bytes of a GGUF file: ``name`` (for messages), ``size`` (the whole file's), ``prefix(end)`` (a
    buffer holding at least bytes ``[0, end)``, ``end`` ≤ ``size``) and ``read(start, count)``."""

    name: str
    size: int

    def prefix(self, end: int) -> Any: ...

    def read(self, start: int, count: int) -> bytes: ...


class LocalFile:
    """A regular local file, memory-mapped (use as a context manager)."""

    def __init__(self, path: str) -> None:
        self.name = path
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
                self.view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as error:
            raise ConfigError("gguf", f"cannot read {path}: {error.strerror or error}") from None
        self.size = len(self.view)

    def prefix(self, end: int) -> Any:
        return self.view

    def read(self, start: int, count: int) -> bytes:
        return self.view[start:start + count]

    def __enter__(self) -> "LocalFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.view.close()


class _Walker:
    """Reads little-endian values from a source's prefix, refusing any read past the end of the file."""

    def __init__(self, source: Source) -> None:
        self.source, self.path, self.at, self.size = source, source.name, 0, source.size
        self.view = source.prefix(min(self.size, 24))

    def fail(self, what: str) -> ConfigError:
        return ConfigError("gguf", f"{self.path} is not a readable GGUF file: {what} (byte {self.at:,} of {self.size:,})")

    def take(self, count: int, what: str) -> int:
        if count < 0 or self.at + count > self.size:
            raise self.fail(f"{what} runs past the end of the file")
        start = self.at
        self.at += count
        if self.at > len(self.view):
            self.view = self.source.prefix(self.at)
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
            return bytes(self.view[start:start + length]).decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} is not UTF-8") from None

    def value(self, kind: int, key: str) -> Any:
        """The value of ``key`` as ``ReaderField.contents`` gives it (None: an array of strings, walked only)."""
        if kind in SCALAR_BYTES:
            start = self.take(SCALAR_BYTES[kind], f"the value of {key}")
            return struct.unpack_from("<" + SCALAR_FORMATS[kind], self.view, start)[0]
        if kind == STRING:
            return self.string(f"the value of {key}")
        if kind != ARRAY:
            raise self.fail(f"{key} has value type {kind}, not a GGUF type")
        item, count = self.uint(4, f"the array type of {key}"), self.uint(8, f"the array length of {key}")
        self.item = item  # the items' type: llama.cpp's get_arr refuses some (read_header keeps it as KEY[])
        if item in SCALAR_BYTES:
            start = self.take(count * SCALAR_BYTES[item], f"the {count:,} items of {key}")
            if key.startswith("tokenizer."):
                return None
            kept = min(count, MAX_KEPT_ITEMS)  # a longer array is refused where a number is read, as an array
            return list(struct.unpack_from(f"<{kept}{SCALAR_FORMATS[item]}", self.view, start))
        if item != STRING:
            raise self.fail(f"{key} is an array of type {item}, which GGUF metadata does not use")
        if count * 8 > self.size - self.at:  # each string is at least its 8-byte length
            raise self.fail(f"{key} claims {count:,} strings")
        self._walk_strings(count, key)
        return [] if count == 0 else None

    def _walk_strings(self, count: int, key: str) -> None:
        """Step over ``count`` length-prefixed strings (the tight loop of a tokenizer's vocabulary)."""
        unpack, at, view, size = _LENGTH.unpack_from, self.at, self.view, self.size
        for _ in range(count):
            if at + 8 > len(view):
                self.at = at
                self.take(8, f"the length of an item of {key}")
                self.at, view = at, self.view
            at += 8 + unpack(view, at)[0]
            if at > size:
                self.at = at
                raise self.fail(f"an item of {key} runs past the end of the file")
        self.at = at
        if at > len(view):
            self.view = self.source.prefix(at)


def read_header(source: Source) -> Header:
    """Walk and read the header of the GGUF file ``source`` holds (see the module).

    Raises
    ------
    ConfigError
        (key ``gguf``) No ``GGUF`` magic; a version gguf-py does not read; a count, length or type the file
        cannot hold; a tensor whose data lies past the end of the file; a key or a tensor named twice, which
        ``GGUFReader`` refuses too. (A file that cannot be opened is refused by :class:`LocalFile`.)
    """
    walker = _Walker(source)
    if bytes(walker.view[:4]) != b"GGUF":
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
    values: dict[str, Any] = {}
    types: dict[str, str] = {}
    seen: set[str] = set()
    for _ in range(entries):
        key = walker.string("a metadata key", MAX_NAME)
        if key in seen:
            raise walker.fail(f"the key {key} is written twice")
        seen.add(key)
        kind = walker.uint(4, f"the type of {key}")
        value = walker.value(kind, key)
        if key == "general.alignment":
            alignment = value if kind == 4 else 0
            if alignment <= 0 or alignment & (alignment - 1):
                raise walker.fail("general.alignment is not a power of two (uint32)")
        if value is not None and not key.startswith("tokenizer."):
            values[key], types[key] = value, TYPE_NAMES[kind]
        if kind == ARRAY and not key.startswith("tokenizer."):
            types[f"{key}[]"] = TYPE_NAMES.get(walker.item, str(walker.item))
    found = [_tensor_entry(walker) for _ in range(tensors)]
    if len({tensor.name for tensor in found}) != len(found):
        raise walker.fail("a tensor name is written twice")
    data = walker.at + (-walker.at) % alignment
    for tensor in found:
        _check_extent(walker, tensor, data)
    return Header(data, found, values, types)


def _tensor_entry(walker: _Walker) -> TensorEntry:
    name = walker.string("a tensor name", MAX_NAME)
    count = walker.uint(4, f"the dimension count of {name}")
    if not 1 <= count <= MAX_DIMS:
        raise walker.fail(f"tensor {name} has {count} dimensions (ggml has 1 to {MAX_DIMS})")
    dims = tuple(walker.uint(8, f"a dimension of {name}") for _ in range(count))
    return TensorEntry(name, dims, walker.uint(4, f"the type of {name}"), walker.uint(8, f"the offset of {name}"))


def tensor_bytes(tensor: TensorEntry) -> int:
    """The bytes of ``tensor``'s data (ggml's block size and bytes per block of its type)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    block, size = GGML_QUANT_SIZES[GGMLQuantizationType(tensor.ggml_type)]
    elements = 1
    for dim in tensor.dims:
        elements *= dim
    return elements // block * size


def _check_extent(walker: _Walker, tensor: TensorEntry, data: int) -> None:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block, _ = GGML_QUANT_SIZES[GGMLQuantizationType(tensor.ggml_type)]
    except (ValueError, KeyError):
        raise walker.fail(f"tensor {tensor.name} has ggml type {tensor.ggml_type}, which gguf does not know") from None
    elements = 1
    for dim in tensor.dims:
        elements *= dim
    if elements % block:
        raise walker.fail(f"tensor {tensor.name} has {elements:,} elements, not a multiple of its block of {block}")
    end = data + tensor.offset + tensor_bytes(tensor)
    if end > walker.size:
        raise walker.fail(f"tensor {tensor.name} claims bytes up to {end:,}, past the end of the file")


__all__ = ["Header", "LocalFile", "Source", "TensorEntry", "read_header", "tensor_bytes"]

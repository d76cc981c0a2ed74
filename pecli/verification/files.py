"""The arrays ``pecli verify`` reads, a block of rows at a time: ``.npy`` files and ``.npz`` members.

An ``.npy`` file, or an ``.npz`` member stored uncompressed (as ``np.savez`` and ``pecli encode`` write
them), is read in place: each block of rows is read from its offset in the file into a fresh buffer, so
the memory held is a block whatever the length (a memory map would keep every page it touched
resident). A compressed member is decompressed as a stream, block after block. A raw bfloat16
``.npy`` (``<V2`` in its header, as NumPy saves ml_dtypes' bfloat16) is read as bfloat16.
"""

from __future__ import annotations

import os
import stat
import weakref
import zipfile
import zlib
from typing import Any, BinaryIO

import numpy as np

from pecli.errors import PecliError
from pecli.verification.stream import is_bfloat16
from pecli.io import NUMERIC_KINDS, size_text


def regular_file(path: str, key: str) -> None:
    """Refuse at once what is not a regular file: a FIFO or a device would block the first read."""
    if "\0" in path:
        raise PecliError(f"{key}: {path!r}: a file name cannot hold a NUL byte")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise PecliError(f"{key}: cannot read {path}: no such file") from None
    except OSError as error:
        raise PecliError(f"{key}: cannot read {path}: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        raise PecliError(f"{key}: {path} is a folder")
    if not stat.S_ISREG(mode):
        raise PecliError(f"{key}: {path} is not a regular file (a FIFO or a device); give an .npy or .npz file")


def read_header(stream: BinaryIO, where: str, key: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Shape, Fortran order and dtype from an .npy header, refusing what is not real numbers."""
    npy = np.lib.format
    try:
        version = npy.read_magic(stream)
        reader = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = reader(stream, max_header_size=1 << 16)
    except (zipfile.BadZipFile, zlib.error) as error:  # a compressed member whose bytes were damaged
        raise PecliError(f"{key}: {where} is damaged ({error})") from None
    except (ValueError, EOFError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "bad header"
        raise PecliError(f"{key}: {where} is not a readable .npy array ({first})") from None
    if dtype.kind == "V" and is_bfloat16(dtype):  # NumPy saves ml_dtypes' bfloat16 as raw 2-byte values
        from pecli.dtypes import numpy_dtype

        dtype = numpy_dtype("bfloat16")
    elif dtype.kind not in NUMERIC_KINDS or dtype.fields is not None:
        raise PecliError(f"{key}: {where} holds {dtype} values; pecli reads real numbers (bool, int, float, bfloat16)")
    shape = tuple(shape)
    while len(shape) > 2 and shape[0] == 1:  # a batch of one, as transformers returns cos and sin
        shape = shape[1:]
    return shape, bool(fortran), dtype


class FileRows:
    """Rows of a C-ordered array stored at ``offset`` in ``path``: each block read from the file.

    For an ``.npz`` member (``member``: its expected CRC-32, where its bytes start, how many there are) the
    CRC of the bytes is computed as the rows are read in order, and held to the archive's when the last
    row is read (:meth:`check_integrity` reads the rows a pass left out), as :mod:`zipfile` does.
    """

    def __init__(self, path: str, offset: int, shape: tuple[int, ...], dtype: np.dtype, where: str, key: str,
                 member: tuple[int, int, int] | None = None) -> None:
        self.path, self.offset, self.shape, self.dtype = path, offset, shape, dtype
        self.where, self.key = where, key
        self.row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize
        self.stream = open(path, "rb")
        weakref.finalize(self, self.stream.close)  # closed with the rows, however verify ends
        self._member, self._crc, self._crc_row = member, 0, 0
        if member is not None:
            start = member[1]
            self.stream.seek(start)
            self._crc = zlib.crc32(self.stream.read(offset - start))  # the member's .npy header

    def read(self, start: int, stop: int) -> np.ndarray:
        count = max(0, stop - start)
        block = np.empty((count, *self.shape[1:]), dtype=self.dtype)
        self.stream.seek(self.offset + start * self.row_bytes)
        got = self.stream.readinto(memoryview(block.reshape(-1).view(np.uint8)))
        if got != count * self.row_bytes:
            raise PecliError(f"{self.key}: {self.where} ends before its {self.shape[0]:,} rows")
        if self._member is not None and start <= self._crc_row < stop:
            self._crc = zlib.crc32(memoryview(block[self._crc_row - start:].reshape(-1).view(np.uint8)), self._crc)
            self._crc_row = stop
            if stop == self.shape[0]:
                self._check_crc()
        return block

    def check_integrity(self) -> None:
        """Read the rows not yet read in order (a block at a time), so that the CRC is checked."""
        if self._member is None:
            return
        step = max(1, (8 << 20) // max(self.row_bytes, 1))
        while self._crc_row < self.shape[0]:
            self.read(self._crc_row, min(self.shape[0], self._crc_row + step))
        if self.shape[0] == 0:
            self._check_crc()

    def _check_crc(self) -> None:
        expected, start, size = self._member
        end = self.offset + self.shape[0] * self.row_bytes
        if start + size > end:  # bytes after the rows (none in an archive NumPy or pecli writes)
            self.stream.seek(end)
            self._crc = zlib.crc32(self.stream.read(start + size - end), self._crc)
        self._member = None
        if self._crc != expected:
            raise PecliError(f"{self.key}: {self.where} is damaged: its bytes' CRC-32 is {self._crc:08x}, the archive "
                             f"records {expected:08x}")


class StreamRows:
    """Rows of a compressed ``.npz`` member, decompressed as a stream (sequential blocks are cheap;
    going back decompresses from the start again)."""

    def __init__(self, archive: str, member: str, shape: tuple[int, ...], dtype: np.dtype, where: str, key: str) -> None:
        self.archive, self.member, self.shape, self.dtype, self.where, self.key = archive, member, shape, dtype, where, key
        self.row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize
        self._open()

    def _open(self) -> None:
        self.zipped = zipfile.ZipFile(self.archive)
        self.stream = self.zipped.open(self.member)
        weakref.finalize(self, self.zipped.close)
        weakref.finalize(self, self.stream.close)
        read_header(self.stream, self.where, self.key)
        self.row = 0

    def read(self, start: int, stop: int) -> np.ndarray:
        if start < self.row:
            self._open()
        while self.row < start:  # skip forward a block at a time
            skip = min(start - self.row, max(1, (8 << 20) // max(self.row_bytes, 1)))
            self._take(skip)
        return self._take(max(0, stop - start))

    def check_integrity(self) -> None:
        """Decompress to the member's end, so that :mod:`zipfile` checks its CRC-32."""
        try:
            while self.stream.read(8 << 20):
                pass
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as error:
            raise PecliError(f"{self.key}: {self.where} is damaged ({error})") from None

    def _take(self, count: int) -> np.ndarray:
        try:
            data = self.stream.read(count * self.row_bytes)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as error:  # a bad CRC-32, or compressed data cut short
            raise PecliError(f"{self.key}: {self.where} is damaged ({error})") from None
        if len(data) != count * self.row_bytes:
            raise PecliError(f"{self.key}: {self.where} ends before its {self.shape[0]:,} rows")
        self.row += count
        return np.frombuffer(data, dtype=self.dtype).reshape(count, *self.shape[1:])


def open_rows(path: str, key: str, budget: int):
    """``--cos``/``--sin``: an ``.npy`` file or member ``key`` of an ``.npz`` archive (``FILE.npz`` takes
    the member named after the option — ``cos``, ``sin`` as ``pecli encode`` writes them — or the only
    one; ``FILE.npz:NAME`` names it), read a block at a time. Arrays in Fortran order are read whole,
    within ``budget``."""
    archive, member = split_member(path)
    regular_file(archive, key)
    if not archive.endswith(".npz"):
        with open(archive, "rb") as stream:
            if stream.read(2) == b"PK":
                return open_member(archive, "", key, budget)
            stream.seek(0)
            shape, fortran, dtype = read_header(stream, archive, key)
            offset = stream.tell()
        if fortran and len(shape) > 1:
            return whole(np.load(archive, mmap_mode="r"), archive, key, budget)
        return FileRows(archive, offset, shape, dtype, archive, key)
    return open_member(archive, member, key, budget)


def split_member(path: str) -> tuple[str, str]:
    """``FILE.npz:NAME`` as (``FILE.npz``, ``NAME``); anything else as (path, "")."""
    if ".npz:" in path:
        archive, _, member = path.partition(".npz:")
        return archive + ".npz", member
    return path, ""


def member_name(zipped: Any, archive: str, member: str, key: str) -> str:
    """The member of an open .npz archive to read: ``member`` if named, else the one named as the option
    (``cos``), else the only one; a one-line error listing the members otherwise."""
    names = [name.removesuffix(".npy") for name in zipped.namelist() if name != "metadata.npy"]
    wanted = member or (key if key in names else names[0] if len(names) == 1 else None)
    if wanted not in names:
        what = f"has no array {member!r}" if member else f"holds {len(names)} arrays"
        raise PecliError(f"{key}: {archive} {what} ({', '.join(names)}); name one as {archive}:NAME")
    return wanted


def open_member(archive: str, member: str, key: str, budget: int):
    """A member of an .npz archive as rows (see :func:`open_rows`)."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            wanted = member_name(zipped, archive, member, key)
            info = zipped.getinfo(wanted + ".npy")
            where = f"{archive}:{wanted}"
            with zipped.open(info) as stream:
                shape, fortran, dtype = read_header(stream, where, key)
                header = stream.tell()
        if fortran and len(shape) > 1:
            with zipfile.ZipFile(archive) as zipped, zipped.open(info) as stream:
                size = int(np.prod(shape, dtype=np.float64)) * dtype.itemsize
                if size > budget:
                    raise PecliError(f"{key}: {where} is stored in Fortran order, read whole: {size_text(size)}, over "
                                     f"the memory budget of {size_text(budget)}; raise --max-memory")
                return whole(np.lib.format.read_array(stream, allow_pickle=False), where, key, budget)
        declared = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if info.file_size < declared:  # its rows would be read from the members after it
            raise PecliError(f"{key}: {where} holds {info.file_size:,} bytes, fewer than the {declared:,} its header "
                             f"declares for shape {list(shape)}")
        if info.compress_type == zipfile.ZIP_STORED:
            start = _data_offset(archive, info)
            return FileRows(archive, start + header, shape, dtype, where, key, member=(info.CRC, start, info.file_size))
        return StreamRows(archive, info.filename, shape, dtype, where, key)
    except (OSError, zipfile.BadZipFile, zlib.error, ValueError, KeyError) as error:
        raise PecliError(f"{key}: cannot read {archive}: {error}") from None


def _data_offset(archive: str, info: zipfile.ZipInfo) -> int:
    """Where a stored member's bytes start in the archive: after its local header."""
    with open(archive, "rb") as raw:
        raw.seek(info.header_offset)
        local = raw.read(30)
        if local[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for {info.filename}")
        name_length, extra_length = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
        return info.header_offset + 30 + name_length + extra_length


def whole(array: np.ndarray, where: str, key: str, budget: int):
    """An array read whole (Fortran order), as rows."""
    from pecli.verification.stream import ArrayRows

    if array.nbytes > budget:
        raise PecliError(f"{key}: {where} is stored in Fortran order, read whole: {size_text(array.nbytes)}, over the "
                         f"memory budget of {size_text(budget)}; raise --max-memory")
    return ArrayRows(np.ascontiguousarray(array))

"""Arrays written block by block: one ``.npy`` file, or several members of an ``.npz`` archive at once.

An ``.npz`` is a ZIP archive of ``.npy`` files, stored uncompressed by ``np.savez``. When every member's
shape and dtype are known before its values, its place in the archive is known too: a member is a
:class:`Region` of the file (local header, ``.npy`` header, values), and its blocks can be written at
their offsets in any interleaving of the members — rope's ``cos`` and ``sin`` from the same phasors,
block after block, without holding either whole. The local headers, which carry each member's CRC-32,
are written last, then the central directory (ZIP64 records throughout, so members and archives over
4 GiB are readable by Python's :mod:`zipfile`, hence ``np.load``). Every member is dated the ZIP epoch,
1980-01-01 00:00:00, so that an archive's bytes follow from its contents alone. Format: PKWARE's
APPNOTE.TXT (sections 4.3.7 local header, 4.3.12 central directory, 4.3.14–4.3.16 end records, 4.4.6
date and time, 4.5.3 ZIP64 extra).

A writer thread writes (``os.pwrite``) step k while a second thread checksums it (``zlib.crc32``, which
releases the GIL) and the caller computes step k + 1: at most two steps of blocks are alive. Each
block's CRC-32 is computed on its own and joined to the member's with :func:`crc32_combine`, so the
checksum (0.15 CPU s a GiB here, as much as half the kernel's write) runs beside the write, not after it.
"""

from __future__ import annotations

import functools
import os
import struct
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from pecli.dtypes import storable

#: Bytes after which a streamed file is flushed to disk while the next blocks are computed (under
#: ``PECLI_SYNC=1``), so that the final ``fsync`` of :func:`pecli.io.write_atomic` has little left.
SYNC_BYTES = 32 << 20
#: Size of a member's ZIP64 extra field in its local header: id, size, uncompressed and compressed sizes.
LOCAL_EXTRA = 20
ZIP64_VERSION = 45  # APPNOTE 4.4.3.2: 4.5, the version that reads ZIP64 records
UNIX_MADE_BY = 3 << 8


def _fast_crc32() -> Callable[..., int]:
    """zlib-ng's CRC-32 when the ``zlib-ng`` package is installed (carry-less multiplication: 0.017 CPU s
    a GiB here, against 0.15 s for :mod:`zlib`'s), else :func:`zlib.crc32`; the same checksum."""
    try:
        from zlib_ng import zlib_ng
    except ImportError:
        return zlib.crc32
    return zlib_ng.crc32


#: The CRC-32 of ZIP members' blocks (:func:`_fast_crc32`).
crc32 = _fast_crc32()


#: CRC-32's polynomial (ISO-HDLC: ZIP, zlib, PNG), bit-reflected: bit 31 − k holds the coefficient of x^k.
CRC_POLY = 0xEDB88320


def _multiply_mod(a: int, b: int) -> int:
    """``a(x)·b(x) mod P(x)`` in CRC-32's reflected representation (x^0 is bit 31): a carry-less
    product reduced one bit at a time (zlib's ``multmodp``, written from its definition)."""
    product, bit = 0, 1 << 31
    while a:
        if a & bit:
            product ^= b
            a ^= bit
        bit >>= 1
        b = (b >> 1) ^ CRC_POLY if b & 1 else b >> 1
    return product


@functools.lru_cache(maxsize=64)
def _shift_operator(nbytes: int) -> int:
    """``x^(8·nbytes) mod P``: appending ``nbytes`` bytes multiplies a message by it. By squaring
    (``x^(2^k)``, k = 3, 4, …, one factor per set bit of ``nbytes``): two products a bit of ``nbytes``."""
    result, power, n = 1 << 31, 1 << 23, nbytes  # x^0 and x^8 (bit 31 − k is x^k)
    while n:
        if n & 1:
            result = _multiply_mod(power, result)
        power, n = _multiply_mod(power, power), n >> 1
    return result


def crc32_combine(first: int, second: int, second_bytes: int) -> int:
    """The CRC-32 of A followed by B from ``first`` = crc32(A), ``second`` = crc32(B) and len(B).

    CRC-32 is affine over GF(2): with its initial and final inversions, crc(A‖B) = crc(A)·x^(8|B|) +
    crc(B) mod P (the inversions of A's register carry through the shift and cancel against B's),
    which is zlib's ``crc32_combine``. Python's :mod:`zlib` does not expose it (3.11); it is a few
    products of 32-bit polynomials here, the shift by ``second_bytes`` cached for the sizes that repeat.
    """
    return _multiply_mod(_shift_operator(second_bytes), first) ^ second


def npy_header(shape: Sequence[int], dtype: np.dtype) -> bytes:
    """The header ``np.save`` writes for a C-ordered array of ``shape`` and ``dtype`` (format 1.0, or 2.0
    when the header would not fit its 2-byte length)."""
    import io

    from numpy.lib import format as npy_format

    header = {"descr": npy_format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": tuple(int(n) for n in shape)}
    stream = io.BytesIO()
    try:
        npy_format.write_array_header_1_0(stream, header)
    except ValueError:  # a shape string too long for format 1.0
        stream = io.BytesIO()
        npy_format.write_array_header_2_0(stream, header)
    return stream.getvalue()


#: Bytes handed to the kernel by one ``pwrite``. Measured on Linux (ext4, 2 GiB of float64 into the
#: page cache): in writes of 64 KiB to 1 MiB the kernel spent 0.6 CPU seconds, in writes of 2 to 8 MiB
#: 1.0 to 4.4 s, and as many seconds more of wall time; ``dd bs=1M`` writes in pieces of this size.
WRITE_BYTES = 1 << 20


#: Regions at least this large have their blocks reserved before they are written (:func:`preallocate`).
PREALLOCATE_BYTES = 1 << 20


@functools.lru_cache(maxsize=1)
def _fallocate() -> Callable[[int, int, int, int], int] | None:
    """The C library's ``fallocate`` (Linux: the system call itself, never an emulation writing zeros, as
    ``posix_fallocate`` falls back to on file systems without it), or None."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    function.restype = ctypes.c_int
    return function


def preallocate(fd: int, offset: int, size: int) -> None:
    """Reserve the file's blocks for bytes ``offset`` … ``offset + size`` before they are written
    (``fallocate(2)``, mode 0), where the file system allows it.

    Why: ext4 (and other file systems that allocate late) otherwise reserves and maps each page as a
    write first reaches it, under the write's lock: measured here, 2 GiB written in 1 MiB pieces took
    0.36–0.38 CPU s of the kernel's time, and 0.21–0.22 s into blocks reserved beforehand. A full disk
    is then an error before the values are written (ENOSPC raised); a file system or platform that
    cannot reserve (EOPNOTSUPP, no ``fallocate``) is written as before.
    """
    import ctypes
    import errno

    function = _fallocate()
    if function is None or size <= 0:
        return
    if function(fd, 0, offset, size) != 0:
        code = ctypes.get_errno()
        if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise OSError(code, os.strerror(code))


def _pwrite(fd: int, data: memoryview, offset: int) -> None:
    while len(data):
        written = os.pwrite(fd, data[:WRITE_BYTES], offset)
        data, offset = data[written:], offset + written


@dataclass
class Region:
    """One array's bytes in a file: its ``.npy`` header, then ``nbytes`` of values written in order by
    :meth:`write` at ``offset`` onwards; ``crc`` is the CRC-32 of what was written (for a ZIP member)."""

    fd: int
    offset: int
    header: bytes
    nbytes: int
    dtype: np.dtype
    written: int = 0
    crc: int = 0
    #: Whether :attr:`crc` is kept (a ZIP member's); an ``.npy`` file needs none.
    checksum: bool = True

    def __post_init__(self) -> None:
        if self.nbytes >= PREALLOCATE_BYTES:
            preallocate(self.fd, self.offset, self.size)
        _pwrite(self.fd, memoryview(self.header), self.offset)
        self.crc = zlib.crc32(self.header) if self.checksum else 0

    @property
    def size(self) -> int:
        """Bytes of the member: header and values."""
        return len(self.header) + self.nbytes

    def write(self, values: np.ndarray, crc: Future | int | None = None) -> int:
        """Write the next values (C order, this region's dtype); returns the bytes written. ``crc``: their
        CRC-32 computed elsewhere (or its future), joined to :attr:`crc`; None computes it here."""
        data = memoryview(np.ascontiguousarray(values)).cast("B")
        if self.written + len(data) > self.nbytes:
            raise AssertionError(f"{self.written + len(data)} bytes written where the header declares {self.nbytes}")
        _pwrite(self.fd, data, self.offset + len(self.header) + self.written)
        if self.checksum:
            if crc is None:
                self.crc = crc32(data, self.crc)
            else:
                self.crc = crc32_combine(self.crc, crc if isinstance(crc, int) else crc.result(), len(data))
        self.written += len(data)
        return len(data)

    def check_complete(self) -> None:
        if self.written != self.nbytes:
            raise AssertionError(f"blocks held {self.written} bytes, the header declares {self.nbytes}")


#: Every member's modification time and date, in MS-DOS form (APPNOTE 4.4.6): the ZIP epoch, 1980-01-01
#: 00:00:00, as reproducible-build tools write (``SOURCE_DATE_EPOCH`` clamped to it, ``strip-nondeterminism``).
#: A local time would make the same command write different bytes at another hour or time zone.
ZIP_EPOCH_TIME, ZIP_EPOCH_DATE = 0, (0 << 9) | (1 << 5) | 1


@dataclass
class _Entry:
    name: bytes
    offset: int  # of the local header
    region: Region


@dataclass
class ZipLayout:
    """An ``.npz`` archive laid out member by member in the file ``fd`` (written from offset 0): each
    :meth:`reserve` places a member after the previous one; :meth:`close` writes the headers. Every
    member is dated 1980-01-01 00:00:00 (:data:`ZIP_EPOCH_DATE`), so the archive's bytes depend on its
    contents alone."""

    fd: int
    end: int = 0
    entries: list[_Entry] = field(default_factory=list)

    def reserve(self, name: str, shape: Sequence[int], dtype: np.dtype) -> Region:
        """The region of member ``name`` (``.npy`` appended), its ``.npy`` header written."""
        dtype = np.dtype(dtype)
        encoded = f"{name}.npy".encode("utf-8")
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        region = Region(self.fd, self.end + 30 + len(encoded) + LOCAL_EXTRA, npy_header(shape, dtype), nbytes, dtype)
        self.entries.append(_Entry(encoded, self.end, region))
        self.end = region.offset + region.size
        return region

    def close(self) -> None:
        """Write every member's local header (its CRC now known), the central directory and the end records."""
        clock, date = ZIP_EPOCH_TIME, ZIP_EPOCH_DATE  # the same bytes whenever and wherever written
        directory = bytearray()
        for entry in self.entries:
            entry.region.check_complete()
            size, flags = entry.region.size, 0x800 if not entry.name.isascii() else 0
            local = struct.pack("<IHHHHHIIIHH", 0x04034B50, ZIP64_VERSION, flags, 0, clock, date, entry.region.crc,
                                0xFFFFFFFF, 0xFFFFFFFF, len(entry.name), LOCAL_EXTRA)
            local += entry.name + struct.pack("<HHQQ", 1, 16, size, size)
            _pwrite(self.fd, memoryview(local), entry.offset)
            directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, UNIX_MADE_BY | ZIP64_VERSION, ZIP64_VERSION, flags, 0,
                                     clock, date, entry.region.crc, 0xFFFFFFFF, 0xFFFFFFFF, len(entry.name), 28, 0, 0, 0,
                                     0o100644 << 16, 0xFFFFFFFF)
            directory += entry.name + struct.pack("<HHQQQ", 1, 24, size, size, entry.offset)
        start, count = self.end, len(self.entries)
        end64 = start + len(directory)
        directory += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, UNIX_MADE_BY | ZIP64_VERSION, ZIP64_VERSION, 0, 0,
                                 count, count, end64 - start, start)
        directory += struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
        directory += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
                                 min(end64 - start, 0xFFFFFFFF), 0xFFFFFFFF, 0)
        _pwrite(self.fd, memoryview(bytes(directory)), start)
        os.ftruncate(self.fd, start + len(directory))


#: One step of writes: the regions and the values each takes next.
Step = Sequence[tuple[Region, np.ndarray]]


#: Blocks at least this large are checksummed on the checksum thread (smaller ones cost less than a hand-off).
CHECKSUM_APART = 1 << 16


def _crc_of(values: np.ndarray) -> int:
    return crc32(memoryview(values).cast("B"))


class BlockWriter:
    """Writes steps on a thread while the caller computes the next: ``with BlockWriter(...) as w: w.put(step)``.

    ``written(nbytes)`` is called on the caller's thread as each step reaches the file (progress);
    ``sync`` (``PECLI_SYNC=1``) is called on the writer's thread every :data:`SYNC_BYTES`. The CRC-32 of a
    ZIP member's blocks is computed on a thread of its own while the writer writes them
    (:func:`crc32_combine` joins them in order).
    """

    def __init__(self, written: Callable[[int], None] | None = None, sync: Callable[[], None] | None = None) -> None:
        self._written, self._sync, self._unsynced = written, sync, 0
        self._pending: Future | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pecli-write")
        self._checksums = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pecli-crc")

    def __enter__(self) -> BlockWriter:
        return self

    def __exit__(self, *failure: object) -> None:
        try:
            if failure[0] is None:
                self._wait()
        finally:
            self._pool.shutdown(wait=True)
            self._checksums.shutdown(wait=True)

    def _write(self, step: Sequence[tuple[Region, np.ndarray, Future | None]]) -> int:
        total = sum(region.write(values, crc) for region, values, crc in step)
        self._unsynced += total
        if self._sync is not None and self._unsynced >= SYNC_BYTES:
            self._sync()
            self._unsynced = 0
        return total

    def _wait(self) -> None:
        if self._pending is not None:
            done, self._pending = self._pending.result(), None
            if self._written is not None:
                self._written(done)

    def put(self, step: Step) -> None:
        """Hand over one step (its values no longer changed by the caller); waits for the previous one."""
        arrays = [(region, np.ascontiguousarray(storable(np.asarray(values)), dtype=region.dtype)) for region, values in step]
        self._wait()
        self._pending = self._pool.submit(self._write, [
            (region, values, self._checksums.submit(_crc_of, values) if region.checksum and values.nbytes >= CHECKSUM_APART else None)
            for region, values in arrays])

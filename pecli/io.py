"""Safe writing of pecli's outputs: atomic, and never over an existing file without ``force``."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping

import numpy as np

from pecli.dtypes import storable
from pecli.errors import PecliError


def size_text(n: float) -> str:
    """``1.50 GiB``, ``12.0 MiB``, ``6.2 KiB``, ``1000 B``: a byte count as a message states it."""
    if n >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / (1 << 10):.1f} KiB" if n >= 1 << 10 else f"{int(n)} B"


def check_target(path: str | os.PathLike, *, suffixes: Iterable[str], force: bool, option: str = "--out",
                 inputs: Iterable[Any] = ()) -> Path:
    """Check before any work that ``path`` can be written: a file name (not ending in a separator), a known
    suffix, a folder, no clobbering, not a file the command reads (``inputs``, and those of
    :func:`reading`), ``--force`` or not; messages name ``option``."""
    text = os.fspath(path)
    problem = file_name_problem(text)
    if problem is not None:
        raise PecliError(f"{option} {problem}")
    target = Path(text)
    allowed = tuple(suffixes)
    if target.suffix.lower() not in allowed:
        raise PecliError(f"{option} {target}: unsupported suffix {target.suffix or '(none)'}; use one of {', '.join(allowed)}")
    if not target.parent.is_dir():
        raise PecliError(f"{option} {target}: folder {target.parent} does not exist")
    if target.is_dir():
        raise PecliError(f"{option} {target} is a folder")
    refuse_inputs(target, inputs, option)
    if target.exists() and not force:
        raise PecliError(f"{target} exists; pass --force to overwrite it")
    return target


def file_name_problem(text: str) -> str | None:
    """What keeps ``text`` from naming an output file, said after the name (a NUL byte, a path that names a
    folder by its spelling), or None."""
    if "\0" in text:
        return f"{text!r}: a file name cannot hold a NUL byte"
    if names_folder(text):
        return f"{text}: a path ending in {os.sep} (or {os.sep}., {os.sep}..) names a folder; give a file name"
    return None


def names_folder(text: str) -> bool:
    """Whether a path names a folder by its spelling: it ends in a separator, or in ``.`` or ``..``
    (``l.npy/``, ``l.npy/.``), which :class:`~pathlib.Path` would quietly drop."""
    last = text.replace(os.altsep, os.sep) if os.altsep else text
    return last.endswith(os.sep) or last.rsplit(os.sep, 1)[-1] in (".", "..")


#: The files the running command reads (:func:`reading`), which no output may replace.
_READ: ContextVar[tuple[str, ...]] = ContextVar("pecli_read", default=())


@contextlib.contextmanager
def reading(values: Iterable[Any]) -> Iterator[None]:
    """Within the block, :func:`check_target` refuses to write over any of ``values`` that names a file
    (strings and paths; ``FILE.npz:KEY`` names ``FILE.npz``; other values are skipped)."""
    named = tuple(str(value) for value in values if isinstance(value, (str, os.PathLike)))
    token = _READ.set(_READ.get() + named)
    try:
        yield
    finally:
        _READ.reset(token)


def input_named(target: str | os.PathLike, inputs: Iterable[Any] = ()) -> str | None:
    """The input (of ``inputs`` and :func:`reading`'s) that ``target`` would overwrite, or None: the same
    path once symbolic links are resolved, or the same file (a hard link)."""
    if not os.path.lexists(target):
        return None
    real = os.path.realpath(target)
    for value in (*(str(v) for v in inputs if isinstance(v, (str, os.PathLike))), *_READ.get()):
        for name in (value, value.rpartition(":")[0]) if ":" in value else (value,):
            if not name or not os.path.lexists(name):
                continue
            try:
                if os.path.realpath(name) == real or os.path.samefile(name, target):
                    return value
            except OSError:
                continue
    return None


def refuse_inputs(target: str | os.PathLike, inputs: Iterable[Any] = (), option: str = "--out") -> None:
    """Refuse, ``--force`` or not, to write ``target`` over a file the command reads."""
    named = input_named(target, inputs)
    if named is not None:
        raise PecliError(f"{option} {target} is an input of this command ({named}); write the output elsewhere")


def check_disk(path: str | os.PathLike, nbytes: int) -> None:
    """Refuse, before any work, to write ``nbytes`` where the file system has less free space."""
    folder = Path(path).resolve().parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:  # no such folder: the write will say so
        return
    if nbytes > free:
        raise PecliError(
            f"{path} would take about {size_text(nbytes)} on disk, but {folder} has {size_text(free)} free; "
            "ask for fewer positions or write elsewhere"
        )


#: Environment variable that makes every write durable: synced to the disk before it is renamed into place.
SYNC_VARIABLE = "PECLI_SYNC"


def sync_wanted() -> bool:
    """Whether writes wait for the disk (``PECLI_SYNC=1``); by default they do not, as ``np.save`` does not.

    Either way a file appears whole or not at all: the rename is atomic. Syncing adds durability across a
    power cut or a crash of the operating system, at the disk's write speed (1 GiB took about 5 s here,
    more than computing it).
    """
    return os.environ.get(SYNC_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], None], *, force: bool) -> Path:
    """Write through ``write(file)`` into a temporary file beside ``path``, then rename it into place.

    The file appears whole or not at all; an existing file is replaced only with ``force``. With
    ``PECLI_SYNC=1`` (:func:`sync_wanted`) the data is on the disk before the rename.
    """
    target = Path(path)
    try:
        return _write_atomic(target, write, force=force)
    except OSError as error:  # a folder we may not write to, a full disk, a read-only file system
        raise PecliError(f"cannot write {target}: {write_failure(error)}") from None


def write_failure(error: OSError) -> str:
    """What a failed write says: the system's reason; NumPy's ``tofile`` cut short by a full disk or a file size
    limit says only ``N requested and M written``, without the system's, which is then named."""
    text = error.strerror or str(error)
    if error.errno is None and " requested and " in text and text.endswith(" written"):
        return f"the disk is full or the file is over its size limit ({text} bytes)"
    return text


#: Temporary files are named ``.NAME.pecli-PID-XXXX.tmp``, so that a later run can tell whose they are.
TEMP_MARK = ".pecli-"


def _stale(path: Path) -> bool:
    """Whether the temporary file ``path`` was left by a pecli process that no longer runs."""
    try:
        pid = int(path.name.rsplit(TEMP_MARK, 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    started = _process_start(pid)  # the pid is alive: stale only if the file is older (the pid was reused)
    try:
        return started is not None and path.stat().st_mtime < started
    except OSError:
        return False


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from /proc; None where unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime"))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, StopIteration):
        return None


def remove_stale_temporaries(folder: Path) -> None:
    """Remove the temporary files that killed pecli processes left in ``folder`` (SIGKILL, power loss)."""
    try:
        candidates = [p for p in folder.iterdir() if p.name.startswith(".") and TEMP_MARK in p.name and p.name.endswith(".tmp")]
    except OSError:
        return
    for path in candidates:
        if _stale(path):
            try:
                path.unlink()
            except OSError:
                pass


def _write_atomic(target: Path, write: Callable[[BinaryIO], None], *, force: bool) -> Path:
    import tempfile

    remove_stale_temporaries(target.parent)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}{TEMP_MARK}{os.getpid()}-", suffix=".tmp", dir=target.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes the file private; outputs get the usual mode
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            if sync_wanted():
                os.fsync(stream.fileno())
        if force:
            os.replace(temporary, target)
        else:
            try:
                os.link(temporary, target)  # fails if the target appeared meanwhile
            except FileExistsError:
                raise PecliError(f"{target} exists; pass --force to overwrite it") from None
            except OSError:  # file systems without hard links
                if target.exists():
                    raise PecliError(f"{target} exists; pass --force to overwrite it") from None
                os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


def save_npy(path: str | os.PathLike, array: np.ndarray, *, force: bool) -> Path:
    """Write one array as ``.npy`` (bfloat16 widened exactly to float32)."""
    return write_atomic(path, lambda f: np.save(f, storable(array), allow_pickle=False), force=force)


def save_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray], metadata: Mapping[str, Any], *, force: bool) -> Path:
    """Write named arrays as ``.npz``, with ``metadata`` as a JSON string under the key ``metadata``."""
    parts = {name: storable(array) for name, array in arrays.items()}
    parts["metadata"] = np.array(json.dumps(metadata, sort_keys=True))
    return write_atomic(path, lambda f: np.savez(f, **parts), force=force)


#: NumPy dtype kinds that hold real numbers: booleans, integers, floats.
NUMERIC_KINDS = "biuf"


def read_npy_header(path: str | os.PathLike, key: str = "apply") -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype an ``.npy`` file declares, read from its header without loading the data."""
    from numpy.lib import format as npy_format

    try:
        if not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path):  # a FIFO would block open()
            raise PecliError(f"{key}: {path} is not a regular file (a FIFO or a device); give an .npy file")
        with open(path, "rb") as stream:
            start = stream.read(6)
            if not start:
                raise PecliError(f"{key}: {path} is empty, not an .npy array")
            if start.startswith(b"PK"):
                raise PecliError(f"{key}: {path} is an .npz archive; give one .npy array")
            stream.seek(0)
            version = npy_format.read_magic(stream)
            if version == (1, 0):
                shape, _, dtype = npy_format.read_array_header_1_0(stream, max_header_size=1 << 16)
            else:
                shape, _, dtype = npy_format.read_array_header_2_0(stream, max_header_size=1 << 16)
    except FileNotFoundError:
        raise PecliError(f"{key}: cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise PecliError(f"{key}: {path} is a folder") from None
    except OSError as error:
        raise PecliError(f"{key}: cannot read {path}: {error.strerror or error}") from None
    except ValueError as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else "bad header"
        raise PecliError(f"{key}: {path} is not a readable .npy array ({first_line})") from None
    if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None:
        raise PecliError(f"{key}: {path} holds {dtype} values; pecli reads real numbers (bool, int, float)")
    return tuple(shape), dtype


def load_array(path: str | os.PathLike, key: str = "apply", max_bytes: int | None = None) -> np.ndarray:
    """Read an ``.npy`` array of real numbers, checking its header (kind, size) before the data.

    Raises
    ------
    PecliError
        One line: not an .npy (an .npz, an empty file), not real numbers (complex, strings, dates,
        structured records), or larger than ``max_bytes``.
    """
    shape, dtype = read_npy_header(path, key)
    size = int(np.prod(shape, dtype=np.float64)) * 8  # the float64 copy the computation works on
    if max_bytes is not None and size > max_bytes:
        raise PecliError(
            f"{key}: {path} holds {int(np.prod(shape, dtype=np.float64)):,} values ({size_text(size)} as float64), "
            f"over the memory budget of {size_text(max_bytes)}; raise --max-memory"
        )
    try:
        return quiet_nans(np.load(path, allow_pickle=False))
    except (OSError, ValueError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        raise PecliError(f"{key}: {path} is not a readable .npy array ({first_line})") from None


def quiet_nans(array: np.ndarray) -> np.ndarray:
    """``array`` with its signalling NaNs made quiet NaNs (a copy, when it holds any).

    IEEE 754 makes an operation on a signalling NaN (a NaN whose quiet bit is clear, as a file may hold:
    ``0x7f800001`` in float32), converting it to float64 included, signal "invalid": NumPy prints
    "RuntimeWarning: invalid value encountered in cast" on stderr, an exception under ``-W error``. A NaN
    is refused or reported by what reads it; its payload means nothing to pecli.
    """
    if array.dtype.kind != "f":
        return array
    nan = np.isnan(array)  # a classification: it signals nothing
    if not nan.any():
        return array
    array = np.array(array, copy=True)  # the input may be a read-only map of the file
    array[nan] = np.nan
    return array

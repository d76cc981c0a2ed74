"""Safe writing of pecli's outputs: atomic, and never over an existing file without ``force``."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Mapping

import numpy as np

from pecli.dtypes import storable
from pecli.errors import PecliError


def check_target(path: str | os.PathLike, *, suffixes: Iterable[str], force: bool) -> Path:
    """Check before any work that ``path`` can be written: a known suffix, a folder, no clobbering."""
    target = Path(path)
    allowed = tuple(suffixes)
    if target.suffix.lower() not in allowed:
        raise PecliError(f"--out {target}: unsupported suffix {target.suffix or '(none)'}; use one of {', '.join(allowed)}")
    if not target.parent.is_dir():
        raise PecliError(f"--out {target}: folder {target.parent} does not exist")
    if target.is_dir():
        raise PecliError(f"--out {target} is a folder")
    if target.exists() and not force:
        raise PecliError(f"{target} exists; pass --force to overwrite it")
    return target


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], None], *, force: bool) -> Path:
    """Write through ``write(file)`` into a temporary file beside ``path``, then rename it into place.

    The file appears whole or not at all; an existing file is replaced only with ``force``.
    """
    target = Path(path)
    try:
        return _write_atomic(target, write, force=force)
    except OSError as error:  # a folder we may not write to, a full disk, a read-only file system
        raise PecliError(f"cannot write {target}: {error.strerror or error}") from None


def _write_atomic(target: Path, write: Callable[[BinaryIO], None], *, force: bool) -> Path:
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes the file private; outputs get the usual mode
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
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


def load_array(path: str | os.PathLike) -> np.ndarray:
    """Read an ``.npy`` array for ``--apply``, with a one-line error when it cannot."""
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise PecliError(f"{path}: no such file") from None
    except (OSError, ValueError) as error:
        raise PecliError(f"{path}: not a readable .npy array ({error})") from None

"""Checkpoints in the safetensors format, read one tensor at a time.

A checkpoint is one ``.safetensors`` file or a sharded checkpoint's ``model.safetensors.index.json``
(its ``weight_map`` names the shard of every tensor). A safetensors file starts with an 8-byte
little-endian header length and a JSON header giving each tensor's dtype, shape and byte range
(https://github.com/huggingface/safetensors#format): pecli reads the header itself, so that names,
shapes and sizes are known — and memory bounded — before any data is read. The data of one tensor is
then read with safetensors' NumPy API (``safe_open(framework="numpy")``, ``get_tensor`` of that name
only); a bfloat16 tensor that API refuses is read from its byte range and widened exactly with
``ml_dtypes``. Either way a 15 GB checkpoint costs the bytes of the tensors asked for, not the file's.
"""

from __future__ import annotations

import functools
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from pecli.errors import ConfigError, PecliError
from pecli.io import size_text
from pecli.extras import optional_import

#: A safetensors header larger than this is not a checkpoint pecli can read (real ones are a few MB).
MAX_HEADER_BYTES = 100 << 20

#: Bytes per element of each safetensors dtype code.
DTYPE_BYTES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1,
    "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
}

#: How the raw bytes of a dtype the NumPy API may refuse are read (ml_dtypes types by name).
RAW_DTYPES = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the header of its file describes it.

    Attributes
    ----------
    name, dtype, shape:
        The tensor's name, its safetensors dtype code (``BF16``, ``F32``, …) and its shape.
    file:
        The ``.safetensors`` file holding it (a shard, for an index).
    start, stop:
        Its byte range in the file, from the start of the file.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    file: Path
    start: int
    stop: int

    @property
    def nbytes(self) -> int:
        return self.stop - self.start

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def read_bytes(self) -> int:
        """What reading it as float32 or float64 holds: the stored bytes and the widened copy."""
        return self.nbytes + self.size * (8 if self.dtype == "F64" else 4)


class Checkpoint:
    """A ``.safetensors`` file, or the ``model.safetensors.index.json`` of a sharded checkpoint.

    Parameters
    ----------
    path:
        The file. Nothing but headers is read until :meth:`read` asks for a tensor.
    key:
        The configuration key named in errors (``weights``).
    """

    def __init__(self, path: str | os.PathLike, key: str = "weights") -> None:
        self.path, self.key = Path(path), key
        require_local(path, key)
        if self.path.name.endswith(".json"):
            self.shards = _read_index(self.path, key)
        elif self.path.suffix == ".safetensors":
            self.shards = None
        else:
            raise ConfigError(key, f"{self.path}: expected a .safetensors file or a model.safetensors.index.json")

    # -- what it holds --------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every tensor name, in the order of the header (or of the index)."""
        if self.shards is not None:
            return list(self.shards)
        return list(_header(*_stamp(self.path), self.key))

    def info(self, name: str) -> TensorInfo:
        """The header facts of tensor ``name``; :class:`ConfigError` (key ``tensor``) when there is none."""
        file = self.path if self.shards is None else self.shards.get(name)
        header = _header(*_stamp(file), self.key) if file is not None else {}
        if name not in header:
            raise ConfigError("tensor", f"{self.path} has no tensor {name!r}{_some_names(self.names())}")
        return header[name]

    # -- reading ----------------------------------------------------------------------------------------
    def read(self, name: str, *, max_bytes: int | None = None) -> np.ndarray:
        """Tensor ``name`` as float32 (float64 when stored so), widened exactly from 16-bit and 8-bit floats.

        Raises
        ------
        PecliError
            Before reading, when the tensor and its widened copy exceed ``max_bytes``; when it does not
            hold floating-point numbers; when the file is cut short.
        """
        info = self.info(name)
        if not info.dtype.startswith(("F", "BF")):
            raise PecliError(f"tensor {name!r} holds {info.dtype} values, not floating-point weights")
        if max_bytes is not None and info.read_bytes() > max_bytes:
            raise PecliError(
                f"tensor {name!r} ({'×'.join(map(str, info.shape))} {info.dtype}) needs about "
                f"{size_text(info.read_bytes())} of memory, over the budget of {size_text(max_bytes)}; raise --max-memory"
            )
        values = _read_numpy(info) if info.dtype not in RAW_DTYPES else None
        if values is None:
            values = _read_raw(info)
        return np.asarray(values, dtype=np.float64 if info.dtype == "F64" else np.float32)


def require_local(path: str | os.PathLike | None, key: str = "weights") -> None:
    """Raise :class:`ConfigError` (``key``) unless ``path`` is None or an existing file: called before a
    model is looked up on the network, so that a mistyped local file is said at once."""
    if path is not None and not Path(path).is_file():
        raise ConfigError(key, f"{path}: no such file")


def _some_names(names: list[str], shown: int = 8) -> str:
    if not names:
        return " (it holds no tensors)"
    more = f", … ({len(names)} in all)" if len(names) > shown else ""
    return f"; it has: {', '.join(names[:shown])}{more}"


def _stamp(path: Path) -> tuple[str, int, int]:
    """The file's absolute path, size and modification time: a cached header is reused only while they hold."""
    try:
        status = path.stat()
    except OSError as error:
        raise ConfigError("weights", f"cannot read {path}: {error.strerror or error}") from None
    return str(path.resolve()), status.st_size, status.st_mtime_ns


@functools.lru_cache(maxsize=32)
def _header(path: str, size: int, mtime: int, key: str) -> Mapping[str, TensorInfo]:
    """The tensors of safetensors file ``path`` (of ``size`` bytes, modified at ``mtime``) by name."""
    try:
        with open(path, "rb") as stream:
            prefix = stream.read(8)
            length = struct.unpack("<Q", prefix)[0] if len(prefix) == 8 else -1
            if not 2 <= length <= min(MAX_HEADER_BYTES, size - 8):
                raise ConfigError(key, f"{path} is not a safetensors file (no valid header)")
            raw = json.loads(stream.read(length))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(key, f"{path} is not a safetensors file ({type(error).__name__})") from None
    if not isinstance(raw, dict):
        raise ConfigError(key, f"{path} is not a safetensors file (its header is not a JSON object)")
    data_start = 8 + length
    tensors = {}
    for name, entry in raw.items():
        if name == "__metadata__":
            continue
        info = _tensor_info(name, entry, Path(path), data_start)
        if info is None or info.stop > size:
            raise ConfigError(key, f"{path}: tensor {name!r} has a broken header entry or lies past the end of the file")
        tensors[name] = info
    return tensors


def _tensor_info(name: str, entry: object, path: Path, data_start: int) -> TensorInfo | None:
    """The :class:`TensorInfo` of one header entry, or None when the entry is malformed."""
    try:
        dtype, shape, (begin, end) = entry["dtype"], tuple(int(n) for n in entry["shape"]), entry["data_offsets"]
    except (TypeError, KeyError, ValueError):
        return None
    width = DTYPE_BYTES.get(dtype)
    if width is None or any(n < 0 for n in shape) or end - begin != width * int(np.prod(shape, dtype=np.int64)):
        return None
    return TensorInfo(name, dtype, shape, path, data_start + int(begin), data_start + int(end))


def _read_index(path: Path, key: str) -> dict[str, Path]:
    """The shard file of every tensor of a ``model.safetensors.index.json``."""
    from pecli.config_files import read_json

    data = read_json(str(path), key)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise ConfigError(key, f"{path} is not a safetensors index (no weight_map of tensor → shard file)")
    shards = {}
    for name, shard in weight_map.items():
        file = path.parent / shard
        if Path(shard).is_absolute() or ".." in Path(shard).parts:
            raise ConfigError(key, f"{path}: shard {shard!r} must be a file beside the index")
        shards[name] = file
    return shards


def _read_numpy(info: TensorInfo) -> np.ndarray | None:
    """The tensor through safetensors' NumPy API (only that tensor is read)."""
    safetensors = optional_import("safetensors", "reading a .safetensors checkpoint")
    try:
        with safetensors.safe_open(str(info.file), framework="numpy") as handle:
            return handle.get_tensor(info.name)
    except (OSError, ValueError, TypeError, safetensors.SafetensorError) as error:  # its own error: a header it refuses
        raise PecliError(f"cannot read tensor {info.name!r} from {info.file}: {error}") from None


def _read_raw(info: TensorInfo) -> np.ndarray:
    """The tensor from its byte range, as the ml_dtypes type of its 16- or 8-bit float format."""
    import ml_dtypes

    dtype = np.dtype(getattr(ml_dtypes, RAW_DTYPES[info.dtype])).newbyteorder("<")
    with open(info.file, "rb") as stream:
        stream.seek(info.start)
        data = stream.read(info.nbytes)
    if len(data) != info.nbytes:
        raise PecliError(f"{info.file} is cut short: tensor {info.name!r} is incomplete")
    return np.frombuffer(data, dtype=dtype).reshape(info.shape)


# -- position tables ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableRule:
    """How a family of models names its position-embedding table, and the rows before position 0."""

    suffix: str
    offset: int
    family: str


#: The usual names of a learned position table, in the order they are tried. OPT keeps two rows before
#: position 0 (``OPTLearnedPositionalEmbedding``: offset 2); so does RoBERTa (positions start at
#: ``padding_idx + 1`` = 2).
TABLE_RULES: tuple[TableRule, ...] = (
    TableRule("wpe.weight", 0, "GPT-2"),
    TableRule("embed_positions.weight", 2, "OPT"),
    TableRule("roberta.embeddings.position_embeddings.weight", 2, "RoBERTa"),
    TableRule("position_embeddings.weight", 0, "BERT"),
)


@dataclass(frozen=True)
class PositionTable:
    """Where a learned position table lies in a checkpoint: tensor, rows usable as positions, width."""

    tensor: str
    rows: int
    dim: int
    row_offset: int
    family: str | None


def rule_of(name: str) -> TableRule | None:
    """The first rule whose suffix ends ``name`` (at a ``.`` boundary), or None."""
    for rule in TABLE_RULES:
        if name == rule.suffix or name.endswith("." + rule.suffix):
            return rule
    return None


def find_table(path: str | os.PathLike, tensor: str | None = None, row_offset: int | None = None) -> PositionTable:
    """The position table of a checkpoint: ``tensor`` or the one tensor with a usual name.

    Parameters
    ----------
    path:
        A ``.safetensors`` file or ``model.safetensors.index.json``.
    tensor:
        The tensor's name; by default the tensor named by :data:`TABLE_RULES` (an error when none or
        several match).
    row_offset:
        Rows of the table before position 0; by default the family's (OPT: 2), else 0.

    Returns
    -------
    PositionTable
        ``rows`` is the table's rows minus ``row_offset``: position p is row p + row_offset.
    """
    checkpoint = Checkpoint(path)
    if tensor is None:
        found = [name for name in checkpoint.names() if rule_of(name) is not None]
        if not found:
            usual = ", ".join(rule.suffix for rule in TABLE_RULES)
            raise ConfigError("tensor", f"{path} has no position table under the usual names ({usual}); give --tensor{_some_names(checkpoint.names())}")
        if len(found) > 1:
            raise ConfigError("tensor", f"{path} has several position tables ({', '.join(found)}); choose one with --tensor")
        tensor = found[0]
    info = checkpoint.info(tensor)
    if len(info.shape) != 2:
        raise ConfigError("tensor", f"{tensor!r} has shape {list(info.shape)}; a position table is (rows, dim)")
    rule = rule_of(tensor)
    offset = (rule.offset if rule else 0) if row_offset is None else int(row_offset)
    rows = info.shape[0] - offset
    if rows < 1:
        raise ConfigError("row_offset", f"{offset} leaves no rows of the {info.shape[0]} in {tensor!r}")
    return PositionTable(tensor, rows, info.shape[1], offset, rule.family if rule else None)


def read_table(path: str | os.PathLike, tensor: str, row_offset: int, rows: int) -> np.ndarray:
    """Rows ``row_offset`` … ``row_offset + rows − 1`` of the table, float64, read-only and cached
    while the file is unchanged (same size and modification time)."""
    return _cached_table(*_stamp(Path(path)), tensor, int(row_offset), int(rows))


@functools.lru_cache(maxsize=4)
def _cached_table(path: str, size: int, mtime: int, tensor: str, row_offset: int, rows: int) -> np.ndarray:
    values = Checkpoint(path).read(tensor)[row_offset : row_offset + rows]
    table = np.array(values, dtype=np.float64)
    table.flags.writeable = False
    return table

"""The rows file of a sweep (``-o``): .csv, .jsonl or .parquet; appended as points finish, resumable.

While the sweep runs, each finished row is appended to the file and flushed (CSV: a new column rewrites
the header; Parquet, which cannot be appended to, gets its rows in a sidecar ``OUT.partial.jsonl``).
When every point has a row, the file is rewritten in grid order, atomically, with its columns in a fixed
order (:func:`column_order`): the same grid gives the same bytes whatever ran it and however often it
was resumed. A file that another sweep wrote, or that no sweep wrote, is overwritten only with
``force``; one that this sweep wrote (the same grid names and fingerprint) is resumed.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Mapping, Sequence, TextIO

from pecli.errors import ConfigError, PecliError
from pecli.io import write_atomic
from pecli.sweeps.point import ERROR_COLUMN, SWEEP, VERDICT

SUFFIXES = (".csv", ".jsonl", ".parquet")
#: The sidecar of a Parquet file while its sweep runs: ``OUT.parquet`` + this.
SIDECAR = ".partial.jsonl"

Row = dict[str, Any]


class RowsFile:
    """The output file of one sweep: the rows it already holds, appending, and the final rewrite.

    Open it with :func:`open_rows_file`, which checks everything before any point runs.
    """

    def __init__(self, path: Path, previous: list[Row], *, kept: set[Path], force: bool) -> None:
        self.path = path
        self.kind = path.suffix.lower()[1:]
        #: The rows of this sweep already in the file (and in a Parquet file's sidecar), in file order.
        self.previous = previous
        self._rows = list(previous)  # what the file (CSV, JSONL) or the sidecar (Parquet) holds now
        self._kept, self._force = kept, force  # the files that hold this sweep's rows; --force
        self._stream: TextIO | None = None
        self._columns: list[str] = []  # a CSV file's header as written

    @property
    def _appended_to(self) -> Path:
        return sidecar(self.path) if self.kind == "parquet" else self.path

    def append(self, row: Row) -> None:
        """Write one finished row now (flushed), so that an interrupted sweep keeps it."""
        if self._stream is None:
            self._open_stream()
        self._rows.append(row)
        if self.kind == "csv":
            if any(key not in self._columns for key in row):
                self._stream.close()
                self._columns += [key for key in row if key not in self._columns]
                write_atomic(self.path, lambda out: _write_csv(out, self._rows, self._columns), force=True)
                self._stream = open(self.path, "a", encoding="utf-8", newline="")
                return
            _csv_writer(self._stream, self._columns).writerow(row)
        else:
            self._stream.write(json.dumps(row) + "\n")
        self._stream.flush()

    def _open_stream(self) -> None:
        target = self._appended_to
        if target in self._kept:
            _drop_partial_line(target)
            self._stream = open(target, "a", encoding="utf-8", newline="")
            if self.kind == "csv":
                self._columns = _csv_header(target)
            return
        mode = "w" if self._force or target != self.path else "x"  # a sidecar not kept is absent, or one --force lets go
        try:
            self._stream = open(target, mode, encoding="utf-8", newline="")
        except FileExistsError:
            raise PecliError(f"{target} exists; pass --force to overwrite it") from None

    def finish(self, rows: Sequence[Row], axes: Sequence[str]) -> None:
        """Rewrite the file with ``rows`` (grid order), atomically; remove a Parquet file's sidecar."""
        self.close()
        columns = column_order(rows, axes)
        if self.kind == "csv":
            write_atomic(self.path, lambda out: _write_csv(out, rows, columns), force=True)
        elif self.kind == "jsonl":
            write_atomic(self.path, lambda out: _write_jsonl(out, rows, columns), force=True)
        else:
            table = arrow_table(rows, columns)
            write_atomic(self.path, lambda out: _write_parquet(out, table), force=self._force or self.path in self._kept)
            try:
                sidecar(self.path).unlink()
            except FileNotFoundError:
                pass

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def sidecar(path: Path) -> Path:
    """Where the rows of an unfinished Parquet sweep are appended."""
    return path.with_name(path.name + SIDECAR)


def open_rows_file(path: str | os.PathLike, axes: Sequence[str], fingerprint: str, *, force: bool,
                   max_bytes: int | None = None) -> RowsFile:
    """Check, before any work, that the sweep can write ``path``, and read the rows it already holds.

    Whether an existing file is this sweep's is told from its head (:func:`head_reason`), so that a
    large file of something else is refused without being read; one that is this sweep's is read only
    when its rows fit ``max_bytes`` (:data:`RESUME_BYTES_PER_BYTE` per byte of file, from its size).

    Raises
    ------
    ConfigError, PecliError
        An unknown suffix, a missing folder, a folder; Parquet without pyarrow; a file (or a Parquet
        file's sidecar) that holds no rows of this sweep, without ``force``; a file too large to resume.
    """
    from pecli.io import file_name_problem, refuse_inputs

    text = os.fspath(path)
    problem = file_name_problem(text)
    if problem is not None:
        raise ConfigError("out", problem)
    target = Path(text)
    suffix = target.suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError("out", f"{target}: unsupported suffix {target.suffix or '(none)'}; use one of {', '.join(SUFFIXES)}")
    if target.is_dir():
        raise ConfigError("out", f"{target} is a folder")
    if not target.parent.is_dir():
        raise ConfigError("out", f"{target}: folder {target.parent} does not exist")
    refuse_inputs(target, option="--out")
    if suffix == ".parquet":
        require_pyarrow()
    previous: list[Row] = []
    kept: set[Path] = set()
    for candidate in (target, sidecar(target)) if suffix == ".parquet" else (target,):
        if not candidate.exists():
            continue
        rows, reason = _rows_of_this_sweep(candidate, axes, fingerprint, max_bytes)
        if reason is None:
            previous += rows
            kept.add(candidate)
        elif not force:
            raise PecliError(f"{candidate} {reason}; pass --force to overwrite it, or give another -o")
    return RowsFile(target, previous, kept=kept, force=force)


def _rows_of_this_sweep(path: Path, axes: Sequence[str], fingerprint: str,
                        max_bytes: int | None = None) -> tuple[list[Row], str | None]:
    """The rows of ``path`` and None, or no rows and why the file is not this sweep's (told from the
    file's head when it can be, before the whole file is read)."""
    try:
        if not path.is_file():
            return [], "exists and is not a regular file"
        reason = head_reason(path, axes, fingerprint)
        if reason is not None:
            return [], reason
        _check_resume_memory(path, max_bytes)
        rows, columns = read_rows(path)
    except (OSError, ValueError, csv.Error) as error:
        return [], f"exists and is not a pecli sweep file ({type(error).__name__})"
    return rows, _columns_reason(columns, [row.get(SWEEP) for row in rows], axes, fingerprint)


def _columns_reason(columns: Sequence[str], fingerprints: Iterable[Any], axes: Sequence[str], fingerprint: str) -> str | None:
    """Why a file with these columns and these rows' ``sweep`` values is not this sweep's (None: it is)."""
    if SWEEP not in columns:
        return "exists and is not a pecli sweep file (it has no sweep column)"
    names = list(columns[: list(columns).index(SWEEP)])
    if set(names) != set(axes):
        return f"holds another sweep (its grid: {', '.join(names) or 'none'}; this one's: {', '.join(axes)})"
    if any(value != fingerprint for value in fingerprints):
        return "holds a sweep of the same grid names with another check or other fixed options"
    return None


#: Bytes read from the head of an existing rows file to tell whether it is this sweep's.
HEAD_BYTES = 1 << 16
#: Bytes of memory the rows read back from a file take per byte of the file, at the peak of reading (Python
#: dicts of text; measured on 20 MB CSV files: 7.4 for rows of ``check all``, 14 for rows of one property,
#: 3.8 for JSONL): the budget of a resume, with a margin.
RESUME_BYTES_PER_BYTE = 20


def head_reason(path: Path, axes: Sequence[str], fingerprint: str) -> str | None:
    """Why ``path`` is not this sweep's file, told from its first :data:`HEAD_BYTES` (its header and
    first row; a Parquet file's schema); None when its head is this sweep's.

    Raises
    ------
    OSError, ValueError, csv.Error
        A file that cannot be read, or whose head is not CSV, JSON or Parquet.
    """
    if path.suffix.lower() == ".parquet" and not path.name.endswith(SIDECAR):
        columns = list(require_pyarrow().read_schema(path).names)
        return _columns_reason(columns, (), axes, fingerprint)
    with open(path, "rb") as stream:
        head = stream.read(HEAD_BYTES)
    if path.suffix.lower() == ".csv":
        records, _ = whole_csv_records(head[: head.rfind(b"\n") + 1])
        if not records:
            return "exists and is not a pecli sweep file (no header line in its first 64 KiB)"
        first = dict(zip(records[0], records[1])) if len(records) > 1 else {}
        return _columns_reason(records[0], [first.get(SWEEP)] if first else [], axes, fingerprint)
    line = head.split(b"\n", 1)[0]
    if not line:
        return None  # an empty file, or a sidecar cut before its first row: nothing to tell from
    row = json.loads(line)  # a first line longer than HEAD_BYTES is not a pecli row either: ValueError
    if not isinstance(row, dict):
        raise ValueError("a line is not a JSON object")
    return _columns_reason(list(row), [row.get(SWEEP)], axes, fingerprint)


def _check_resume_memory(path: Path, max_bytes: int | None) -> None:
    """Refuse, from its size alone, a rows file whose rows would not fit ``max_bytes`` once read."""
    if max_bytes is None:
        return
    from pecli.io import size_text

    size = path.stat().st_size
    needed = size * RESUME_BYTES_PER_BYTE
    if needed > max_bytes:
        raise PecliError(f"{path} holds {size_text(size)} of rows; reading them back to resume takes about "
                         f"{size_text(needed)} of memory, over the budget of {size_text(max_bytes)}: give another -o, "
                         "or raise --max-memory")


# -- reading -------------------------------------------------------------------------------------------
def read_rows(path: str | os.PathLike) -> tuple[list[Row], list[str]]:
    """The rows of a sweep file and its columns (CSV cells are text). A last row cut short by an
    interruption is left out."""
    path = Path(path)
    if path.name.endswith(SIDECAR) or path.suffix.lower() == ".jsonl":
        return _read_jsonl(path)
    if path.suffix.lower() == ".csv":
        return _read_csv(path)
    pyarrow_parquet = require_pyarrow()
    try:
        table = pyarrow_parquet.read_table(path)
    except Exception as error:  # pyarrow's own errors (ArrowInvalid, …) are not OSError or ValueError everywhere
        raise ValueError(str(error)) from None
    return table.to_pylist(), list(table.column_names)


def _read_csv(path: Path) -> tuple[list[Row], list[str]]:
    records, _ = whole_csv_records(path.read_bytes())
    columns = records[0] if records else []
    rows = [dict(zip(columns, record)) for record in records[1:] if len(record) == len(columns)]  # whole rows only
    return rows, columns


def whole_csv_records(data: bytes) -> tuple[list[list[str]], int]:
    """The CSV records of ``data`` that an interruption did not cut, and the bytes they take.

    pecli ends every record with a new line, so a last record is whole only when the data ends with one
    and no quoted field is still open there: a record cut inside its last field (``"{""pair"": [17, ``)
    is left out, whether the cut fell inside quotes or not.

    Raises
    ------
    csv.Error, UnicodeDecodeError
        Data that is not CSV (a quote left open before the end, bytes that are not UTF-8).
    """
    consumed = [0]

    def lines():
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end + 1
            consumed[0] = end
            # a last line without its end may stop inside a character: it is dropped anyway
            yield data[start:end].decode("utf-8", errors="strict" if data[end - 1:end] == b"\n" else "replace")
            start = end

    records: list[list[str]] = []
    whole = 0
    try:
        for record in csv.reader(lines(), strict=True):
            if consumed[0] == len(data) and not data.endswith(b"\n"):
                break  # cut inside its last line
            records.append(record)
            whole = consumed[0]
    except csv.Error:
        if consumed[0] < len(data):
            raise
    return records, whole


def _read_jsonl(path: Path) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            if not line.endswith("\n"):
                break  # cut short by an interruption
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("a line is not a JSON object")
            rows.append(row)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    return rows, columns


def _csv_header(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as stream:
        return next(csv.reader(stream), [])


def _drop_partial_line(path: Path) -> None:
    """Cut a last record that an interruption left unfinished, before appending after it (CSV: a record
    whose quoted field is still open counts as cut, see :func:`whole_csv_records`)."""
    with open(path, "rb+") as stream:
        data = stream.read()
        if path.suffix.lower() == ".csv":
            keep = whole_csv_records(data)[1]
        else:
            keep = data.rfind(b"\n") + 1
        if keep < len(data):
            stream.truncate(keep)


# -- writing -------------------------------------------------------------------------------------------
def column_order(rows: Iterable[Mapping[str, Any]], axes: Sequence[str]) -> list[str]:
    """The columns of the final file: the grid's names, ``sweep``, ``verdict``, ``error``, then per
    property in the registry's order ``PROPERTY.verdict``, ``PROPERTY.key_figure``, ``PROPERTY.sampled``
    and its figures by name; any other column last, by name. Fixed by the rows' contents, not by the order they ran in."""
    from pecli.analysis.registry import ANALYSES

    head = [*axes, SWEEP, VERDICT, ERROR_COLUMN]
    rest = {key for row in rows for key in row} - set(head)
    order = {name: index for index, name in enumerate(ANALYSES)}

    def rank(column: str) -> tuple[int, int, str]:
        prop, _, figure = column.partition(".")
        first = {"verdict": 0, "key_figure": 1, "sampled": 2}.get(figure, 3)
        return order.get(prop, len(order)), first, column

    return head + sorted(rest, key=rank)


def _csv_writer(stream: TextIO, columns: Sequence[str]) -> Any:
    return csv.DictWriter(stream, fieldnames=list(columns), lineterminator="\n")


def _write_csv(out: BinaryIO, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> None:
    text = io.TextIOWrapper(out, encoding="utf-8", newline="")
    writer = _csv_writer(text, columns)
    writer.writeheader()
    writer.writerows(rows)
    text.flush()
    text.detach()


def _write_jsonl(out: BinaryIO, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> None:
    for row in rows:
        out.write((json.dumps({key: row[key] for key in columns if key in row}) + "\n").encode())


def require_pyarrow() -> Any:
    """``pyarrow.parquet``, or a one-line error saying how to install it."""
    try:
        import pyarrow.parquet
    except ImportError:
        raise ConfigError("out", ".parquet needs pyarrow, which is not installed: pip install 'pecli[parquet]'") from None
    return pyarrow.parquet


def arrow_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> Any:
    """An Arrow table of the rows, one type per column: bool, int64, float64 (ints and floats), else text
    (a value that is not text stored as its JSON)."""
    import pyarrow

    arrays = {}
    for name in columns:
        values = [row.get(name) for row in rows]
        kinds = {type(value) for value in values if value is not None}
        if kinds and kinds <= {bool}:
            arrays[name] = pyarrow.array(values, type=pyarrow.bool_())
        elif kinds and kinds <= {int}:
            arrays[name] = pyarrow.array(values, type=pyarrow.int64())
        elif kinds and kinds <= {int, float}:
            arrays[name] = pyarrow.array([None if v is None else float(v) for v in values], type=pyarrow.float64())
        else:
            texts = [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]
            arrays[name] = pyarrow.array(texts, type=pyarrow.string())
    return pyarrow.table(arrays)


def _write_parquet(out: BinaryIO, table: Any) -> None:
    require_pyarrow().write_table(table, out)


__all__ = ["SIDECAR", "SUFFIXES", "RowsFile", "arrow_table", "column_order", "open_rows_file", "read_rows", "sidecar"]

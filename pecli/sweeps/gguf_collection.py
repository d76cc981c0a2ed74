"""Many GGUF files against one model's config: a row per file, same, different or unreadable.

:func:`locations` turns what ``--gguf`` was given into the files to read, in order, each once:

- a local path or a URL / Hub file (:mod:`pecli.models.gguf_remote`) as it is;
- a folder: every ``*.gguf`` under it;
- a glob (``*``, ``?``, ``[``; ``**`` spans folders): the files it matches;
- ``hf://ORG/REPO[@REVISION]`` without a file: every ``.gguf`` of the repository (``HfApi.list_repo_files``);
- ``@LIST``: a text file of locations, one a line (blank lines and ``#`` comments skipped; a relative
  path is taken from the list's folder).

A split model (``NAME-00001-of-00003.gguf``) is read from its first part, which holds the metadata
(llama.cpp's ``gguf-split``: the other parts hold their tensors and the ``split.*`` keys only).

:class:`CollectionJob` is what each file's row is computed from — the reference plan — and runs on
:mod:`pecli.sweeps.runners`' runners as a sweep's points do: threads of this process (the default: the
files wait on the network), local processes (``--jobs``) or a Dask cluster (``--cluster``). Each row is
:func:`~pecli.models.gguf_blame.diff_gguf`'s answer for that file, the answer ``pecli diff --hf-config C
--gguf FILE`` gives: ``verdict`` ``same``, ``different`` (with the number of differences and the first)
or ``unreadable`` (with the one line the file's error says). The rows file (``-o``) is a sweep's
(:mod:`pecli.sweeps.files`, axis ``file``): appended as files finish, resumed by a rerun, which reads
again only the files without a finished row (an unreadable file is read again).
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pecli.errors import ConfigError
from pecli.models.plan import PositionPlan
from pecli.notebook import Tabular

#: The rows' columns besides the sweep's own (``file``, ``sweep``, ``verdict``, ``error``).
FILE, DIFFERENCES, FIRST = "file", "differences", "first_difference"
SAME, DIFFERENT, UNREADABLE = "same", "different", "unreadable"
#: Threads reading files at once in this process.
THREADS = 8
#: A later part of a split model (``…-00002-of-00003.gguf``).
LATER_PART = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")
#: Glob characters.
MAGIC = re.compile(r"[*?[]")


def locations(given: Sequence[str]) -> list[str]:
    """The files ``given`` names (see the module), in order, each once.

    Raises
    ------
    ConfigError
        (key ``gguf``) An empty argument; a list file that cannot be read; a folder, glob or repository
        that holds no GGUF file.
    """
    from pecli.models.gguf_remote import is_remote

    found: list[str] = []
    for item in given:
        if not item:
            raise ConfigError("gguf", "expected the path of a GGUF file, got ''")
        if item.startswith("@"):
            found += _listed(item[1:])
        elif item.startswith("hf://") and not item.endswith(".gguf"):
            found += _hub_repository(item)
        elif is_remote(item):
            found.append(item)
        elif os.path.isdir(item):
            files = sorted(str(p) for p in Path(item).rglob("*.gguf") if p.is_file())
            if not files:
                raise ConfigError("gguf", f"{item} is a folder without .gguf files")
            found += files
        elif MAGIC.search(item) and not os.path.exists(item):
            files = sorted(p for p in glob.glob(item, recursive=True) if os.path.isfile(p))
            if not files:
                raise ConfigError("gguf", f"{item} matches no file")
            found += files
        else:
            found.append(item)
    return [f for f in dict.fromkeys(found) if not _later_part(f)]


def _later_part(location: str) -> bool:
    part = LATER_PART.search(location)
    return part is not None and int(part[1]) != 1


#: Largest @LIST read: a name a line, some hundred thousand of them.
MAX_LIST_BYTES = 16 << 20


def _listed(path: str) -> list[str]:
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would wait for a writer, /dev/zero never end
            raise ConfigError("gguf", f"the list @{path} is not a regular file (a FIFO, a device or a folder)")
        with open(path, "rb") as stream:
            data = stream.read(MAX_LIST_BYTES + 1)
        if len(data) > MAX_LIST_BYTES:
            raise ConfigError("gguf", f"the list @{path} is larger than {MAX_LIST_BYTES >> 20} MiB; it names files, one a line")
        text = data.decode("utf-8-sig")  # a BOM (Windows Notepad) is no part of the first name
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not UTF-8 text"
        raise ConfigError("gguf", f"cannot read the list @{path}: {reason}") from None
    from pecli.models.gguf_remote import is_remote

    folder = Path(path).parent
    items = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    if not items:
        raise ConfigError("gguf", f"the list @{path} names no file")
    nested = next((item for item in items if item.startswith("@")), None)
    if nested is not None:
        raise ConfigError("gguf", f"the list @{path} names another list ({nested}); a list names files, folders, "
                          "globs and URLs")
    return locations([item if is_remote(item) or os.path.isabs(item) else str(folder / item) for item in items])


def _hub_repository(location: str) -> list[str]:
    from pecli.extras import optional_import
    from pecli.models.gguf_remote import REMOTE_EXTRA, hub_parts
    from pecli.models.sources.hub_reach import hub_endpoint, quiet_hub, unreachable

    repo, revision, path = hub_parts(location.rstrip("/"))
    hub = optional_import("huggingface_hub", "a Hub --gguf", REMOTE_EXTRA)
    endpoint = hub_endpoint()
    why = unreachable(endpoint)
    if why:
        raise ConfigError("gguf", f"cannot list {location}: the Hub ({endpoint}) cannot be reached: {why}")
    errors = optional_import("huggingface_hub.utils", "a Hub --gguf", REMOTE_EXTRA)
    quiet_hub(errors)
    try:
        names = hub.HfApi(endpoint=endpoint).list_repo_files(repo, revision=revision)
    except errors.RevisionNotFoundError:
        raise ConfigError("gguf", f"cannot list {location}: {repo} has no revision {revision!r}") from None
    except errors.RepositoryNotFoundError:
        raise ConfigError("gguf", f"cannot list {location}: no model {repo} on the Hub (or it is private: log in "
                                  "or set HF_TOKEN)") from None
    except Exception as error:  # noqa: BLE001 - huggingface_hub's many errors, said in one line
        from pecli.models.gguf_remote import reason

        raise ConfigError("gguf", f"cannot list {location}: {reason(error)}") from None
    prefix = f"{path.strip('/')}/" if path.strip("/") else ""
    at = f"@{revision}" if revision else ""
    files = [f"hf://{repo}{at}/{name}" for name in sorted(names) if name.endswith(".gguf") and name.startswith(prefix)]
    if not files:
        raise ConfigError("gguf", f"{location} holds no .gguf file")
    return files


@dataclass(frozen=True)
class CollectionJob:
    """What every file's row is computed from: the model's plan (picklable, for processes and Dask)."""

    reference: PositionPlan

    @functools.cached_property
    def fingerprint(self) -> str:
        """12 hex digits naming the reference: a rows file of another reference is another report."""
        text = json.dumps(dataclasses.asdict(self.reference), sort_keys=True, default=str)
        return hashlib.sha256(("gguf-collection " + text).encode()).hexdigest()[:12]

    def head(self, point: Mapping[str, Any]) -> dict[str, Any]:
        from pecli.sweeps.point import SWEEP

        return {FILE: point[FILE], SWEEP: self.fingerprint}

    def run(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The row of one file: :func:`file_row`."""
        return {**self.head(point), **file_row(point[FILE], self.reference)}


def file_row(location: str, reference: PositionPlan) -> dict[str, Any]:
    """``verdict``, ``error``, ``differences`` and ``first_difference`` of the GGUF file at ``location``
    against ``reference`` (never raises for the file's own faults: they are its row)."""
    from pecli.errors import PecliError
    from pecli.models.gguf_blame import diff_gguf
    from pecli.sweeps.point import ERROR_COLUMN, VERDICT

    try:
        found = diff_gguf(location, reference)
    except PecliError as error:
        return {VERDICT: UNREADABLE, ERROR_COLUMN: _reason(str(error), location), DIFFERENCES: None, FIRST: None}
    except MemoryError:
        return {VERDICT: UNREADABLE, ERROR_COLUMN: "out of memory", DIFFERENCES: None, FIRST: None}
    lines = found.lines()
    return {VERDICT: SAME if found.same else DIFFERENT, ERROR_COLUMN: None, DIFFERENCES: len(found.differences),
            FIRST: lines[0] if lines else None}


def _reason(message: str, location: str) -> str:
    """The error of a file said in its row, without what the row's ``file`` already says."""
    message = message.removeprefix("gguf: ")
    for prefix in (f"cannot read {location}: ", f"{location} "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


@dataclass(frozen=True)
class CollectionResult(Tabular):
    """A row per file (in the order given), and how many this run read and a resumed file held."""

    rows: list[dict[str, Any]]
    read: int
    resumed: int

    @property
    def same(self) -> bool:
        return all(row.get("verdict") == SAME for row in self.rows)

    def count(self, verdict: str) -> int:
        return sum(1 for row in self.rows if row.get("verdict") == verdict)

    def table_title(self) -> str:
        files = "1 GGUF file" if len(self.rows) == 1 else f"{len(self.rows)} GGUF files"
        return (f"{files}: {self.count(SAME)} same, {self.count(DIFFERENT)} different, "
                f"{self.count(UNREADABLE)} unreadable")

    def table_rows(self) -> list[dict[str, Any]]:
        return self.rows

    def to_dict(self) -> dict[str, Any]:
        counts = {verdict: self.count(verdict) for verdict in (SAME, DIFFERENT, UNREADABLE)}
        return {"same": self.same, "files": len(self.rows), "counts": counts, "rows": self.rows}


def finished(row: Mapping[str, Any]) -> bool:
    """A row a resumed report keeps: a file read (same or different), not one that could not be."""
    return row.get("verdict") in (SAME, DIFFERENT)


def run_collection(job: CollectionJob, files: Sequence[str], runner: Callable | None = None,
                   output: Any = None) -> CollectionResult:
    """Read every file of ``files`` that ``output`` (a :class:`~pecli.sweeps.files.RowsFile`) holds no
    finished row of, on ``runner`` (default: :data:`THREADS` threads), appending each row to ``output`` as
    it finishes; then rewrite ``output`` in the order of ``files`` (rows of other files kept after them).
    Progress is reported per file (:func:`pecli.progress.task`)."""
    from pecli.progress import task
    from pecli.sweeps.point import ERROR, VERDICT
    from pecli.sweeps.runners import Threads

    runner = runner or Threads(THREADS)
    index = {name: i for i, name in enumerate(files)}
    previous: dict[int, dict[str, Any]] = {}
    outside: list[dict[str, Any]] = []
    for row in output.previous if output is not None else ():
        at = index.get(str(row.get(FILE)))
        if at is None:
            outside.append(row)
        else:
            previous[at] = row
    skip = {i for i, row in previous.items() if finished(row)}
    computed: dict[int, dict[str, Any]] = {}
    try:
        todo = [(i, {FILE: name}) for i, name in enumerate(files) if i not in skip]
        if todo:
            with task("diff GGUF files", total=len(todo)) as bar:
                for i, row in runner(job, todo):
                    if row.get(VERDICT) == ERROR:  # the runner's own failure (a worker lost)
                        row = {**row, VERDICT: UNREADABLE}
                    computed[i] = row
                    if output is not None:
                        output.append(row)
                    bar.advance()
        rows = [computed[i] if i in computed else previous[i] for i in range(len(files))]
        if output is not None:
            output.finish(rows + outside, (FILE,))
    finally:
        if output is not None:
            output.close()
    return CollectionResult(rows, read=len(computed), resumed=len(skip))


def runner_for(jobs: int | None, cluster: str | None) -> Callable:
    """Threads of this process by default; ``jobs`` > 1 local processes; a Dask scheduler at ``cluster``."""
    from pecli.sweeps.runners import DaskCluster, LocalProcesses, Threads

    if cluster is not None:
        return DaskCluster(cluster)
    if jobs is not None and jobs > 1:
        return LocalProcesses(jobs)
    return Threads(THREADS if jobs is None else 1)


__all__ = ["CollectionJob", "CollectionResult", "file_row", "locations", "run_collection", "runner_for"]

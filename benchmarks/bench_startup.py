"""Start-up of the ``pecli`` command against importing its dependencies, in the same run.

    python benchmarks/bench_startup.py [--repeat N]

Each command runs N times in a fresh interpreter (as a user runs it), after one untimed run that
leaves Python's bytecode cache written as an installed pecli has it (even where the environment sets
PYTHONDONTWRITEBYTECODE); the figure is the median wall time as a ratio to the median of
``python -c "import numpy, typer, rich, yaml"``, with the target and pass/fail, the smallest and
largest of the N ratios of a command's run to the reference run just before it, and the median CPU
time (user + system) beside it, which a busy machine disturbs less. ``encode --help`` runs twice:
into a pipe (plain text) and into a pseudo-terminal 100 columns wide (the styled page a user sees).

``wavelengths --scheme rope --json`` runs with Men et al.'s bound for its 512 positions kept from the
untimed run (pecli/wavelengths/base_bound.py, in a temporary PECLI_CACHE_DIR: a user's second run and later;
target 1.2×) and with the cache off (``PECLI_CACHE_DIR=``: the bound searched in every run).

``pecli`` with no command (the list of commands) and ``wavelengths --scheme rope --dim 8 --json``: issue 42's
"start-up stays within 1.2× of the bare imports", target 1.2×.

``--help`` is Typer's own page (pecli/cli/help.py sets how it is printed, and keeps Rich's Markdown
parser for the texts that have Markdown in them; NumPy's code does not run, pecli/cli/deferred_numpy.py):
every command's ``--help``, and ``pecli --help``, target 1.5×; ``encode --help`` also onto a terminal.

``--only TEXT`` keeps the rows whose name holds TEXT (``--only help``: every page); ``--before DIR`` also
runs each row with the pecli of DIR (in DIR, first on ``PYTHONPATH``: a checkout of the code before a change, e.g.
``git worktree add /tmp/before main``), interleaved with this tree's, and prints this tree's time over that
one, run by run: a change measured before and after in one run.

Option conversion: pecli converts its plain options itself (pecli/cli/coercion.py) instead of through
Typer's per-option Pydantic adapters (Typer 0.29 and later). The last rows run the same non-help
command lines with Typer's own conversion (the same console script with ``plain_values`` turned off)
and print pecli's time over that one, run by run: the measurement that decides whether pecli keeps
its converters (it does while they are what keeps ``wavelengths --json`` within 1.2× the reference).
"""

from __future__ import annotations

import argparse
import os
import pty
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from pecli.cli import COMMANDS as SUBCOMMANDS  # every command's --help is measured

REFERENCE = [sys.executable, "-c", "import numpy, typer, rich, yaml"]
#: The console script with Typer's own option conversion in place of pecli's (argv after the script).
TYPERS_CONVERSION = (
    "import sys\n"
    "import pecli.cli as cli\n"
    "cli.plain_values = lambda params: None\n"
    "sys.exit(cli.run(sys.argv[1:], one_shot=True))\n"
)
PECLI = [sys.executable, "-m", "pecli"]
WITH_TYPERS_CONVERSION = [sys.executable, "-c", TYPERS_CONVERSION]
ENCODE_JSON = ["encode", "--length", "8", "--dim", "8", "--json"]
WAVELENGTHS_JSON = ["wavelengths", "--scheme", "rope", "--json"]
#: name: (argv, extra environment, output to a terminal, target ratio to the reference or None).
COMMANDS: dict[str, tuple[list[str], dict[str, str], bool, float | None]] = {
    "pecli --version": ([*PECLI, "--version"], {}, False, 1.5),
    "pecli --help": ([*PECLI, "--help"], {}, False, 1.5),
    **{f"pecli {name} --help": ([*PECLI, name, "--help"], {}, False, 1.5) for name in SUBCOMMANDS},
    "pecli encode --help, on a terminal": ([*PECLI, "encode", "--help"], {}, True, 1.5),
    "pecli encode --length 8 --dim 8 --json": ([*PECLI, *ENCODE_JSON], {}, False, 1.5),
    "pecli wavelengths --scheme rope --json": ([*PECLI, *WAVELENGTHS_JSON], {}, False, 1.2),
    "pecli wavelengths --scheme rope --dim 8 --json": ([*PECLI, *WAVELENGTHS_JSON, "--dim", "8"], {}, False, 1.2),
    "pecli (no command: the list of commands)": (PECLI, {}, False, 1.2),
    "  the same, bound searched (no cache)": ([*PECLI, *WAVELENGTHS_JSON], {"PECLI_CACHE_DIR": ""}, False, None),
    "encode --json, Typer's conversion": ([*WITH_TYPERS_CONVERSION, *ENCODE_JSON], {}, False, None),
    "wavelengths --json, Typer's conversion": ([*WITH_TYPERS_CONVERSION, *WAVELENGTHS_JSON], {}, False, None),
}
#: pecli's option conversion against Typer's: (pecli's row, Typer's row).
CONVERSION_PAIRS = (
    ("pecli encode --length 8 --dim 8 --json", "encode --json, Typer's conversion"),
    ("pecli wavelengths --scheme rope --json", "wavelengths --json, Typer's conversion"),
)


ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


#: The folder a row runs in, where it is not this one: ``python -m pecli`` imports the pecli of its working
#: folder before PYTHONPATH's (``--before``).
FOLDERS: dict[str, str] = {}


def timed(argv: list[str], terminal: bool = False, extra: dict[str, str] | None = None,
          folder: str | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` in ``folder`` (its output to a pseudo-terminal if ``terminal``)."""
    environment = {**ENV, **(extra or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    if terminal:
        leader, follower = pty.openpty()
        reader = threading.Thread(target=_drain, args=(leader,))
        reader.start()
        subprocess.run(argv, stdout=follower, stderr=subprocess.DEVNULL, check=True, env={**environment, "COLUMNS": "100"},
                       cwd=folder)
        os.close(follower)
        reader.join()
        os.close(leader)
    else:
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=environment, cwd=folder)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _drain(descriptor: int) -> None:
    """Read a pseudo-terminal until its other end is closed (a full terminal would block the writer)."""
    try:
        while os.read(descriptor, 1 << 16):
            pass
    except OSError:  # EIO: the other end is closed
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", metavar="TEXT", help="only the rows whose name contains TEXT (e.g. --help)")
    parser.add_argument("--before", metavar="DIR", help="also run each row with the pecli of DIR (a checkout of "
                        "the code before a change) first on PYTHONPATH, paired with this one's")
    args = parser.parse_args()
    if args.only:
        for name in [name for name in COMMANDS if args.only not in name]:
            del COMMANDS[name]
    rows = list(COMMANDS)
    if args.before:
        for name in rows:
            argv, extra, terminal, _ = COMMANDS[name]
            COMMANDS[f"{name} [before]"] = (argv, {**extra, "PYTHONPATH": os.path.abspath(args.before)}, terminal, None)
            FOLDERS[f"{name} [before]"] = os.path.abspath(args.before)
    with tempfile.TemporaryDirectory() as cache:
        ENV["PECLI_CACHE_DIR"] = cache  # the bound cache of the untimed run, not the user's
        runs = measure(args.repeat)
    wall = {name: statistics.median(w for w, _ in values) for name, values in runs.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in runs.items()}
    print(f"reference: import numpy, typer, rich, yaml  {wall['reference']:.3f} s, CPU {cpu['reference']:.3f} s "
          f"(medians of {args.repeat}; typer {typer_version()})")
    failed = 0
    for name, (_, _, _, target) in COMMANDS.items():
        ratio = wall[name] / wall["reference"]
        pairs = [w / r for (w, _), (r, _) in zip(runs[name], runs["reference"])]
        verdict = "" if target is None else f"(target ≤ {target}×) {'pass' if ratio <= target else 'FAIL'}"
        failed += target is not None and ratio > target
        print(f"{name:45s} {wall[name]:.3f} s  {ratio:.2f}× ({min(pairs):.2f} … {max(pairs):.2f})  {verdict:21s}"
              f"CPU {cpu[name] / cpu['reference']:.2f}×")
    for ours, typers in CONVERSION_PAIRS:
        if ours not in runs or typers not in runs:
            continue
        pairs = [o / t for (o, _), (t, _) in zip(runs[ours], runs[typers])]
        print(f"{ours}: pecli's conversion / Typer's: {statistics.median(pairs):.2f}× "
              f"({min(pairs):.2f} … {max(pairs):.2f})")
    if args.before:
        print(f"this tree / {args.before}, run by run (median, smallest … largest; CPU: ratio of medians):")
        for name in rows:
            pairs = [n / b for (n, _), (b, _) in zip(runs[name], runs[f"{name} [before]"])]
            print(f"{name:45s} {statistics.median(pairs):.2f}× ({min(pairs):.2f} … {max(pairs):.2f})  "
                  f"CPU {cpu[name] / cpu[f'{name} [before]']:.2f}×")
    sys.exit(1 if failed else 0)


def measure(repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Every command ``repeat`` times, interleaved with the reference, after one untimed run of each."""
    commands = {"reference": (REFERENCE, {}, False, None), **COMMANDS}
    for name, (argv, extra, terminal, _) in commands.items():
        timed(argv, terminal, extra, FOLDERS.get(name))  # writes the bytecode cache (and the bound's)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):  # interleaved, so that load on the machine hits every command alike
        for name, (argv, extra, terminal, _) in commands.items():
            runs[name].append(timed(argv, terminal, extra, FOLDERS.get(name)))
    return runs


def typer_version() -> str:
    from importlib.metadata import version

    return version("typer")


if __name__ == "__main__":
    main()

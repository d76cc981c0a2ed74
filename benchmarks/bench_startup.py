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
untimed run (pecli/bound_cache.py, in a temporary PECLI_CACHE_DIR: a user's second run and later;
target 1.2×) and with the cache off (``PECLI_CACHE_DIR=``: the bound searched in every run).

The help pages: pecli prints Typer's page with its own renderer (pecli/cli/help.py). The last rows
run the same ``encode --help`` through Typer's renderer (``typer.rich_utils.rich_format_help``, of
the Typer installed, started as the console script starts it: ``run(..., one_shot=True)``) and print
pecli's time over Typer's, into a pipe and onto a terminal: the measurement that decides whether pecli keeps its renderer (it does while it is what keeps
``--help`` under its target).
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

REFERENCE = [sys.executable, "-c", "import numpy, typer, rich, yaml"]
#: Typer's own help renderer in place of pecli's, for the same command line (argv after the script).
TYPERS_HELP = (
    "import sys\n"
    "import pecli.cli as cli\n"
    "from typer import rich_utils\n"
    "def typers(self, ctx, formatter):\n"
    "    rich_utils.rich_format_help(obj=self, ctx=ctx, markup_mode='markdown')\n"
    "cli.HelpCommand.format_help = cli.HelpGroup.format_help = typers\n"
    "sys.exit(cli.run(sys.argv[1:], one_shot=True))\n"
)
PECLI = [sys.executable, "-m", "pecli"]
WITH_TYPERS_HELP = [sys.executable, "-c", TYPERS_HELP]
#: name: (argv, extra environment, output to a terminal, target ratio to the reference or None).
COMMANDS: dict[str, tuple[list[str], dict[str, str], bool, float | None]] = {
    "pecli --version": ([*PECLI, "--version"], {}, False, 1.5),
    "pecli encode --help": ([*PECLI, "encode", "--help"], {}, False, 1.5),
    "pecli encode --help, on a terminal": ([*PECLI, "encode", "--help"], {}, True, 1.5),
    "pecli encode --length 8 --dim 8 --json": ([*PECLI, "encode", "--length", "8", "--dim", "8", "--json"], {}, False, 1.5),
    "pecli wavelengths --scheme rope --json": ([*PECLI, "wavelengths", "--scheme", "rope", "--json"], {}, False, 1.2),
    "  the same, bound searched (no cache)": (
        [*PECLI, "wavelengths", "--scheme", "rope", "--json"], {"PECLI_CACHE_DIR": ""}, False, None),
    "encode --help, Typer's renderer": ([*WITH_TYPERS_HELP, "encode", "--help"], {}, False, None),
    "encode --help, Typer's renderer, terminal": ([*WITH_TYPERS_HELP, "encode", "--help"], {}, True, None),
}
#: pecli's help renderer against Typer's: (pecli's row, Typer's row).
HELP_PAIRS = (
    ("pecli encode --help", "encode --help, Typer's renderer"),
    ("pecli encode --help, on a terminal", "encode --help, Typer's renderer, terminal"),
)


ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], terminal: bool = False, extra: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (its output to a pseudo-terminal if ``terminal``)."""
    environment = {**ENV, **(extra or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    if terminal:
        leader, follower = pty.openpty()
        reader = threading.Thread(target=_drain, args=(leader,))
        reader.start()
        subprocess.run(argv, stdout=follower, stderr=subprocess.DEVNULL, check=True, env={**environment, "COLUMNS": "100"})
        os.close(follower)
        reader.join()
        os.close(leader)
    else:
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=environment)
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
    args = parser.parse_args()
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
    for ours, typers in HELP_PAIRS:
        pairs = [o / t for (o, _), (t, _) in zip(runs[ours], runs[typers])]
        print(f"{ours} with pecli's renderer / with Typer's: {statistics.median(pairs):.2f}× "
              f"({min(pairs):.2f} … {max(pairs):.2f})")
    sys.exit(1 if failed else 0)


def measure(repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Every command ``repeat`` times, interleaved with the reference, after one untimed run of each."""
    commands = {"reference": (REFERENCE, {}, False, None), **COMMANDS}
    for argv, extra, terminal, _ in commands.values():
        timed(argv, terminal, extra)  # writes the bytecode cache (and the bound's)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):  # interleaved, so that load on the machine hits every command alike
        for name, (argv, extra, terminal, _) in commands.items():
            runs[name].append(timed(argv, terminal, extra))
    return runs


def typer_version() -> str:
    from importlib.metadata import version

    return version("typer")


if __name__ == "__main__":
    main()

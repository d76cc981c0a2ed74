"""Extend benchmark: ``pecli extend`` at long targets, paired with the checks its measures replace.

Run from the repository root::

    python benchmarks/bench_extend.py                          # Llama 3.1 → 1,048,576 and 10,485,760
    python benchmarks/bench_extend.py --targets 262144,1048576 --reference-up-to 1048576 --json

What is measured
----------------
``command``: the whole ``pecli extend --hf-config sample_configs/hf/meta-llama--llama-3.1-8b.json
--target N --json`` as a process (start-up included), best of ``--repeat``; the goals are ≤ 5 s at
1,048,576 and ≤ 30 s at 10,485,760 on two cores. ``library``: :func:`pecli.extend.report.extension_report`
in this process. ``reference`` (targets up to ``--reference-up-to``): what the measures replace — for
every candidate the report measured, ``pecli check distinguishability`` and ``pecli check precision
--dtype bfloat16`` on the candidate's scheme at N (N × d float64 rows, encoded once per check), timed
the same way. The reference's verdicts, bfloat16 collision counts and local share are compared with the
report's: ``same`` must be true (the report's row measures are exact while at most 64 offsets can
collide, which is the case for every candidate here).

How to read the output
----------------------
``x reference`` is the library's time over the reference's in the same run (lower is better). Timings on
a shared machine are noisy: compare ratios, not seconds. This file is not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json"
GOALS = {1048576: 5.0, 10485760: 30.0}


def command_seconds(target: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pecli", "extend", "--hf-config", str(CONFIG), "--target", str(target),
                        "--json"], check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def reference(report, config: dict) -> tuple[float, bool]:
    """The checks at N on every candidate's scheme; whether their answers are the report's."""
    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import run_checks
    from pecli.extend.report import _frequency_keys, _scheme_of
    from pecli.extend.patches import patched

    start, same = time.perf_counter(), True
    for candidate in report.candidates:
        patch = _frequency_keys(candidate.config_patch, report.base, candidate.method)
        scheme = _scheme_of(patched(config, patch), report.base.source, report.target)
        distinct = run_checks(scheme, "distinguishability", CheckOptions(length=report.target))[0]
        precision = run_checks(scheme, "precision", CheckOptions(length=report.target, dtype="bfloat16"))[0]
        m = candidate.measures
        same &= distinct.verdict == m["distinguishability"] and precision.verdict == m["precision_bfloat16"]
        same &= precision.figures["collisions"] == m["bfloat16_collisions"]
        same &= abs(distinct.figures["local_share"] - m["local_share"]) <= 1 / report.target
    return time.perf_counter() - start, bool(same)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="1048576,10485760")
    parser.add_argument("--reference-up-to", type=int, default=1048576)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from pecli.extend.report import extension_report

    config = json.loads(CONFIG.read_text())
    rows = []
    for target in (int(t) for t in args.targets.split(",")):
        start = time.perf_counter()
        report = extension_report(config, target, "llama-3.1-8b")
        library = time.perf_counter() - start
        row = {"target": target, "command_s": round(command_seconds(target, args.repeat), 2),
               "library_s": round(library, 2), "goal_s": GOALS.get(target),
               "ranking": [c.label for c in report.candidates]}
        if target <= args.reference_up_to:
            seconds, same = reference(report, config)
            row.update(reference_s=round(seconds, 2), x_reference=round(library / seconds, 3), same=same)
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for row in rows:
        paired = (f"; reference {row['reference_s']} s, x reference {row['x_reference']}, same {row['same']}"
                  if "reference_s" in row else "")
        print(f"{row['target']:>11,}: command {row['command_s']} s (goal {row['goal_s']}), library "
              f"{row['library_s']} s{paired}")
        print(f"{'':13}ranking: {', '.join(row['ranking'])}")


if __name__ == "__main__":
    main()

"""Verify benchmark: ``pecli verify`` of long arrays against ``pecli encode`` of the same arrays, in one run.

Run from the repository root::

    python benchmarks/bench_verify.py                    # Llama 3.1, 2^20 x 128 float32, .npy and .npz
    python benchmarks/bench_verify.py --log2 23 --repeat 1 --json

What is measured
----------------
The reference: ``pecli encode --hf-config LLAMA --dtype float32 -L N --parts cos,sin -o x.npz`` as a
whole process; verify then reads the archive's members, and ``.npy`` copies of them. Then ``pecli verify`` of those arrays, with the default memory budget,
as a whole process: the matching arrays (one pass), and arrays with a planted bug (sin negated: the
comparison, then the diagnosis pass, which ends once every cause but the right one has failed). Each
is the best of ``--repeat`` runs; peak memory is the process's maximum resident set (``wait4``).

How to read the output
----------------------
``x encode`` is verify's time over encode's in the same run: the goal for matching arrays is at most
1.2, with a peak of at most 400 MiB at 2^20 rows. Timings on a shared machine are noisy: compare
ratios, not seconds. This file is not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LLAMA = ROOT / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json"
GOAL_RATIO, GOAL_MIB = 1.2, 400
COPIES = """
import sys, numpy as np
with np.load(sys.argv[1]) as arrays:
    for name in ("cos", "sin"):
        np.save(f"{sys.argv[2]}/{name}.npy", arrays[name])
    np.save(f"{sys.argv[2]}/negated.npy", -arrays["sin"])
"""


def run(*args: str) -> tuple[float, float, int]:
    """Seconds, peak resident MiB and exit code of one ``pecli`` process."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "pecli", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.stderr.close()
    return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def best(repeat: int, *args: str) -> tuple[float, float, int]:
    runs = [run(*args) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    length = 1 << args.log2
    model = ("--hf-config", str(LLAMA))
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / "x.npz"
        encode = best(args.repeat, "encode", *model, "-L", str(length), "--dtype", "float32", "--parts", "cos,sin",
                      "-o", str(archive), "--force", "-q")
        # .npy copies, and sin negated (a planted bug), made in a child process: memory this process
        # held would count in the children's peak (a forked child starts with its parent's pages)
        subprocess.run([sys.executable, "-c", COPIES, str(archive), folder], check=True)
        cases = {
            "matching .npz": (f"{archive}:cos", f"{archive}:sin", 0),
            "matching .npy": (f"{folder}/cos.npy", f"{folder}/sin.npy", 0),
            "sin-sign bug .npy": (f"{folder}/cos.npy", f"{folder}/negated.npy", 1),
        }
        rows = []
        for name, (cos, sin, expected) in cases.items():
            seconds, peak, code = best(args.repeat, "verify", *model, "--cos", cos, "--sin", sin, "-q")
            rows.append({"case": name, "seconds": seconds, "x_encode": seconds / encode[0], "peak_mib": peak,
                         "exit_code": code, "expected_exit_code": expected})
    if args.json:
        print(json.dumps({"rows": length, "encode_seconds": encode[0], "encode_peak_mib": encode[1], "verify": rows}, indent=2))
        return
    print(f"verify of {length:,} x 128 float32 (Llama 3.1); encode --dtype float32: {encode[0]:.2f} s, "
          f"peak {encode[1]:.0f} MiB")
    for row in rows:
        goal = row["case"].startswith("matching") and (row["x_encode"] > GOAL_RATIO or row["peak_mib"] > GOAL_MIB)
        print(f"  {row['case']:18s} {row['seconds']:6.2f} s  {row['x_encode']:.2f} x encode  peak {row['peak_mib']:4.0f} MiB"
              f"  exit {row['exit_code']} (expected {row['expected_exit_code']}){'  (over the goal)' if goal else ''}")


if __name__ == "__main__":
    main()

"""``pecli diff --hf-config C --gguf …`` over 100 GGUF files: from a web server on 127.0.0.1 against the
same files on disk, side by side.

Each file has a real Llama 3.1 8B header (128,256 tokens and 280,000 merges: 9 MB) and a 10 GB weight
tensor after it (sparse on disk); four distinct files (faithful, a wrong base, no ``rope_freqs``… as
``tests/gguf_models.py`` converts them) are linked under 100 names. The server (``tests/gguf_server.py``)
runs in a process of its own, so that it does not share this one's interpreter lock. The issue's goal:
the 100 remote files in under 15 s on 2 cores, at most 16 MiB fetched per file.
Run: ``python benchmarks/bench_gguf_remote.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
FILES = 100


def make_files(folder: Path) -> list[str]:
    from gguf_models import realistic_gguf

    distinct = [realistic_gguf(folder / "faithful.gguf"), realistic_gguf(folder / "base-1e4.gguf", base=1e4)]
    names = []
    for i in range(FILES):
        name = folder / "served" / f"model-{i:03d}.gguf"
        os.link(distinct[i % len(distinct)], name)
        names.append(name.name)
    return names


def timed(label: str, function) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    took = time.perf_counter() - start
    return took, result


def main() -> None:
    from gguf_models import LLAMA31

    from pecli.sweeps.gguf_collection import CollectionJob, run_collection
    from pecli.models.sources.config_json import read_plan
    from pecli.sweeps.runners import LocalProcesses, Threads

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "served").mkdir()
        names = make_files(folder)
        (folder / "config.json").write_text(json.dumps(LLAMA31))
        job = CollectionJob(read_plan(str(folder / "config.json")))
        server = subprocess.Popen([sys.executable, str(TESTS / "gguf_server.py"), str(folder / "served")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            url = server.stdout.readline().strip()
            local = [str(folder / "served" / name) for name in names]
            remote = [f"{url}/ok/{name}" for name in names]
            print(f"{FILES} GGUF files of 10 GB, a 9 MB header each (128,256 tokens, 280,000 merges), "
                  f"{os.cpu_count()} cores")
            print(f"{'':28}{'disk':>10}{'server':>10}")
            for label, runner in (("8 threads", Threads(8)), ("2 processes (--jobs 2)", LocalProcesses(2))):
                disk, rows = timed(label, lambda: run_collection(job, local, runner).rows)
                before = json.loads(urllib.request.urlopen(f"{url}/stats").read())["sent"]
                net, remote_rows = timed(label, lambda: run_collection(job, remote, runner).rows)
                sent = json.loads(urllib.request.urlopen(f"{url}/stats").read())["sent"] - before
                assert [r["verdict"] for r in rows] == [r["verdict"] for r in remote_rows]
                print(f"{label:28}{disk:9.2f}s{net:9.2f}s   {sent / FILES / 2**20:.1f} MiB fetched per file")
            verdicts = [r["verdict"] for r in remote_rows]
            print(f"verdicts: {verdicts.count('same')} same, {verdicts.count('different')} different")
        finally:
            server.stdin.close()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()

"""Opening a GGUF file: a 10 GB sparse file against a 1 KB one, and against reading a config.json plan.

The header is all that is read (the tensor data is memory-mapped, never touched), so the ratio of the
10 GB file's time to the small file's should be near 1. Run: ``python benchmarks/bench_gguf.py``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def best_of(function, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    from gguf_models import QWEN25_YARN, convert, sparse_gguf

    from pecli.models.sources.config_json import read_plan
    from pecli.models.gguf import read_gguf_plan

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        big = sparse_gguf(folder)
        small, config = convert(folder, "qwen25")
        (folder / "config.json").write_text(json.dumps(QWEN25_YARN))
        reference = best_of(lambda: read_plan(str(folder / "config.json")))
        small_time = best_of(lambda: read_gguf_plan(small))
        big_time = best_of(lambda: read_gguf_plan(big))
        print(f"config.json plan      {reference * 1e3:8.2f} ms (reference)")
        print(f"1 KB GGUF plan        {small_time * 1e3:8.2f} ms  {small_time / reference:6.1f}x")
        print(f"10 GB sparse GGUF     {big_time * 1e3:8.2f} ms  {big_time / reference:6.1f}x, "
              f"{big_time / small_time:.2f}x the 1 KB file ({os.path.getsize(big) / 1e9:.1f} GB)")


if __name__ == "__main__":
    main()

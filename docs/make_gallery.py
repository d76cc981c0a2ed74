"""Regenerate the README gallery: one figure per ``sample_configs/plot-*.yaml``, into ``docs/gallery/``.

Run from anywhere, with pecli installed::

    python docs/make_gallery.py            # every figure
    python docs/make_gallery.py circle bias  # only these kinds

Each figure is drawn by the real command line, ``pecli plot --config sample_configs/plot-KIND.yaml
--out docs/gallery/KIND.png --force``, so the gallery shows exactly what users get.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "sample_configs"
GALLERY = ROOT / "docs" / "gallery"


def main(kinds: list[str]) -> int:
    GALLERY.mkdir(parents=True, exist_ok=True)
    configs = sorted(CONFIGS.glob("plot-*.yaml"))
    if kinds:
        configs = [c for c in configs if c.stem.removeprefix("plot-") in kinds]
    failed = 0
    for config in configs:
        out = GALLERY / f"{config.stem.removeprefix('plot-')}.png"
        command = [sys.executable, "-m", "pecli", "plot", "--config", str(config), "--out", str(out), "--force", "--quiet"]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            failed += 1
            sys.stderr.write(f"{config.name}: {done.stderr.strip()}\n")
        else:
            sys.stderr.write(f"{out.relative_to(ROOT)}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Regenerate the gallery page (docs/gallery.md): one figure per ``sample_configs/plot-*.yaml``, into ``docs/gallery/``.

Run from anywhere, with pecli installed::

    python docs/make_gallery.py            # every figure
    python docs/make_gallery.py circle bias  # only these kinds

Each figure is drawn by the real command line, ``pecli plot --config sample_configs/plot-KIND.yaml
--out docs/gallery/KIND.png --force``, so the gallery shows exactly what users get. The kinds are those
of the registry (:data:`pecli.render.figures.PLOTS`); a kind without a sample config is reported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pecli.render.figures import PLOTS

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "sample_configs"
GALLERY = ROOT / "docs" / "gallery"


def main(kinds: list[str]) -> int:
    unknown = [kind for kind in kinds if kind not in PLOTS]
    if unknown:
        sys.stderr.write(f"unknown plot kind(s) {', '.join(unknown)}; kinds: {', '.join(PLOTS)}\n")
        return 2
    wanted = kinds or list(PLOTS)
    configs = [CONFIGS / f"plot-{kind}.yaml" for kind in wanted]
    for config in configs:
        if not config.exists():
            sys.stderr.write(f"{config.relative_to(ROOT)}: missing, no gallery figure for this kind\n")
    configs = [config for config in configs if config.exists()]
    GALLERY.mkdir(parents=True, exist_ok=True)
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

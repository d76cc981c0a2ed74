"""Regenerate the data pecli ships that is generated from other projects' code, one command for each table.

    python tools/regenerate.py --list              # each generator: what it writes, the environment it needs
    python tools/regenerate.py type-defaults       # runs it with that environment's Python
    python tools/regenerate.py all                 # every generator, in the order listed
    python tools/regenerate.py NAME --python PATH  # … or with another interpreter

The generators need transformers and torch (and the engines' installed code), which pecli never depends on:
each runs in a virtual environment outside the repository, made as its own docstring says (``torch==2.13.0``
first, the CPU build). Every file is written sorted and indented: review the diff (``git diff --stat``), then
run the tests the list names.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
#: The reference environment of the fixtures: transformers 5.24.0, torch 2.13.0 (and vLLM 0.33.0).
REFERENCE = "/work/ref/vllm/bin/python"
#: The engines' site-packages, read as source files by ``engine_tables.py``.
SITES = "/work/ref/{}/lib/python3.11/site-packages"


@dataclass(frozen=True)
class Generator:
    """One generator: its script in ``tools/``, what it writes, the environment it needs, the tests that hold
    pecli to what it wrote, and the arguments it is given."""

    script: str
    writes: str
    needs: str
    tests: str
    python: str = REFERENCE
    arguments: tuple[str, ...] = ()


GENERATORS = {
    "type-defaults": Generator(
        "type_defaults.py", "pecli/models/sources/type_defaults.json, tests/fixtures/models/defaults/forms.json",
        "transformers 5.24.0 and torch 2.13.0", "tests/test_config_class_defaults.py tests/test_model_fixtures_rope.py"),
    "partial-rotary": Generator(
        "partial_rotary.py", "pecli/models/partial_rotary.json", "transformers 5.24.0 and torch 2.13.0",
        "tests/test_partial_rotary.py"),
    "engine-tables": Generator(
        "engine_tables.py", "pecli/engines/{vllm,sglang}_models.py, mlx_args.py, transformers_archs.py",
        "transformers 5.24.0; the site-packages of vLLM 0.33.0, SGLang 0.5.23 and mlx-lm 0.32.2",
        "tests/test_engines.py tests/test_engines_fixtures.py",
        arguments=tuple(arg for engine in ("vllm", "sglang", "mlx") for arg in (f"--{engine}", SITES.format(engine)))),
}


def listing() -> str:
    rows = []
    for name, generator in GENERATORS.items():
        rows.append(f"{name}: tools/{generator.script}\n  writes {generator.writes}\n  needs  {generator.needs}"
                    f" ({generator.python})\n  then   python -m pytest {generator.tests}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", nargs="?", choices=[*sorted(GENERATORS), "all"],
                        help="the generator to run (all: every one, in the order listed)")
    parser.add_argument("--list", action="store_true", help="list the generators and the environment each needs")
    parser.add_argument("--python", help="the interpreter to run it with (default: its reference environment's)")
    args = parser.parse_args(argv)
    if args.list or args.name is None:
        print(listing())
        return 0
    for name in GENERATORS if args.name == "all" else [args.name]:
        code = run(GENERATORS[name], args.python)
        if code:
            return code
    return 0


def run(generator: Generator, python: str | None = None) -> int:
    """Run ``generator`` with ``python`` (default: its reference environment's); its exit code."""
    python = python or generator.python
    if not Path(python).exists():
        print(f"regenerate: {python} does not exist: make the environment its generator's docstring describes "
              f"(tools/{generator.script}), or give --python", file=sys.stderr)
        return 2
    return subprocess.run([python, str(TOOLS / generator.script), *generator.arguments], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())

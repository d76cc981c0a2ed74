"""The house's floors: the core (schemes, analyses, models, renderers) never reaches up into the request
pipeline (``pecli.config``) or the command line (``pecli.cli``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "pecli"
CORE = ("schemes", "analysis", "models", "render", "verification", "extend", "wavelengths", "weights", "comparison")


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code (lazy imports too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("floor", CORE)
def test_the_core_does_not_import_the_pipeline_or_the_command_line(floor):
    reaching = {str(path.relative_to(PACKAGE)): sorted(n for n in imported(path) if n == "pecli.config" or n.startswith("pecli.cli"))
                for path in (PACKAGE / floor).rglob("*.py")}
    assert {path: names for path, names in reaching.items() if names} == {}


def test_models_do_not_reach_up_into_the_analyses():
    """``models/`` reads checkpoints and configs; the analyses read models (``analysis/layout.py`` makes
    the layout check's result from ``weights/usage.py``'s measurement), never the other way round."""
    reaching = {str(path.relative_to(PACKAGE)): sorted(n for n in imported(path) if n.startswith("pecli.analysis"))
                for path in (PACKAGE / "models").rglob("*.py")}
    assert {path: names for path, names in reaching.items() if names} == {}


def test_no_package_hides_a_name_of_the_library():
    """Importing a submodule binds its package on ``pecli``: a package named like a library function
    (``pecli.verify``, ``pecli.compare``, ``pecli.spectrum``) would replace the function once imported."""
    import pecli

    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert (packages | modules) & (set(pecli._EXPORTS) | {name for name in vars(pecli) if callable(getattr(pecli, name))}) == set()

"""pecli's own source as the tests that read it see it: each module parsed once per process, and its
statements (where every ``def`` and every ``import`` is) without the expressions inside them."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Iterator

PACKAGE = Path(__file__).resolve().parents[1] / "pecli"


@functools.cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def statements(node: ast.AST) -> Iterator[ast.stmt]:
    """Every statement under ``node``, at any depth (function and class bodies, branches, handlers, cases):
    what ``ast.walk`` finds of statements, without visiting the expressions, which hold none."""
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(node, field, ()):
            if isinstance(child, ast.stmt):
                yield child
            yield from statements(child)

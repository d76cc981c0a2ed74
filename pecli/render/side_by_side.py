"""One dimension for every scheme set side by side (``pecli compare``, ``pecli plot dot-distance``).

Schemes default to different dimensions (sinusoidal 512, rope 128, integer 64), and a comparison at
different dimensions reads as a difference between the schemes: sinusoidal at d = 512 has 4× the
frequency pairs of rope at d = 128. Commands that set schemes side by side give every scheme that has
a dimension the one the user gave (``--dim``), else :data:`SIDE_BY_SIDE_DIM`, unless a scheme comes with
its own (a YAML entry's ``dim``, a model's config.json), and say so with :func:`one_dim_note`.
"""

from __future__ import annotations

from collections.abc import Iterable

#: The dimension of schemes set side by side when the user gives none: the head size of most models.
SIDE_BY_SIDE_DIM = 128


def has_dim(name: str) -> bool:
    """Whether scheme ``name`` takes a ``dim`` parameter."""
    from pecli.schemes import get_scheme_class

    return "dim" in get_scheme_class(name).parameters()


def one_dim_note(dim: int, *, given: bool, own: Iterable[str] = ()) -> str:
    """The note saying that every scheme with a dimension was set at ``dim``.

    ``given`` says whether the user gave it (``--dim``); ``own`` are the rows that kept a dimension of
    their own (a YAML entry's ``dim``, a model's config.json).
    """
    where = "--dim" if given else "the default for schemes side by side; --dim changes it"
    text = f"d = {dim} for every scheme that has a dimension ({where})"
    own = list(own)
    if own:
        text += f", except where a row sets its own: {', '.join(own)}"
    return text

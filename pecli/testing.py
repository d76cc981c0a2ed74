"""Assertions for users' own test suites: their arrays against the model's, with the bug named.

::

    from pecli.testing import assert_encoding_close, assert_rope_close

    def test_my_rope_kernel():
        cos, sin = my_kernel(positions)                       # (P, r) arrays, either layout
        assert_rope_close(cos, sin, hf_config="config.json", layer=0, positions=positions)

    def test_my_alibi():
        assert_encoding_close(hf_config="bloom/config.json", slopes=my_slopes)
"""

from __future__ import annotations

from typing import Any


def assert_encoding_close(*, hf_config: Any = None, scheme: Any = None, layer: int | None = None,
                          group: str | None = None, positions: Any = None, max_memory: Any = None,
                          **arrays: Any) -> None:
    """Raise ``AssertionError`` unless the arrays equal the reference, held as ``pecli verify`` holds
    them; the message names the causes that explain the difference (see :mod:`pecli.verification.arrays`).

    ``arrays`` are given by the names of ``pecli verify``'s options: ``cos`` and ``sin`` or ``inv_freq``
    (rope), ``slopes`` or ``bias`` (alibi), ``table`` (sinusoidal), ``buckets`` (t5). The reference is
    ``scheme`` (from ``pecli.build_scheme``), or the layer group of ``hf_config`` (a config.json path or
    dict) that ``layer`` or ``group`` selects. ``positions`` are integer position ids (default
    0 … P − 1), below 2^53 (float64 holds every whole number up to it). Arrays whose comparison would
    hold more than ``max_memory`` bytes (``"16G"``; default a quarter of RAM, as on the command line) are
    refused before any work (:func:`pecli.verification.arrays.memory_needed`: a (P, P) T5 bucket table holds
    six float64 copies, an (H, L, L) bias ten, even as a broadcast view); cos and sin are compared a block
    of rows at a time within it.

    Raises
    ------
    AssertionError
        The arrays differ from the reference (the message names the causes).
    ValueError
        Arrays or positions no reference can have (a shape that fits no layout, positions that are not
        whole numbers, from 2^53 on or of another length), or arrays over the memory budget, the message
        naming which.
    """
    from pecli import model_scheme
    from pecli.verification.arrays import verify_arrays

    if (scheme is None) == (hf_config is None):
        raise TypeError("give the reference: scheme=… or hf_config=…, one of them")
    from pecli.errors import PecliError

    from pecli.memory import memory_budget

    reference = scheme if scheme is not None else model_scheme(hf_config, layer=layer, group=group)
    try:
        report = verify_arrays(reference, positions, max_bytes=memory_budget(max_memory), **arrays)
    except PecliError as error:  # arrays or positions no reference can have: bad input, not a failed check
        raise ValueError(str(error)) from None
    if not report.match:
        where = "" if report.worst_position is None else f" at position {report.worst_position},"
        causes = "; ".join(f"{d.code}: {d.message}" for d in report.diagnosis) or "; ".join(report.notes)
        raise AssertionError(f"the arrays differ from the reference by up to {report.max_abs_error:.3g}{where} component "
                             f"{report.worst_dim} (tolerance there {report.tolerance:.3g}): {causes}")


def assert_rope_close(cos: Any, sin: Any, *, hf_config: Any = None, scheme: Any = None, layer: int | None = None,
                      group: str | None = None, positions: Any = None, max_memory: Any = None) -> None:
    """:func:`assert_encoding_close` for RoPE's ``cos`` and ``sin`` (shape (P, r) in either layout, or
    (P, r/2)), at ``positions`` (default 0 … P − 1, below 2^53)."""
    assert_encoding_close(hf_config=hf_config, scheme=scheme, layer=layer, group=group, positions=positions,
                          max_memory=max_memory, cos=cos, sin=sin)

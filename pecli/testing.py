"""Assertions for users' own test suites: their arrays against the model's, with the bug named.

::

    from pecli.testing import assert_rope_close

    def test_my_rope_kernel():
        cos, sin = my_kernel(positions)                       # (P, r) arrays, either layout
        assert_rope_close(cos, sin, hf_config="config.json", layer=0, positions=positions)
"""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_rope_close(cos: Any, sin: Any, *, hf_config: Any = None, scheme: Any = None, layer: int | None = None,
                      group: str | None = None, positions: Any = None) -> None:
    """Raise ``AssertionError`` unless ``cos`` and ``sin`` equal the reference RoPE at ``positions``
    (default 0 … P − 1), held to their dtype's precision as ``pecli verify`` holds them; the message
    names the causes that explain the difference (see :mod:`pecli.analysis.verify`).

    The reference is ``scheme`` (a :class:`~pecli.schemes.rope.RopeScheme`, e.g. from
    ``pecli.build_scheme``), or the layer group of ``hf_config`` (a config.json path or dict) that
    ``layer`` or ``group`` selects.
    """
    from pecli import model_scheme
    from pecli.analysis.verify import verify_rope

    if (scheme is None) == (hf_config is None):
        raise TypeError("give the reference: scheme=… or hf_config=…, one of them")
    cos, sin = np.asarray(cos), np.asarray(sin)
    ids = np.arange(cos.shape[0] if cos.ndim else 0) if positions is None else np.asarray(positions)
    reference = scheme if scheme is not None else model_scheme(hf_config, layer=layer, group=group)
    if reference.reads_context:
        reference = reference.at_length(int(ids.max()) + 1)
    report = verify_rope(cos, sin, reference, ids)
    if not report.match:
        causes = "; ".join(f"{d.code}: {d.message}" for d in report.diagnosis) or "; ".join(report.notes)
        raise AssertionError(f"RoPE arrays differ from the reference by {report.max_abs_error:.3g} at position "
                             f"{report.worst_position}, component {report.worst_dim} (tolerance there "
                             f"{report.tolerance:.3g}): {causes}")

"""RoPE turning its pairs by −pθ (``direction negative``): nanochat's reversed rotate_half.

Known values by hand: base 10,000 and 4 components give θ = (1, 0.01); at position p the pair (1, 0) turns
to (cos pθ, −sin pθ). transformers 5.24.0's nanochat (``modeling_nanochat.py:167-171``) computes
``q·cos + rotate_half(q)·sin`` with ``rotate_half(x) = cat(x2, −x1)`` and the caches of +pθ: written out
below in NumPy, independently of pecli. mlx-lm's own numbers are in ``tests/fixtures/engines/mlx`` and
transformers' in ``tests/fixtures/models/rope/nanochat.json`` (held by their own tests).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pecli.schemes.build import build_scheme
from pecli.verification.rope import verify_rope

ROOT = Path(__file__).parent.parent


def nanochat_rotate(q: np.ndarray, positions: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """transformers' nanochat apply_rotary_pos_emb on rows ``q`` (half layout, full head)."""
    d = q.shape[-1]
    inv_freq = base ** (-np.arange(0, d, 2) / d)
    angles = np.outer(positions, inv_freq)
    cos, sin = np.cos(np.concatenate([angles, angles], 1)), np.sin(np.concatenate([angles, angles], 1))
    x1, x2 = q[:, : d // 2], q[:, d // 2 :]
    return q * cos + np.concatenate([x2, -x1], 1) * sin


def test_the_pairs_turn_by_minus_p_theta():
    scheme = build_scheme("rope", {"dim": 4, "direction": "negative"})
    rows = scheme.encode([0, 1, 3])
    expected = [[1, 1, 0, 0], [math.cos(1), math.cos(0.01), -math.sin(1), -math.sin(0.01)],
                [math.cos(3), math.cos(0.03), -math.sin(3), -math.sin(0.03)]]
    np.testing.assert_allclose(rows, expected, rtol=0, atol=1e-15)
    cos, sin = scheme.cos_sin([3])
    np.testing.assert_allclose(sin, [[-math.sin(3), -math.sin(0.03)] * 2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(cos, [[math.cos(3), math.cos(0.03)] * 2], rtol=0, atol=1e-15)


def test_apply_is_nanochats_reversed_rotate_half():
    rng = np.random.default_rng(0)
    q, positions = rng.normal(size=(5, 16)), np.array([0, 1, 7, 100, 4095])
    scheme = build_scheme("rope", {"dim": 16, "direction": "negative"})
    np.testing.assert_allclose(scheme.apply(q, positions), nanochat_rotate(q, positions), rtol=0, atol=1e-12)


def test_a_model_config_reads_as_negative(tmp_path):
    from pecli.config import resolve

    config = json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / "nanochat.json").read_text())["config"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec = resolve({"hf_config": str(path), "length": 8})
    assert spec.scheme.direction == "negative" and spec.group.sources_of("direction")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_encode_streams_the_negated_sines(invoke, tmp_path, dtype):
    out = tmp_path / "e.npz"
    result = invoke("encode", "--scheme", "rope", "--dim", "8", "--direction", "negative", "-L", "3000", "--dtype", dtype,
                    "-o", out, "--parts", "cos,sin")
    assert result.exit_code == 0, result.stderr
    arrays = np.load(out)
    angles = np.outer(np.arange(3000), 10000.0 ** (-np.arange(0, 8, 2) / 8))
    tol = 1e-12 if dtype == "float64" else 2.0 ** -23
    np.testing.assert_allclose(arrays["sin"], -np.sin(np.concatenate([angles, angles], 1)), rtol=0, atol=tol)
    np.testing.assert_allclose(arrays["cos"], np.cos(np.concatenate([angles, angles], 1)), rtol=0, atol=tol)


def test_scores_do_not_depend_on_the_direction():
    # (R_m u)·(R_n u) = 2 Σ cos((n − m)θ_i) whichever way the pairs turn
    plus, minus = build_scheme("rope", {"dim": 8}), build_scheme("rope", {"dim": 8, "direction": "negative"})
    m, n = np.array([0, 5, 17]), np.array([3, 5, 2])
    np.testing.assert_allclose(minus.score(m, n), plus.score(m, n), rtol=0, atol=1e-12)


def test_verify_holds_the_arrays_to_the_direction():
    scheme = build_scheme("rope", {"dim": 8, "direction": "negative"})
    positions = np.arange(64)
    angles = np.outer(positions, scheme.inv_freq)
    cos = np.cos(np.concatenate([angles, angles], 1))
    sin = np.sin(np.concatenate([angles, angles], 1))
    assert verify_rope(cos, -sin, scheme, positions).match
    report = verify_rope(cos, sin, scheme, positions)  # the caches of +pθ, as transformers' nanochat keeps them
    assert not report.match and [d.code for d in report.diagnosis] == ["sin-sign"]
    assert "reverses rotate_half" in report.diagnosis[0].message


def test_a_wrong_direction_is_refused(invoke):
    result = invoke("encode", "--scheme", "rope", "--dim", "8", "--direction", "backwards", "-L", "4")
    assert result.exit_code == 2 and "direction" in result.stderr and len(result.stderr.strip().splitlines()) == 1

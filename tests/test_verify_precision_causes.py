"""verify names `precision` for angles formed in float32 and rounded once to bfloat16 or float16 (the
pipeline that casts its ``freqs`` to the model's dtype before cos and sin), planted here by hand."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.dtypes import cast


def rounded_once(dtype: str, positions: int = 4096, dim: int = 64):
    """cos and sin (half layout, float32) of angles p·θ_i formed in float32, then cast to ``dtype`` once."""
    theta = 10000.0 ** (-np.arange(0, dim, 2) / dim)
    angles = np.outer(np.arange(positions, dtype=np.float32), theta.astype(np.float32)).astype(np.float32)
    angles = cast(angles, dtype).astype(np.float32)
    emb = np.concatenate([angles, angles], axis=1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_angles_rounded_once_are_named_precision(dtype):
    rope = pecli.build_scheme("rope", {"dim": 64, "base": 10000})
    cos, sin = rounded_once(dtype)
    report = pecli.verify(rope, cos=cos, sin=sin)
    assert not report.match
    assert [d.code for d in report.diagnosis] == ["precision"]
    assert f"rounded once to {dtype}" in report.diagnosis[0].message


def test_the_command_names_it_too(invoke, tmp_path):
    cos, sin = rounded_once("bfloat16")
    np.save(tmp_path / "cos.npy", cos)
    np.save(tmp_path / "sin.npy", sin)
    result = invoke("verify", "--dim", "64", "--cos", tmp_path / "cos.npy", "--sin", tmp_path / "sin.npy", "--json")
    assert result.exit_code == 1
    import json

    assert [d["code"] for d in json.loads(result.stdout)["diagnosis"]] == ["precision"]

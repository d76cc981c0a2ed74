"""`pecli check extrapolation --strict` with RoPE context-extension scalings (issue 4).

Setting of every test: d = 128, base 10000, trained on T = 4096 positions, tested on L = 16384, so a
factor of 4 covers L/T. Pre-training used θ_i = 10000^(−2i/128); a pair has seen every angle when its
wavelength 2π/θ_i fits in T, i.e. for i <= 45 (2π·10000^(90/128) = 4,071 ≤ 4096 < 4,711 at i = 46).
A pair is out of distribution when its largest test angle (L − 1)·θ'_i exceeds T·θ_i.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pecli.analysis.extrapolation import angle_ranges
from pecli.cli import app
from pecli.config import build_scheme

ENV = {"NO_COLOR": "1", "COLUMNS": "120"}
BASE_ARGS = ("check", "extrapolation", "--scheme", "rope", "--dim", "128", "--length", "16384",
             "--train-length", "4096", "--strict", "--json")


def check(*scaling: str):
    result = CliRunner().invoke(app, [*BASE_ARGS, *scaling], env=ENV)
    document = json.loads(result.stdout)
    return result.exit_code, _figures(document)


def _figures(document: dict) -> dict:
    results = document.get("results", [document])
    return results[0]["figures"]


def test_plain_rope_fails_with_the_pairs_past_the_training_length():
    # Pairs 46 … 63 (18 of 64) have wavelengths beyond T: (L − 1)θ_i = 16383·θ_i > 4096·θ_i.
    code, figures = check()
    assert code == 1
    assert figures["unseen_angle_pairs"] == 18
    assert figures["first_unseen_pair"] == 46


@pytest.mark.parametrize(
    "scaling",
    [
        # Position interpolation: θ/4, so (L − 1)·θ/4 = 4095.75·θ ≤ 4096·θ for every pair.
        ("--scaling", "linear", "--factor", "4"),
        # YaRN: every pair with fewer than beta_slow = 1 turn in 4096 tokens (λ > 4096, i >= 46) is
        # interpolated as θ/4; the others turned fully in training.
        ("--scaling", "yarn", "--factor", "4", "--original-max-position", "4096"),
        # Llama 3: λ > 4096/low_freq_factor = 4096 → θ/4; below, smoothed or kept, with λ ≤ 4096.
        ("--scaling", "llama3", "--factor", "4", "--original-max-position", "4096"),
    ],
)
def test_a_factor_covering_l_over_t_passes_strict(scaling):
    code, figures = check(*scaling)
    assert code == 0, figures
    assert figures["unseen_angle_pairs"] == 0


def test_ntk_aware_scaling_leaves_middle_pairs_out_of_distribution():
    # NTK-aware: base' = 10000·4^(128/126), so θ'_i = θ_i·4^(−2i/126): only the last pair (i = 63) is
    # divided by the full factor 4. Pair 62 gets θ/4^(124/126) = θ/3.91 and reaches 16383/3.91 = 4190
    # positions' worth of angle > 4096: pairs 46 … 62 (17) stay unseen. The issue expected NTK to pass;
    # measured, it does not at a factor of exactly L/T.
    code, figures = check("--scaling", "ntk", "--factor", "4")
    assert code == 1
    assert figures["unseen_angle_pairs"] == 17
    assert figures["first_unseen_pair"] == 46


def test_too_small_a_factor_still_fails():
    # Linear by 2 covers only 8192 positions: (L − 1)·θ/2 = 8191.5·θ > 4096·θ for i >= 46.
    code, figures = check("--scaling", "linear", "--factor", "2")
    assert code == 1
    assert figures["unseen_angle_pairs"] == 18


def test_training_angles_come_from_the_unscaled_frequencies():
    scaled = build_scheme("rope", {"dim": 8, "scaling": "linear", "factor": 2.0})
    ranges = angle_ranges(scaled, 100, 200, train_scheme=scaled.without_extension())
    # Pair 0: θ = 1 unscaled; training reached 99 rad, the test 199/2 = 99.5 rad with θ' = 1/2.
    assert ranges.train_max_angle[0] == pytest.approx(99.0)
    assert ranges.test_max_angle[0] == pytest.approx(99.5)
    # Unscaled: θ = 10000^(−2i/8) = 1, 0.1, 0.01, 0.001.
    assert scaled.without_extension().scaling == "none"
    assert scaled.without_extension().inv_freq == pytest.approx([1, 0.1, 0.01, 0.001])


def test_a_model_config_defaults_to_its_own_lengths():
    # Llama 3.1: max_position_embeddings 131072 is L, original_max_position_embeddings 8192 is T.
    # llama3 divides the low frequencies by 8, not the 16 = 131072/8192 the context needs: the worst
    # pair goes about 2× past its training range; without the scaling, 16×.
    from pathlib import Path

    llama = str(Path(__file__).resolve().parent.parent / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json")
    for extra, overshoot in (((), 2.0), (("--set", "rope_scaling=null", "-T", "8192"), 16.0)):
        result = CliRunner().invoke(app, ["check", "extrapolation", "--hf-config", llama, *extra, "--json"], env=ENV)
        document = json.loads(result.stdout)
        figures = document["results"][0]["figures"]
        assert document["length"] == 131072 and figures["train_length"] == 8192
        assert figures["largest_angle_overshoot"] == pytest.approx(overshoot, rel=1e-3)

"""`pecli wavelengths` and the spectrum analysis: values from the papers and worked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from pecli.wavelengths.bound_search import long_term_decay
from pecli.wavelengths.spectrum import critical_dimension, spectrum
from pecli.cli import app
from pecli.config import build_scheme

HF = Path(__file__).resolve().parent.parent / "sample_configs" / "hf"
ENV = {"NO_COLOR": "1", "COLUMNS": "120"}


def run(*args: str):
    return CliRunner().invoke(app, ["wavelengths", *args], env=ENV)


def run_json(*args: str) -> dict:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- the literature ----------------------------------------------------------------------------------
def test_critical_dimension_of_llama2_is_92():
    # Liu et al. 2023, section 3.2: for LLaMA 2 (base 10000, d = 128, T = 4096) the critical dimension
    # is 92 = 2·⌈64·log_10000(4096/2π)⌉ = 2·⌈64·0.70357⌉ = 2·46.
    rope = build_scheme("rope", {"dim": 128, "base": 10000})
    assert critical_dimension(rope.inv_freq, 4096) == 92
    document = run_json("--scheme", "rope", "--dim", "128", "--context", "4096", "--train-length", "4096")
    assert document["summary"]["critical_dimension"] == 92
    assert document["summary"]["pairs_not_completed_in_training"] == 64 - 46


# -- the table -----------------------------------------------------------------------------------------
def test_sinusoidal_wavelengths_run_from_2pi_to_about_2pi_base():
    # Fleetwood and EulerBlind (docs/references.md): λ_i = 2π·10000^(2i/d), from 2π (i = 0) to 2π·10000^((d−2)/d) ≈ 2π·10000 = 62,832.
    document = run_json("--scheme", "sinusoidal", "--dim", "512", "--context", "1000")
    summary = document["summary"]
    assert summary["smallest_wavelength"] == pytest.approx(2 * math.pi)
    assert summary["largest_wavelength"] == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert 60_000 < summary["theoretical_context_limit"] < 62_832
    pair = document["pairs"][1]
    assert pair["inv_freq"] == pytest.approx(10000 ** (-2 / 512))
    assert pair["rotations"] == pytest.approx(1000 * 10000 ** (-2 / 512) / (2 * math.pi))


def test_llama3_scaling_per_pair():
    # Llama 3.1: original 8192, factor 8, low 1, high 4 → wavelengths below 8192/4 = 2048 unchanged,
    # above 8192/1 divided by 8, in between smoothed.
    document = run_json("--hf-config", str(HF / "meta-llama--llama-3.1-8b.json"), "--context", "131072")
    assert document["train_length"] == 8192
    for pair in document["pairs"]:
        original_wavelength = 2 * math.pi / pair["original_inv_freq"]
        if original_wavelength < 2048:
            assert pair["regime"] == "unchanged" and pair["ratio"] == pytest.approx(1.0)
        elif original_wavelength > 8192:
            assert pair["regime"] == "divided" and pair["ratio"] == pytest.approx(1 / 8)
        else:
            assert pair["regime"] == "smoothed" and 1 / 8 < pair["ratio"] < 1
    assert document["summary"]["attention_scaling"] == pytest.approx(1.0)
    assert document["params"]["base"] == 500000


def test_yarn_attention_factor_both_conventions():
    # YaRN: 0.1·ln(s) + 1 → s = 4: 1.138629, s = 32: 1.346574.
    for factor, expected in ((4, 1.0 + 0.1 * math.log(4)), (32, 1.0 + 0.1 * math.log(32))):
        document = run_json("--scheme", "rope", "--scaling", "yarn", "--factor", str(factor),
                            "--original-max-position", "4096", "--context", "8192")
        assert document["summary"]["attention_scaling"] == pytest.approx(expected)
    # DeepSeek style (mscale = mscale_all_dim = 0.707): get_mscale(40, 0.707)/get_mscale(40, 0.707) = 1.
    document = run_json("--hf-config", str(HF / "deepseek-ai--deepseek-coder-v2-lite-base.json"), "--context", "8192")
    assert document["summary"]["attention_scaling"] == pytest.approx(1.0)
    assert document["summary"]["scaling"] == "yarn"


def test_dynamic_base_grows_with_length():
    # b' = b·(s·L'/L − (s − 1))^(d/(d−2)); s = 4, L = 4096, d = 128:
    # L' = 8192 → 10000·5^(128/126) = 51,293.8; L' = 4096 → 10000 unchanged.
    document = run_json("--scheme", "rope", "--scaling", "dynamic", "--factor", "4",
                        "--max-position-embeddings", "4096", "--context", "32768")
    table = {row["length"]: row["base"] for row in document["summary"]["dynamic_base_by_length"]}
    assert table[4096] == pytest.approx(10000)
    assert table[8192] == pytest.approx(10000 * 5 ** (128 / 126))
    assert document["summary"]["effective_base"] == pytest.approx(10000 * 29 ** (128 / 126))


def test_longrope_switches_and_scales_attention():
    # Phi-3-mini-128k: original 4096, max 131072 → f = 32, attention sqrt(1 + ln 32/ln 4096) = 1.190238.
    path = str(HF / "microsoft--phi-3-mini-128k-instruct.json")
    long = run_json("--hf-config", path, "--context", "4097")  # the long factors from one past the original length
    assert long["summary"]["longrope_factors_in_use"] == "long"
    assert long["summary"]["attention_scaling"] == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))
    short = run_json("--hf-config", path, "--context", "4096")
    assert short["summary"]["longrope_factors_in_use"] == "short"
    config = json.loads(Path(path).read_text())
    first = short["pairs"][0]
    assert first["short_factor"] == pytest.approx(config["rope_scaling"]["short_factor"][0])
    assert first["inv_freq"] == pytest.approx(1 / config["rope_scaling"]["short_factor"][0])


def test_p_rope_leaves_the_lowest_frequencies_unrotated():
    # p = 0.25 of 64 pairs: the 16 highest frequencies rotate, the other 48 have θ = 0 (λ = ∞).
    document = run_json("--scheme", "rope", "--dim", "128", "--rope-fraction", "0.25", "--context", "4096")
    regimes = [pair["regime"] for pair in document["pairs"]]
    assert regimes[:16] == ["unchanged"] * 16
    assert regimes[16:] == ["not rotated (p-RoPE)"] * 48
    assert document["pairs"][16]["wavelength"] is None  # ∞ is null in JSON
    assert document["summary"]["largest_wavelength"] == pytest.approx(2 * math.pi * 10000 ** (30 / 128))


def test_partial_rotary_exponent_runs_over_the_rotated_dimension():
    # pythia-160m: head dim 64, rotary_pct 0.25 → 16 rotated components, 8 pairs, θ_i = 10000^(−2i/16).
    document = run_json("--hf-config", str(HF / "eleutherai--pythia-160m.json"))
    assert len(document["pairs"]) == 8
    assert document["pairs"][1]["inv_freq"] == pytest.approx(10000 ** (-2 / 16))


def test_target_context_suggests_a_base():
    document = run_json("--scheme", "rope", "--dim", "128", "--target-context", "1024")
    assert document["suggested_base"]["smallest_base"] == pytest.approx(4.3e3, rel=0.02)


def test_out_writes_the_final_inverse_frequencies(tmp_path):
    target = tmp_path / "inv_freq.npy"
    result = run("--scheme", "rope", "--dim", "64", "--partial-rotary-factor", "0.5",
                 "--scaling", "linear", "--factor", "2", "--out", str(target))
    assert result.exit_code == 0, result.output
    saved = np.load(target)
    # 32 rotated components → 16 pairs, θ_i = 10000^(−2i/32) / 2.
    assert saved.dtype == np.float64 and saved.shape == (16,)
    assert saved == pytest.approx(10000.0 ** (-np.arange(0, 32, 2) / 32) / 2)
    assert run("--scheme", "rope", "--out", str(target)).exit_code == 2  # no overwrite without --force


def test_table_output_names_the_bound():
    result = run("--scheme", "rope", "--dim", "128", "--base", "10000", "--context", "8192")
    assert result.exit_code == 0
    text = " ".join(result.stdout.replace("│", " ").split())
    assert "Men et al. 2024" in text and "does not meet it" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--scheme", "alibi"), "wavelengths needs a scheme that has frequency pairs"),
        (("--scheme", "rope", "--scaling", "yarn"), "factor"),
        (("--scheme", "rope", "--scaling", "yarn", "--factor", "0.5"), "factor"),
        (("--scheme", "rope", "--scaling", "yarn", "--factor", "4", "--beta-fast", "1", "--beta-slow", "2"), "beta_fast"),
        (("--hf-config", str(HF / "openai-community--gpt2.json")), "--weights"),
        (("--scheme", "rope", "--set", "rope_scaling={rope_type: xpos}"), "unknown RoPE scaling type 'xpos'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_spectrum_of_sinusoidal_and_rope_agree():
    # The same frequencies: sinusoidal and unscaled rope with equal d and base share every θ_i.
    sinusoidal = spectrum(build_scheme("sinusoidal", {"dim": 64}), context=100)
    rope = spectrum(build_scheme("rope", {"dim": 64}), context=100)
    assert [p.inv_freq for p in sinusoidal.pairs] == pytest.approx([p.inv_freq for p in rope.pairs])


def test_critical_dimension_and_full_turns_use_the_pretraining_frequencies():
    # Llama 3.1 was pre-trained on 8192 tokens with θ_i = 500000^(−2i/128): λ_i ≤ 8192 for
    # 2i/128 ≤ ln(8192/2π)/ln(500000) = 0.5466, i.e. i ≤ 34 → 35 pairs, critical dimension 70 —
    # whatever llama3's scaling later did to pairs 32 … 34.
    document = run_json("--hf-config", str(HF / "meta-llama--llama-3.1-8b.json"), "--context", "8193")
    assert document["summary"]["critical_dimension"] == 70
    turned = [pair["completed_in_training"] for pair in document["pairs"]]
    assert turned == [True] * 35 + [False] * 29


def test_base_meets_bound_is_evaluated_not_compared():
    # The condition is not monotone in the base: for d = 128 and 4096 tokens the smallest passing base
    # is about 2.7e4, yet 40000 fails it (B(m) < 0 for some m ≤ 4096).
    document = run_json("--scheme", "rope", "--dim", "128", "--base", "40000", "--context", "4096")
    bound = document["summary"]["base_lower_bound"]
    assert bound["smallest_base"] < 40000 < bound["every_base_above"]
    assert document["summary"]["base_meets_bound"] is False
    assert np.min(long_term_decay(40000.0, 128, 4096)) < 0


def test_no_base_satisfies_the_bound_at_d_2():
    # d = 2: B(m) = cos(m), negative at m = 2 for every base.
    document = run_json("--scheme", "rope", "--dim", "2", "--context", "100", "--target-context", "50")
    assert document["summary"]["base_lower_bound"]["smallest_base"] is None
    assert document["suggested_base"]["smallest_base"] is None


def test_dynamic_table_ends_at_the_context():
    document = run_json("--scheme", "rope", "--scaling", "dynamic", "--factor", "2",
                        "--max-position-embeddings", "4096", "--context", "9000")
    lengths = [row["length"] for row in document["summary"]["dynamic_base_by_length"]]
    assert lengths == [4096, 8192, 9000]  # doublings of the model's length, then the context itself


def test_overflowing_factor_is_bad_input():
    result = run("--scheme", "rope", "--scaling", "ntk", "--factor", "1e308")
    assert result.exit_code == 2 and "overflows float64" in result.stderr


def test_rope_parameters_block_of_transformers_v5(tmp_path):
    # transformers v5 keeps rope_theta inside rope_parameters: the base must come from there.
    config = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
              "rope_parameters": {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                  "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    document = run_json("--hf-config", str(path), "--context", "8192")
    assert document["params"]["base"] == 500000.0 and document["params"]["scaling"] == "llama3"


def test_top_level_original_length_only_for_the_types_that_use_it(tmp_path):
    # Phi-3-mini-4k ships original_max_position_embeddings 4096 at the top level with rope_scaling null.
    config = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 4096,
              "original_max_position_embeddings": 4096, "rope_scaling": None, "rope_theta": 10000.0}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    document = run_json("--hf-config", str(path))
    assert document["params"]["scaling"] == "none" and document["params"]["dim"] == 96


def test_a_models_scaling_can_be_switched_off_or_replaced():
    llama = str(HF / "meta-llama--llama-3.1-8b.json")
    off = run_json("--hf-config", llama, "--set", "rope_scaling=null", "--context", "8192")
    assert off["params"]["scaling"] == "none" and off["params"]["factor"] is None
    assert off["params"]["base"] == 500000.0
    linear = run_json("--hf-config", llama, "--scaling", "linear", "--factor", "2", "--context", "8192")
    assert (linear["params"]["scaling"], linear["params"]["factor"], linear["params"]["low_freq_factor"]) == ("linear", 2.0, None)
    assert linear["pairs"][0]["ratio"] == pytest.approx(0.5)


def test_gptj_rotary_dim_and_interleaved_layout(tmp_path):
    # GPT-J-6B: n_embd 4096 / n_head 16 = head dim 256, rotary_dim 64 → a quarter rotates, pairs (2i, 2i+1).
    config = {"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    document = run_json("--hf-config", str(path))
    params = document["params"]
    assert (params["dim"], params["partial_rotary_factor"], params["layout"]) == (256, 0.25, "interleaved")
    assert len(document["pairs"]) == 32


def test_options_wavelengths_does_not_read_are_refused(tmp_path):
    # not even an option: --help lists only what wavelengths reads
    result = run("--scheme", "rope", "--dtype", "float16")
    assert result.exit_code == 2 and "No such option: --dtype" in result.stderr
    for option in ("--dtype", "--positions", "--heads", "--buckets"):
        assert option not in run("--help").stdout
    path = tmp_path / "c.yaml"
    path.write_text("scheme: rope\npositions: 0:8\n")
    result = run("--config", str(path))
    assert result.exit_code == 2 and "positions: unknown key" in result.stderr
    result = run("--scheme", "alibi")
    assert result.exit_code == 2 and "wavelengths needs a scheme that has frequency pairs" in result.stderr


def test_switching_off_a_v5_scaling_keeps_the_models_base(tmp_path):
    config = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
              "rope_parameters": {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0,
                                  "original_max_position_embeddings": 8192}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    for key in ("rope_scaling", "rope_parameters"):
        document = run_json("--hf-config", str(path), "--set", f"{key}=null", "--context", "8192")
        assert (document["params"]["base"], document["params"]["scaling"]) == (500000.0, "none")


def test_phi3_scaling_can_be_switched_off_or_replaced():
    # Phi-3 ships its original length (4096) at the top level; it belongs to the longrope block.
    phi3 = str(HF / "microsoft--phi-3-mini-128k-instruct.json")
    off = run_json("--hf-config", phi3, "--set", "rope_scaling=null", "--context", "4096")
    assert off["params"]["scaling"] == "none" and off["params"]["original_max_position"] is None
    linear = run_json("--hf-config", phi3, "--scaling", "linear", "--factor", "2", "--context", "4096")
    assert linear["params"]["scaling"] == "linear"


def test_training_length_defaults_to_the_scalings_original_length():
    # llama3 without an original length uses Llama 3.1's 8192 (documented default): T = 8192.
    document = run_json("--scheme", "rope", "--scaling", "llama3", "--factor", "8", "--context", "32768")
    assert document["train_length"] == 8192


def test_length_is_the_context_and_defaults_to_the_models():
    llama = str(HF / "meta-llama--llama-3.1-8b.json")
    assert run_json("--hf-config", llama)["context"] == 131072
    assert run_json("--hf-config", llama, "--length", "4096")["context"] == 4096


def test_p_rope_pairs_that_never_rotate_are_not_counted_as_untrained():
    # 64 pairs, fraction 0.5: 32 rotate; with T = 4096 those with λ > 4096 among the first 32
    # (2π·10000^(2i/128) > 4096 for i >= 46) — none — so nothing is "not completed".
    document = run_json("--scheme", "rope", "--rope-fraction", "0.5", "--context", "8192", "--train-length", "4096")
    assert document["summary"]["pairs_not_completed_in_training"] == 0
    assert [p["completed_in_training"] for p in document["pairs"][32:]] == [None] * 32


def test_wavelength_report_carries_the_bound_for_rotary_schemes_only():
    from pecli.wavelengths.bound_search import BaseBound
    from pecli.wavelengths.spectrum import wavelength_report

    rope = wavelength_report(build_scheme("rope", {"dim": 16}), 256, target_context=512)
    assert isinstance(rope.spectrum.summary.base_lower_bound, BaseBound)
    assert rope.suggested_base.context == 512
    summary = rope.to_dict()["summary"]
    assert summary["scaling"] == "none" and "base_meets_bound" in summary and "theoretical_context_limit" not in summary
    sinusoidal = wavelength_report(build_scheme("sinusoidal", {"dim": 16}), 256)
    assert sinusoidal.spectrum.summary.base_lower_bound is None
    assert set(sinusoidal.to_dict()["summary"]) == {
        "pairs", "largest_wavelength", "smallest_wavelength", "attention_scaling", "theoretical_context_limit",
    }


def test_the_bound_leads_with_the_robust_figure():
    # The condition is not monotone in the base: the table leads with "every base above X passes" and
    # shows the smallest passing bases (26,952 … 26,973 for d = 128 at 4K), then what was checked above
    # them (tests/test_base_bound.py holds each named base to the direct evaluation).
    from pecli.wavelengths.spectrum import wavelength_report
    from pecli.render.wavelengths import summary_table

    table = summary_table(wavelength_report(build_scheme("rope", {"dim": 128}), 4096, None, None))
    rows = dict(zip(table.columns[0].cells, table.columns[1].cells))
    bound = next(value for key, value in rows.items() if "Men et al." in key)
    assert bound.startswith("every base above ") and "the smallest passing bases are 26,952 to 26,973; 26,974 fails, 28,629 passes again" in bound


def test_the_bound_is_kept_between_runs_and_only_for_the_same_code(tmp_path, monkeypatch):
    # The first run searches Men et al.'s bound and writes it; the next one reads it back (searching
    # again would fail here); a file written by other code is not read.
    from pecli.wavelengths import base_bound as bounds

    monkeypatch.setenv("PECLI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bounds, "KNOWN_BOUNDS", {})
    with bounds.remembered_bounds():
        first = bounds.base_lower_bound(64, 8)
    assert (tmp_path / bounds.FILE_NAME).exists()

    def refuse(*args):
        raise AssertionError("searched again")

    monkeypatch.setattr(bounds, "KNOWN_BOUNDS", {})
    monkeypatch.setattr(bounds, "search_bound", refuse)
    with bounds.remembered_bounds():
        assert bounds.base_lower_bound(64, 8) == first
    monkeypatch.setattr(bounds, "KNOWN_BOUNDS", {})
    monkeypatch.setattr(bounds, "code_key", lambda: "other code")
    with bounds.remembered_bounds(), pytest.raises(AssertionError, match="searched again"):
        bounds.base_lower_bound(64, 8)


def test_the_pairs_a_long_table_leaves_out_are_named(invoke, tmp_path):
    # d = 256: 128 pairs, 80 rows shown (0–39 and 88–127); the row between them was "…" in every column
    result = invoke("wavelengths", "--scheme", "rope", "--dim", "256")
    assert result.exit_code == 0
    assert "pairs 40–87 not shown; --json lists every pair" in " ".join(result.stdout.split())
    assert "│ 40–87 │" in result.stdout and "…" not in result.stdout

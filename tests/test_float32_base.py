"""A rotary base transformers' float32 cannot hold is refused; one it can gives its frequencies.

transformers builds ``inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))``: torch rounds the
Python float base to float32 first. The values below were printed by transformers 5.20.2's rule under torch
2.13.0+cpu (``/work/ref/vllm`` with ``PYTHONPATH=/work/ref/transformers-5.20.2``), d = 128:

- base 1e-40 (a float32 subnormal): inv_freq[1] = 4.216965675354004, inv_freq[63] = inf;
- base 1.16e-314, 1e-46 (0 in float32): inv_freq[1] = inf;
- base 1e39, 1e300 (inf in float32): inv_freq = [1, 0, 0, …];
- base 1.2e-38: inv_freq[1] = 3.9130263328552246, inv_freq[63] = 2.129638810696703e37;
- base 0.5: inv_freq[1] = 1.0108892917633057, inv_freq[63] = 1.9784560203552246;
- base 1e38: inv_freq[1] = 0.25482967495918274, inv_freq[63] = 3.924189773522282e-38.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.config import build_scheme
from pecli.errors import ConfigError

UNDER = "under float32's smallest normal number (1.18e-38): transformers computes the rotary frequencies"
PAST = "past float32's largest number (3.4e+38): transformers computes the rotary frequencies"


@pytest.mark.parametrize("base, said", [(1e-40, f"1e-40 is {UNDER}"), (1.16e-314, f"1.16e-314 is {UNDER}"),
                                        (1.1754942e-38, f"1.17549e-38 is {UNDER}"), (1e39, f"1e+39 is {PAST}"),
                                        (3.40282357e38, f"3.40282e+38 is {PAST}")])  # rounds to inf in float32
def test_a_base_float32_cannot_hold_is_refused_naming_it(run_main, base, said):
    done = run_main("encode", "--scheme", "rope", "--dim", "128", "--base", repr(base), "-L", "4", "-q")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"pecli: error: base: {said}")


@pytest.mark.parametrize("scheme, extra", [("mrope", {}), ("rope-nd", {"grid": "2,2"})])
def test_every_rotary_scheme_refuses_it(scheme, extra):
    for base in (1e-40, 1e39):
        with pytest.raises(ConfigError, match="float32's"):
            build_scheme(scheme, {"base": base, **extra})


@pytest.mark.parametrize("base, second, last", [(1.2e-38, 3.9130263328552246, 2.129638810696703e37),
                                                (0.5, 1.0108892917633057, 1.9784560203552246),
                                                (1e38, 0.25482967495918274, 3.924189773522282e-38)])
def test_a_base_float32_holds_gives_transformers_frequencies(base, second, last):
    inv_freq = build_scheme("rope", {"dim": 128, "base": base}).inv_freq
    assert np.all(np.isfinite(inv_freq)) and inv_freq[0] == 1.0
    assert inv_freq[1] == pytest.approx(second, rel=1e-6) and inv_freq[63] == pytest.approx(last, rel=1e-6)


def test_a_config_with_such_a_rope_theta_is_refused(run_main, tmp_path):
    config = {"model_type": "llama", "hidden_size": 128, "num_attention_heads": 2, "num_key_value_heads": 2,
              "num_hidden_layers": 2, "head_dim": 64, "max_position_embeddings": 4096, "rope_theta": 1e-40}
    (tmp_path / "c.json").write_text(json.dumps(config))
    done = run_main("wavelengths", "--hf-config", "c.json")
    assert done.returncode == 2 and done.stderr.startswith(f"pecli: error: base: 1e-40 is {UNDER}")


def test_a_hunyuan_alpha_that_takes_the_base_under_float32_names_alpha(run_main, tmp_path):
    # 10,000 · (1e-308)^(64/62) = 1.16e-314: a float64 number, 0 in float32 (transformers: inverse frequencies inf)
    config = {"model_type": "hunyuan_v1_dense", "head_dim": 64, "hidden_size": 1024, "num_attention_heads": 16,
              "num_key_value_heads": 16, "num_hidden_layers": 2, "max_position_embeddings": 4096,
              "intermediate_size": 2048, "vocab_size": 1000, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
              "rope_scaling": {"alpha": 1e-308, "factor": 1.0, "rope_theta": 10000.0, "type": "dynamic"}}
    (tmp_path / "hy.json").write_text(json.dumps(config))
    done = run_main("wavelengths", "--hf-config", "hy.json")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("pecli: error: rope_scaling.alpha: 1e-308 takes HunYuan's base rope_theta · "
                                  f"alpha^(d/(d − 2)) = 10000 · alpha^1.032 to 1.16016e-314, {UNDER}")


def test_a_dynamic_base_grown_past_float32_is_refused_where_it_grows(run_main):
    # transformers 5.20.2's dynamic rule, rope_theta 1e37, head_dim 8, max_position_embeddings 16, factor 1000:
    # at seq_len 4096 the base grows to 1e37 · (1000 · 4096/16 − 999)^(8/6) = 1.617e44 and inv_freq is
    # [1.0, 0.0, 0.0, 0.0]; at seq_len 16 it stays 1e37: [1.0, 5.623413401600885e-10, 3.1622776190838984e-19, …]
    args = ("wavelengths", "--scheme", "rope", "--dim", "8", "--base", "1e37", "--scaling", "dynamic", "--factor",
            "1000", "--max-position-embeddings", "16")
    grown = run_main(*args, "-L", "4096")
    assert grown.returncode == 2 and grown.stderr.startswith(
        f"pecli: error: factor: base 1e+37 with dynamic factor 1000 grows to 1.61705e+44, {PAST}")
    assert run_main(*args, "-L", "16").returncode == 0
    assert build_scheme("rope", {"dim": 8, "base": 1e37}).inv_freq[1] == pytest.approx(5.623413401600885e-10, rel=1e-6)

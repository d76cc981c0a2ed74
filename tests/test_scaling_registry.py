"""The RoPE scaling registry: one record per type, the rope scheme's parameters taken from the records,
one scaling value on the scheme, and HF config.json dimensions that must be integers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.config import build_scheme, read_hf_config
from pecli.errors import ConfigError
from pecli.params import Parameter
from pecli.schemes.rope import RopeScheme
from pecli.schemes.scaling.compute import compute_inv_freq
from pecli.schemes.scaling.keys import FACTOR
from pecli.schemes.scaling.record import ScalingType
from pecli.schemes.scaling.record import scaled_frequencies  # the helper a new rule returns through
from pecli.schemes.scaling.registry import SCALINGS, scaling_keys
from pecli.schemes.scaling.value import RopeScaling

#: ``params()`` of a rope scheme, in the order the JSON output has always listed them.
PARAMS_ORDER = [
    "dim", "base", "layout", "partial_rotary_factor", "rope_fraction", "scaling", "factor", "original_max_position",
    "max_position_embeddings", "context", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
    "truncate", "low_freq_factor", "high_freq_factor", "short_factor", "long_factor", "inv_freq", "xpos", "direction",
]


@pytest.mark.parametrize("name", list(SCALINGS))
def test_each_record_declares_its_keys(name):
    record = SCALINGS[name]
    assert record.name == name and record.summary
    assert all(isinstance(key, Parameter) and key.help for key in record.keys)
    assert set(record.required) <= set(record.key_names)
    assert set(record.defaults) <= set(record.key_names)


def test_rope_parameters_come_from_the_records():
    parameters = RopeScheme.parameters()
    assert list(parameters) == PARAMS_ORDER
    assert parameters["scaling"].choices == tuple(SCALINGS)
    # pecli's spelling, the HF key's range and help
    assert parameters["original_max_position"].minimum == 1
    assert parameters["factor"] == FACTOR
    assert list(build_scheme("rope", {"dim": 8}).params()) == PARAMS_ORDER


def test_the_scheme_holds_one_scaling_value():
    scheme = build_scheme("rope", {"dim": 8, "scaling": "yarn", "factor": 4, "original_max_position": 64})
    assert scheme.rope_scaling == RopeScaling("yarn", factor=4.0, original_max_position_embeddings=64)
    # The flat keys still read as attributes (None when not given), the type as `scaling`.
    assert (scheme.scaling, scheme.factor, scheme.original_max_position, scheme.beta_fast) == ("yarn", 4.0, 64, None)
    assert scheme.rope_scaling.value("beta_fast") == 32.0  # the type's default
    plain = scheme.without_extension()
    assert plain.rope_scaling == RopeScaling() and plain.scaling == "none" and plain.factor is None
    with pytest.raises(AttributeError):
        scheme.no_such_attribute  # noqa: B018


def test_params_round_trip_keeps_the_scaling():
    scheme = build_scheme("rope", {"dim": 8, "scaling": "longrope", "short_factor": [1, 2, 3, 4],
                                   "long_factor": [2, 3, 4, 5], "original_max_position": 16,
                                   "max_position_embeddings": 64})
    params = json.loads(json.dumps(scheme.params()))
    assert params["short_factor"] == [1.0, 2.0, 3.0, 4.0]
    assert build_scheme("rope", params) == scheme


def test_a_key_of_another_type_names_the_types_that_take_it():
    with pytest.raises(ConfigError) as error:
        build_scheme("rope", {"dim": 8, "scaling": "linear", "factor": 2, "beta_fast": 16})
    assert str(error.value).startswith("beta_fast: not used by rope_type 'linear'") and "yarn" in str(error.value)
    with pytest.raises(ConfigError) as error:
        build_scheme("rope", {"dim": 8, "low_freq_factor": 2})
    assert error.value.key == "low_freq_factor" and "llama3" in str(error.value)


def test_generic_checks_come_from_the_key_declarations():
    with pytest.raises(ConfigError) as error:
        RopeScaling("yarn", factor=4.0, beta_slow=0.0).validate(rotated_dim=8, max_position_embeddings=64)
    assert str(error.value) == "beta_slow: must be > 0, got 0.0"
    with pytest.raises(ConfigError) as error:
        RopeScaling("longrope", short_factor=(1.0, 0.0), long_factor=(1.0, 1.0)).validate(
            rotated_dim=4, max_position_embeddings=64)
    assert error.value.key == "short_factor" and "> 0" in str(error.value)


def test_beta_fast_error_through_the_cli(invoke):
    result = invoke("encode", "--scheme", "rope", "--scaling", "yarn", "--factor", "4", "--beta-fast", "1",
                    "--beta-slow", "2", "--length", "4")
    assert result.exit_code == 2
    assert result.stderr.startswith("pecli: error: beta_fast: ")


def test_a_new_type_is_one_record_and_its_function(monkeypatch):
    # "halved": θ_i / (2 s) with a key of its own; registering the record is all it takes.
    shift = Parameter("halving", float, None, "halved: extra divisor", minimum=1, default_text="2")

    def halved(scaling, model):
        return scaled_frequencies(model, scaling, model.theta / (scaling.factor * scaling.value("halving")),
                                  regimes=("scaled",) * model.pairs, factor=scaling.factor)

    record = ScalingType("halved", "θ_i / (s · halving)", (FACTOR, shift), halved, required=("factor",),
                         defaults={"halving": 2.0})
    monkeypatch.setitem(SCALINGS, "halved", record)
    assert "halving" in scaling_keys() and "halving" in RopeScheme.parameters()
    assert RopeScheme.parameters()["scaling"].choices[-1] == "halved"
    scheme = build_scheme("rope", {"dim": 4, "scaling": "halved", "factor": 2})
    np.testing.assert_allclose(scheme.inv_freq, [1 / 4, 0.01 / 4], rtol=1e-15)
    assert build_scheme("rope", {"dim": 4, "rope_scaling": {"rope_type": "halved", "factor": 2, "halving": 5}}).halving == 5.0
    out = compute_inv_freq(base=100.0, rotated_dim=4, scaling=RopeScaling("halved", factor=1.0, halving=3.0))
    np.testing.assert_allclose(out.inv_freq, [1 / 3, 0.1 / 3], rtol=1e-15)


# ------------------------------------------------------------------------------------------ config.json
@pytest.mark.parametrize("config,key", [
    ({"model_type": "llama", "hidden_size": "4096", "num_attention_heads": 32}, "hidden_size"),
    ({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": "32"}, "num_attention_heads"),
    ({"model_type": "llama", "head_dim": "128"}, "head_dim"),
    ({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": "64"}, "rotary_dim"),
    ({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 0}, "num_attention_heads"),
])
def test_hf_dimensions_must_be_integers(tmp_path, config, key):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError) as error:
        read_hf_config(str(path))
    assert error.value.key == "hf_config" and f"{key} in " in str(error.value) and "positive integer" in str(error.value)


def test_hf_string_dimension_is_one_line_through_the_cli(invoke, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": "4096", "num_attention_heads": 32}))
    result = invoke("encode", "--hf-config", path, "--length", "4")
    assert result.exit_code == 2
    assert result.stderr.startswith("pecli: error: hf_config: hidden_size in ") and len(result.stderr.splitlines()) == 1


def test_hf_integral_float_dimension_is_accepted(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096.0, "num_attention_heads": 32}))
    assert read_hf_config(str(path))["dim"] == 128


def test_a_quoted_number_in_a_scaling_block_is_refused():
    with pytest.raises(ConfigError) as error:
        RopeScaling.from_hf({"rope_type": "longrope", "short_factor": [1, "2"], "long_factor": [1, 2]})
    assert error.value.key == "short_factor"


def test_a_context_reading_type_is_one_record_too(monkeypatch):
    # A scaling whose frequencies depend on the current length says so on its record: --context (the
    # current sequence length) is then taken, as for dynamic NTK; a type without the flag refuses it.
    def stretched(scaling, model):  # the numbers do not matter here, only the record's flag
        return scaled_frequencies(model, scaling, model.theta / scaling.factor, regimes=("scaled",) * model.pairs,
                                  factor=scaling.factor)

    record = ScalingType("stretched", "θ_i / s, said to read the context", (FACTOR,), stretched, reads_context=True)
    monkeypatch.setitem(SCALINGS, "stretched", record)
    from pecli.config import resolve

    assert resolve({"scheme": "rope", "dim": 4, "scaling": "stretched", "factor": 2, "context": 64}).scheme.reads_context
    with pytest.raises(ConfigError, match="context"):
        resolve({"scheme": "rope", "dim": 4, "scaling": "linear", "factor": 2, "context": 64})

"""With a model's config, the training length is the model's own, whatever --length is."""

from __future__ import annotations

import json

from conftest import HF_CONFIGS

LLAMA2 = HF_CONFIGS / "meta-llama--llama-2-7b-hf.json"
LLAMA31 = HF_CONFIGS / "meta-llama--llama-3.1-8b.json"


def test_llama2_trains_on_its_max_position_embeddings(invoke):
    document = json.loads(invoke("wavelengths", "--hf-config", LLAMA2, "--json").stdout)
    # Liu et al. 2024: base 10000, d = 128, T = 4096 → critical dimension 92
    assert document["train_length"] == 4096
    assert document["summary"]["critical_dimension"] == 92


def test_llama31_trains_on_its_original_length_whatever_the_length(invoke):
    result = invoke("check", "extrapolation", "--hf-config", LLAMA31, "--length", "16384", "--json")
    (figures,) = [r["figures"] for r in json.loads(result.stdout)["results"]]
    assert figures["train_length"] == 8192  # original_max_position_embeddings, not L // 2
    result = invoke("check", "extrapolation", "--hf-config", LLAMA31, "--length", "4096", "--json")
    (extrapolation,) = json.loads(result.stdout)["results"]
    assert extrapolation["verdict"] == "n/a" and "trained on 8192 positions" in extrapolation["reason"]

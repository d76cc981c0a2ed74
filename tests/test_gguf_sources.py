"""Where the settings of a plan read from a GGUF file came from, on files written as ``convert_hf_to_gguf.py``
writes them (``gguf_models``): a key of the file, llama.cpp's default for a key the file leaves out, or a form
of the converter's own — Llama 3.1's llama3 block written as the ``rope_freqs`` tensor, Phi-3's longrope block
as the two factor tensors, a Llama checkpoint's q/k rows permuted. The expected keys are read off the files
the tests write (the converter's key names, in ``gguf_models``), not off pecli."""

from __future__ import annotations

import pytest

pytest.importorskip("gguf")

from gguf_models import convert, write_gguf  # noqa: E402

from pecli.models.gguf import read_gguf_plan  # noqa: E402
from pecli.models.plan import Origin  # noqa: E402

GGUF, DEFAULT, CONVERTER = Origin.GGUF, Origin.DEFAULT, Origin.CONVERTER


def said(group, setting):
    return {(s.key, s.origin, s.converted_from) for s in group.sources_of(setting)}


def test_llama3s_frequencies_name_the_tensor_the_converter_wrote_from_its_block(tmp_path):
    path, _ = convert(tmp_path, "llama31")
    group, = read_gguf_plan(path).groups
    assert said(group, "inv_freq") == {("llama.rope.freq_base", GGUF, ""), ("llama.rope.dimension_count", GGUF, ""),
                                       ("rope_freqs (tensor)", CONVERTER, "rope_scaling llama3")}
    shown = {str(s) for s in group.sources_of("inv_freq")}
    assert "inv_freq ← rope_freqs (tensor) (llama.cpp's converter from rope_scaling llama3)" in shown
    # LlamaModel.permute: llama.cpp's adjacent pairs of the permuted rows are the checkpoint's halves
    assert ("attn_q, attn_k (rows permuted)", CONVERTER, "layout half, by LlamaModel.permute") in said(group, "layout")
    assert ("general.architecture", GGUF, "") in said(group, "layout")


def test_longropes_factors_name_the_tensors_the_converter_wrote(tmp_path):
    path, _ = convert(tmp_path, "phi3")
    group, = read_gguf_plan(path).groups
    assert said(group, "rope_scaling") == {
        ("rope_factors_long (tensor)", CONVERTER, "rope_scaling longrope"),
        ("rope_factors_short (tensor)", CONVERTER, "rope_scaling longrope"),
        ("phi3.rope.scaling.original_context_length", GGUF, ""), ("phi3.rope.scaling.attn_factor", GGUF, "")}
    assert said(group, "layout") == {("general.architecture", GGUF, "")}  # Phi3 is NEOX: nothing permuted


def test_a_key_the_file_leaves_out_is_llama_cpps_default(tmp_path):
    path, _ = convert(tmp_path, "vicuna16k")  # no rope_theta in the config: the converter writes no freq_base
    group, = read_gguf_plan(path).groups
    assert said(group, "base") == {("llama.rope.freq_base", DEFAULT, "")}
    # the original context defaults to context_length, but a linear block holds none: not a source
    assert said(group, "rope_scaling") == {("llama.rope.scaling.type", GGUF, ""), ("llama.rope.scaling.factor", GGUF, "")}


def test_a_file_without_a_scaling_type_reads_linear_by_default(tmp_path):
    path = write_gguf(tmp_path / "old.gguf", "llama", {
        "block_count": 2, "context_length": 4096, "embedding_length": 256, "attention.head_count": 4,
        "rope.scale_linear": 2.0})
    group, = read_gguf_plan(path).groups
    assert said(group, "rope_scaling") == {("llama.rope.scale_linear", GGUF, ""), ("llama.rope.scaling.type", DEFAULT, "")}


def test_gemma3s_sliding_base_is_llama_cpps_default_not_the_full_layers_key(tmp_path):
    path, _ = convert(tmp_path, "gemma3")  # no rope.freq_base_swa written: llama-hparams.h's 10,000
    plan = read_gguf_plan(path)
    sliding, full = plan.group_named("sliding_attention"), plan.group_named("full_attention")
    assert sliding.options["base"] == 10000.0 and full.options["base"] == 1000000.0
    assert said(sliding, "base") == {("gemma3.rope.freq_base_swa", DEFAULT, "")}
    assert said(full, "base") == {("gemma3.rope.freq_base", GGUF, "")}


def test_alibis_heads_come_from_the_head_count(tmp_path):
    path, _ = convert(tmp_path, "bloom")
    group, = read_gguf_plan(path).groups
    assert said(group, "heads") == {("bloom.attention.head_count", GGUF, "")}

"""Hostile GGUF files and llama.cpp flags (issue 43): a FIFO is refused before it is opened for a blocking
read; a key of the wrong GGUF type is refused as llama.cpp's loader refuses it (``llama-model-loader.cpp``,
``GGUFMeta::GKV<T>::get_kv``: "key … has wrong type … but expected type …"); flag numbers are read as
``std::stof``/``std::stoi`` read them (``common/arg.cpp``), not as Python's ``float``/``int``."""

from __future__ import annotations

import os
import threading

import pytest

pytest.importorskip("gguf")

from pecli.models.c_numbers import c_prefix  # noqa: E402

BASE_KEYS = {"block_count": 2, "context_length": 4096, "embedding_length": 256, "attention.head_count": 4}


def typed_gguf(path, arch: str, add) -> str:
    """A weightless GGUF file with the base keys as UINT32 and ``add(writer)`` writing the rest, typed by hand."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in BASE_KEYS.items():
        writer.add_uint32(f"{arch}.{key}", value)
    add(writer)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


def one_line_refusal(result, needle: str) -> None:
    assert result.exit_code == 2, result.output
    assert needle in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", [["wavelengths"], ["diff", "--hf-config", "{config}"]])
def test_a_fifo_is_refused_without_blocking(invoke, tmp_path, command):
    fifo = tmp_path / "fifo.gguf"
    os.mkfifo(fifo)
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2}')
    # a writer that would unblock a blocking open, so that a regression fails instead of hanging the suite
    unblock = threading.Timer(20, lambda: open(fifo, "wb").close())
    unblock.start()
    try:
        result = invoke(*[a.format(config=config) for a in command], "--gguf", str(fifo))
    finally:
        unblock.cancel()
    one_line_refusal(result, "is not a regular file")


@pytest.mark.parametrize("add, needle", [
    (lambda w: w.add_bool("llama.rope.freq_base", True), "llama.rope.freq_base in"),
    (lambda w: w.add_string("llama.rope.freq_base", "500000"), "has type STRING"),
    (lambda w: w.add_float64("llama.rope.freq_base", 500000.0), "has type FLOAT64"),
    (lambda w: w.add_uint32("llama.rope.scaling.type", 2), "has type UINT32"),
    (lambda w: (w.add_string("llama.rope.scaling.type", "yarn"), w.add_float64("llama.rope.scaling.factor", 1e308)),
     "llama.rope.scaling.factor in"),
    (lambda w: (w.add_string("llama.rope.scaling.type", "yarn"), w.add_float64("llama.rope.scaling.factor", float("nan"))),
     "has type FLOAT64"),
    (lambda w: (w.add_string("llama.rope.scaling.type", "yarn"), w.add_float32("llama.rope.scaling.factor", float("nan"))),
     "must be a finite number, got nan"),
    (lambda w: w.add_int64("llama.rope.dimension_count", 64), "has type INT64"),
])
def test_a_key_of_the_wrong_type_is_refused_as_llama_cpp_refuses_it(invoke, tmp_path, add, needle):
    path = typed_gguf(tmp_path / "x.gguf", "llama", add)
    result = invoke("wavelengths", "--gguf", path)
    one_line_refusal(result, needle)
    if "has type" in needle:
        assert "llama.cpp's loader refuses the file" in result.stderr
    diff = invoke("diff", "--hf-config", str(tmp_path / "missing.json"), "--gguf", path)
    assert diff.exit_code == 2


def test_the_right_types_are_read(invoke, tmp_path):
    path = typed_gguf(tmp_path / "x.gguf", "llama", lambda w: w.add_float32("llama.rope.freq_base", 500000.0))
    assert invoke("wavelengths", "--gguf", path).exit_code == 0


@pytest.mark.parametrize("text, kind, number, rest", [
    # strtof/strtol in the C locale: the longest numeric prefix, ASCII digits only
    ("10000", float, 10000.0, ""), ("  1e4", float, 10000.0, ""), ("1_000", float, 1.0, "_000"),
    ("١٠٠٠٠", float, None, "١٠٠٠٠"), ("４", float, None, "４"), ("0x1p4", float, 16.0, ""), ("1e", float, 1.0, "e"),
    ("-.5", float, -0.5, ""), ("inf", float, float("inf"), ""), ("0x", float, 0.0, "x"),
    ("4096", int, 4096, ""), ("4096.0", int, 4096, ".0"), ("1e5", int, 1, "e5"), ("1k", int, 1, "k"),
    ("+7", int, 7, ""), ("٤", int, None, "٤"), ("abc", int, None, "abc"),
])
def test_the_c_prefix_of_a_flag_value(text, kind, number, rest):
    assert c_prefix(text, kind) == (number, rest)


@pytest.mark.parametrize("args, needle", [
    ("--rope-freq-base ١٠٠٠٠", "std::stof reads no number from it"),
    ("--rope-freq-base ４", "std::stof reads no number from it"),
    ("--rope-freq-base 1_000", "std::stof would read only '1' (1) and ignore '_000'"),
    ("--ctx-size 4096.0", "std::stoi would read only '4096' (4096) and ignore '.0'"),
    ("--ctx-size 1k", "std::stoi would read only '1'"),
    ("--yarn-orig-ctx ٤٠٩٦", "std::stoi reads no number"),
    ("--rope-scale 1e-39", "a float32 holds"),  # strtof underflows: stof throws out_of_range
])
def test_flag_numbers_are_read_as_llama_cpp_reads_them(invoke, tmp_path, args, needle):
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,'
                      ' "rope_theta": 16.0}')
    one_line_refusal(invoke("diff", "--hf-config", str(config), "--runtime", "llama.cpp", "--args", args), needle)


def test_a_hexadecimal_base_is_read_as_strtof_reads_it(invoke, tmp_path):
    # 0x1p4 is 16 for strtof (Python's float() refuses it): the model's base 16, so "same"
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,'
                      ' "rope_theta": 16.0}')
    assert invoke("diff", "--hf-config", str(config), "--runtime", "llama.cpp", "--args", "--rope-freq-base 0x1p4").exit_code == 0

"""Hostile and new-user retest, round five: the merged packages, sources and engines.

Every refusal is exit 2 with one line on stderr naming the problem (the contract of
``docs/exit-codes.md``), never exit 3; an error quoting a value it was given stays a readable line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LLAMA31 = str(ROOT / "sample_configs/hf/meta-llama--llama-3.1-8b.json")


def assert_refused(done, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[:500])
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pecli: error: "), done.stderr[:500]
    assert "internal error" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr[:500]


def test_llama_cpp_context_of_thousands_of_digits_is_out_of_range(run_main):
    # std::stoi throws out_of_range on anything past INT_MAX, however many digits: llama.cpp stops.
    # Python's int() refuses strings past 4,300 digits (a ValueError pecli did not expect: exit 3).
    for sign in ("", "-"):
        done = run_main("diff", "--hf-config", LLAMA31, "--runtime", "llama.cpp", "--args", f"-c {sign}{'9' * 5000}")
        assert_refused(done, "--ctx-size", "2,147,483,647")


@pytest.mark.parametrize("runtime", ["llama.cpp", "vllm", "sglang", "mlx"])
def test_a_megabyte_of_args_is_refused_before_it_is_split(run_main, runtime):
    # Linux's MAX_ARG_STRLEN (32 pages, 131,072 bytes) is the longest one word of a command line: longer
    # flags reach no engine. Splitting 1 MB as a shell does took shlex a minute (its cost grows as the square).
    done = run_main("diff", "--hf-config", LLAMA31, "--runtime", runtime, "--args", "x" * 1_000_000)
    assert_refused(done, "args", "longer than 128 KiB")


def test_a_megabyte_of_llama_cpp_flags_over_a_gguf_file_is_refused(run_main, tmp_path):
    pytest.importorskip("gguf")
    from tests.gguf_models import convert

    path, _ = convert(tmp_path, "llama31")
    done = run_main("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "-c " * 400_000)
    assert_refused(done, "args", "longer than 128 KiB")


def test_an_error_quoting_a_long_value_shows_its_ends():
    from pecli.cli import one_line

    line = one_line("args: " + repr("9" * 5000))
    assert len(line) < 300 and "(5,002 characters)" in line and line.startswith("args: '999")
    assert line.endswith("999'")


def test_an_overlong_runtime_name_is_refused_in_a_short_line(run_main):
    done = run_main("diff", "--hf-config", LLAMA31, "--runtime", "y" * 10_000, "--args", "")
    assert_refused(done, "runtime")
    assert len(done.stderr) < 2000


@pytest.mark.parametrize("args", [None, ["-c", "8192"], 8192])
def test_llama_cpp_flags_not_a_string_are_refused_as_the_other_engines_refuse_them(args):
    # vLLM's, SGLang's and MLX's records refuse them with "give the engine's flags as one string"; llama.cpp's
    # record raised TypeError (len(None)) or AttributeError (shlex on a list).
    from pecli.engines import engine
    from pecli.errors import ConfigError

    config = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2}
    with pytest.raises(ConfigError, match="one string"):
        engine("llama.cpp").run(config, args)
    with pytest.raises(ConfigError, match="one string"):
        engine("vllm").run(config, args)

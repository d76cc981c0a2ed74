"""Hostile and new-user retest, round five: the merged packages, sources and engines.

Every refusal is exit 2 with one line on stderr naming the problem (the contract of
``docs/exit-codes.md``), never exit 3; an error quoting a value it was given stays a readable line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_refused

ROOT = Path(__file__).resolve().parents[1]
LLAMA31 = str(ROOT / "sample_configs/hf/meta-llama--llama-3.1-8b.json")


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


def gemma3_gguf(path, pattern, value_type, item_type=None, window: int = 1024) -> str:
    """A weightless Gemma 3 GGUF file of 6 layers whose sliding_window_pattern is ``pattern`` written as
    ``value_type`` (``item_type``: an array's items)."""
    gguf = pytest.importorskip("gguf")
    writer = gguf.GGUFWriter(str(path), "gemma3")
    for key, value in {"block_count": 6, "context_length": 131072, "embedding_length": 2560,
                       "attention.head_count": 8, "attention.key_length": 256, "rope.dimension_count": 256,
                       "attention.sliding_window": window}.items():
        writer.add_uint32(f"gemma3.{key}", value)
    writer.add_float32("gemma3.rope.freq_base", 1e6)
    writer.add_key_value("gemma3.attention.sliding_window_pattern", pattern,
                         getattr(gguf.GGUFValueType, value_type),
                         None if item_type is None else getattr(gguf.GGUFValueType, item_type))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


#: Forms of sliding_window_pattern llama.cpp's loader refuses (llama-model-loader.cpp at 0c1e57098):
#: ``get_arr`` into ``std::array<uint32_t, 512>`` takes BOOL, UINT32 and INT32 items only ("wrong array element
#: type" for STRING, FLOAT32, UINT64; "is not a string/float32/uint32/int32/uint64 array" for INT8, INT64) and at
#: most 512 of them ("exceeds max"); ``get_key`` into a uint32_t takes a UINT32 only ("has wrong type").
REFUSED_PATTERNS = [
    (["a"] * 6, "ARRAY", "STRING", "STRING"), ([1.0] * 6, "ARRAY", "FLOAT32", "FLOAT32"),
    ([1] * 6, "ARRAY", "INT8", "INT8"), ([1] * 6, "ARRAY", "UINT64", "UINT64"), ([1] * 6, "ARRAY", "INT64", "INT64"),
    ([True] * 513, "ARRAY", "BOOL", "513"), (6, "INT32", None, "INT32"), (6, "UINT64", None, "UINT64"),
    (True, "BOOL", None, "BOOL"),
]


@pytest.mark.parametrize("pattern, value_type, item_type, named", REFUSED_PATTERNS,
                         ids=[f"{v}-{i}-{n}" for _, v, i, n in REFUSED_PATTERNS])
def test_a_sliding_pattern_llama_cpp_refuses_is_refused(run_main, tmp_path, pattern, value_type, item_type, named):
    # before: pecli dropped a string array (and read the default, every 6th layer full) or read the others'
    # values, and said "same" of a file llama.cpp does not load
    path = gemma3_gguf(tmp_path / "g.gguf", pattern, value_type, item_type)
    done = run_main("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "")
    assert_refused(done, "sliding_window_pattern", "llama.cpp's loader refuses the file", named)


@pytest.mark.parametrize("pattern, value_type, item_type, groups", [
    ([True] * 5 + [False], "ARRAY", "BOOL", 2), ([1] * 5 + [0], "ARRAY", "UINT32", 2), ([1] * 5 + [0], "ARRAY", "INT32", 2),
    ([True] * 512, "ARRAY", "BOOL", 1), ([True, False], "ARRAY", "BOOL", 2), (6, "UINT32", None, 2)])
def test_a_sliding_pattern_llama_cpp_loads_is_read(run_main, tmp_path, pattern, value_type, item_type, groups):
    # get_arr copies up to 512 items (layers past a short array's end: 0, no window); a UINT32 is the period
    path = gemma3_gguf(tmp_path / "g.gguf", pattern, value_type, item_type)
    done = run_main("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "")
    assert done.returncode == 0, done.stderr
    assert f"({groups} layer group" in done.stdout.replace("\n    ", " ")


def test_a_pattern_gemma3_does_not_read_is_not_refused(run_main, tmp_path):
    # gemma3.cpp calls load_swa_pattern only with a sliding_window above 0: the key is then never read
    path = gemma3_gguf(tmp_path / "g.gguf", ["a"] * 6, "ARRAY", "STRING", window=0)
    done = run_main("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args, named", [("", "under llama.cpp encodes"), ("   -c    8192  ", "under llama.cpp -c 8192 encodes")])
def test_a_gguf_plan_under_flags_is_named_without_gaps(run_main, tmp_path, args, named):
    path = gemma3_gguf(tmp_path / "g.gguf", [True] * 5 + [False], "ARRAY", "BOOL")
    done = run_main("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", args)
    assert done.returncode == 0, done.stderr
    assert named in " ".join(done.stdout.split())
    assert "  " not in done.stdout.replace("\n    ", " ")


def test_diff_rows_never_replace_a_file_the_run_reads(run_main, tmp_path):
    # the contract: no write over an input, --force or not. Before, -o over the @LIST file or over a GGUF
    # file named .csv replaced it with the rows.
    pytest.importorskip("gguf")
    from tests.gguf_models import convert

    first, _ = convert(tmp_path, "llama31")
    second, _ = convert(tmp_path, "phi3")
    named_csv = tmp_path / "model.csv"
    named_csv.write_bytes(Path(first).read_bytes())
    listing = tmp_path / "files.jsonl"
    listing.write_text(f"{first}\n{second}\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(listing)
    for given, out in ((["@" + str(listing)], listing), (["@" + str(listing)], link),
                       ([str(named_csv), second], named_csv)):
        before = Path(out).read_bytes()
        gguf_args = [word for g in given for word in ("--gguf", g)]
        done = run_main("diff", "--hf-config", LLAMA31, *gguf_args, "-o", str(out), "--force")
        assert_refused(done, "is an input of this command")
        assert Path(out).read_bytes() == before


@pytest.mark.parametrize("args, named", [
    (["--hf-config", LLAMA31, "--model", "org/a", "--gguf", "x.gguf"], "is compared with one model"),
    (["--model", "org/a", "--model", "org/b", "--model", "org/c"], "got 3 models"),
    (["--model", "org/a", "--runtime", "vllm", "--args", ""], "give --hf-config FILE"),
    (["--model", "org/a", "--runtime", "vllm", "--args", "--bogus"], "'--bogus' is not a vLLM flag"),
    (["--model", "org/a", "--model", "org/b", "--gguf", "x.gguf", "--runtime", "llama.cpp", "--args", ""], "--gguf")])
def test_a_diff_of_the_wrong_shape_is_refused_before_any_model_is_read(run_main, monkeypatch, args, named):
    # before: every --model was fetched from the Hub (and every config read) before the request was refused
    import pecli.models.reading as reading

    def no_reading(*given, **options):
        raise AssertionError(f"a model was read: {given}")

    monkeypatch.setattr(reading, "model_plan", no_reading)
    assert_refused(run_main("diff", *args), named)


@pytest.mark.parametrize("args", ["--rope-scaling yarn --yarn-beta-fast 0", "--rope-scaling yarn --yarn-beta-slow -0.0",
                                  "--rope-scaling yarn --rope-freq-base 1"])
def test_llama_cpp_yarn_with_a_zero_beta_or_a_base_of_one_is_refused(run_main, args):
    # YaRN's correction dimension d·ln(L/(2πβ))/(2 ln b) divides by zero for β = 0 or b = 1 (exit 3 before)
    assert_refused(run_main("diff", "--hf-config", LLAMA31, "--runtime", "llama.cpp", "--args", args),
                   "YaRN's correction range is undefined")


def test_an_override_length_no_float_holds_is_refused(run_main):
    # vLLM's derived length multiplies it by a float: int * float overflows past 1.8e308 (exit 3 before)
    huge = "1" + "0" * 400
    done = run_main("diff", "--hf-config", LLAMA31, "--runtime", "vllm", "--args",
                    "--hf-overrides '{\"max_position_embeddings\": " + huge + "}'")
    assert_refused(done, "max_position_embeddings", "a float64 holds")


def test_a_null_mscale_on_deepseek_under_sglang_is_refused(run_main):
    # SGLang's deepseek_v2.py turns any rope type into its YaRN and reads mscale with float(): None fails
    config = str(ROOT / "sample_configs/hf/deepseek-ai--deepseek-v3.json")
    done = run_main("diff", "--hf-config", config, "--runtime", "sglang", "--args",
                    "--json-model-override-args '{\"rope_scaling\": {\"rope_type\": \"linear\", \"mscale\": null, "
                    "\"factor\": 4.0}}'")
    assert_refused(done, "rope_scaling.mscale is None")


def test_llama_cpp_frequencies_driven_to_zero_are_refused_in_one_line(run_main):
    # ggml mixes θ·s back toward θ by m = ext_factor × the ramp: θs(1 − m) + θm with m = 2^63 cancels to 0 in
    # floating point (float32 in ggml too), a frequency no comparison can use; before, NumPy's divide-by-zero
    # warning took two more lines of stderr
    done = run_main("diff", "--hf-config", LLAMA31, "--runtime", "llama.cpp", "--args",
                    "--rope-scaling yarn --yarn-ext-factor 9223372036854775808")
    assert_refused(done, "reach 0 or below")

"""Hostile retest, round seven (b): HunYuan's alpha past a float, a Hub out of reach for ``--model``, ``--gguf``
addresses pecli does not read.

Every refusal is exit 2 with one line on stderr naming the problem (``docs/exit-codes.md``), never exit 3.
"""

from __future__ import annotations

import json

import pytest

from conftest import assert_refused


# -- HunYuan's ntk_alpha: base · alpha^(d/(d − 2)) ------------------------------------------------------------------
def _hunyuan(tmp_path, alpha, key="rope_parameters", kind=("rope_type", "dynamic")):
    config = {"model_type": "hunyuan_v1_dense", "head_dim": 64, "hidden_size": 1024, "num_attention_heads": 16,
              "num_key_value_heads": 16, "num_hidden_layers": 2, "max_position_embeddings": 4096,
              "intermediate_size": 2048, "vocab_size": 1000, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
              key: {"alpha": alpha, "factor": 1.0, "rope_theta": 10000.0, kind[0]: kind[1]}}
    (tmp_path / "hy.json").write_text(json.dumps(config))
    return "hy.json"


@pytest.mark.parametrize("command", [["wavelengths"], ["inspect"], ["check", "all"], ["extend", "--target", "8192"]])
def test_an_alpha_past_the_largest_float_is_named(run_main, tmp_path, command):
    # 10,000 · (1e308)^(64/62): Python's float power raises OverflowError (transformers too)
    done = run_main(*command, "--hf-config", _hunyuan(tmp_path, 1e308))
    assert_refused(done, "rope_parameters.alpha: 1e+308 takes HunYuan's base rope_theta · alpha^(d/(d − 2)) "
                         "= 10000 · alpha^1.032 past the largest float")


def test_an_alpha_that_takes_the_base_to_zero_is_named(run_main, tmp_path):
    # (1e-320)^(64/62) is under the smallest subnormal: the base is 0, its inverse frequencies infinite
    done = run_main("wavelengths", "--hf-config", _hunyuan(tmp_path, 1e-320, key="rope_scaling"))
    assert_refused(done, "rope_scaling.alpha: 1e-320 takes HunYuan's base rope_theta · alpha^(d/(d − 2)) "
                         "= 10000 · alpha^1.032 to 0, under the smallest float")


@pytest.mark.parametrize("alpha, shown", [(float("nan"), "nan"), (float("inf"), "inf"), (-1, "-1")])
def test_an_alpha_that_is_no_positive_finite_number_is_named(run_main, tmp_path, alpha, shown):
    done = run_main("wavelengths", "--hf-config", _hunyuan(tmp_path, alpha))
    assert_refused(done, f"rope_parameters: alpha must be a finite positive number (HunYuan raises the base to it), "
                         f"got {shown}")


def test_a_small_alpha_whose_base_is_a_float_is_read(run_main, tmp_path):
    # 10,000 · 0.5^(64/62) = 4,889.4 (transformers computes it: a smaller base, nothing to refuse)
    done = run_main("wavelengths", "--hf-config", _hunyuan(tmp_path, 0.5), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["params"]["base"] == pytest.approx(10000 * 0.5 ** (64 / 62), rel=1e-12)


@pytest.mark.parametrize("alpha, said", [
    (1e308, "OverflowError: (34, 'Numerical result out of range')"),
    ("abc", "TypeError: unsupported operand type(s) for ** or pow(): 'str' and 'float'"),
])
def test_mlx_failing_on_alpha_is_its_refusal(run_main, tmp_path, alpha, said):
    # mlx-lm's hunyuan_v1_dense reads alpha whatever the block's type; transformers reads it under dynamic only
    done = run_main("diff", "--runtime", "mlx", "--args", "", "--hf-config",
                    _hunyuan(tmp_path, alpha, key="rope_scaling", kind=("type", "linear")))
    assert done.returncode == 1, done.stderr
    assert said in " ".join(done.stdout.split()), done.stdout


def test_mlx_building_no_finite_base_from_alpha_is_named(run_main, tmp_path):
    done = run_main("diff", "--runtime", "mlx", "--args", "", "--hf-config",
                    _hunyuan(tmp_path, 0, key="rope_scaling", kind=("type", "linear")))
    assert_refused(done, "rope_scaling.alpha: 0: mlx-lm's DynamicNTKAlphaRoPE turns it into the base "
                         "rope_theta · alpha^(d/(d − 2)) = 0.0, not a finite positive number")


# -- --model ORG/NAME without a network ---------------------------------------------------------------------------
@pytest.fixture
def hub_closed(monkeypatch, tmp_path):
    """The Hub at a closed port of this machine (never the real network), no proxy, the cache a new folder."""
    import socket

    pytest.importorskip("huggingface_hub")
    import pecli.models.sources.hub_reach as reach

    with socket.socket() as probe:  # a port just freed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name in reach.PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    return port


def test_a_model_with_the_hub_out_of_reach_is_one_line_at_once(run_main, monkeypatch, tmp_path, hub_closed):
    import huggingface_hub.file_download as download

    def never(*args, **kwargs):
        raise AssertionError("the Hub was asked although it cannot be reached")

    monkeypatch.setattr(download, "get_hf_file_metadata", never)
    done = run_main("inspect", "--model", "org/name")
    assert_refused(done, f"model: org/name is not in the local cache ({tmp_path / 'cache'}) and the Hub "
                         f"(http://127.0.0.1:{hub_closed}) cannot be reached (Connection refused): download it when "
                         "online (hf download org/name config.json) or pass --hf-config FILE")


def test_a_cached_model_is_read_with_the_hub_out_of_reach(run_main, tmp_path, hub_closed):
    snapshot = tmp_path / "cache" / "models--org--name" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("0" * 40)
    (snapshot / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
        "max_position_embeddings": 2048, "rope_theta": 50000.0}))
    done = run_main("wavelengths", "--model", "org/name", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["params"]["base"] == 50000.0


# -- --gguf addresses pecli does not read --------------------------------------------------------------------------
FORMS = ("a local path, http(s)://HOST/PATH.gguf, hf://ORG/REPO[@REVISION]/FILE.gguf or "
         "ORG/REPO[@REVISION]:FILE.gguf")


@pytest.mark.parametrize("location, said", [
    ("http://127.0.0.1:99999/x.gguf", "gguf: http://127.0.0.1:99999/x.gguf: port 99999 is not a port number (0–65535)"),
    ("http://127.0.0.1:abc/x.gguf", "gguf: http://127.0.0.1:abc/x.gguf: port abc is not a port number (0–65535)"),
    ("http://", "gguf: http://: names no host; give http(s)://HOST/PATH.gguf"),
    ("ftp://host/x.gguf", f"gguf: ftp://host/x.gguf: pecli does not read ftp:// URLs; give {FORMS}"),
    ("S3://bucket/x.gguf", f"gguf: S3://bucket/x.gguf: pecli does not read s3:// URLs; give {FORMS}"),
    ("file:///tmp/x.gguf", f"gguf: file:///tmp/x.gguf: give the file's path itself, not a file:// URL ({FORMS})"),
])
@pytest.mark.parametrize("command", [["inspect"], ["diff", "--hf-config", "hy.json"]])
def test_a_gguf_address_pecli_does_not_read_is_named(run_main, tmp_path, location, said, command):
    _hunyuan(tmp_path, 2.0)
    assert_refused(run_main(*command, "--gguf", location), said)


def test_only_fsspecs_words_for_a_server_without_ranges_say_so():
    from pecli.models.gguf_remote import reason

    assert reason(ValueError("Port out of range 0-65535")) == "Port out of range 0-65535"
    assert reason(ValueError("The HTTP server doesn't appear to support range requests. Only reading this file "
                             "from the beginning is supported.")).startswith("the server does not serve byte ranges")


# -- --gguf without the gguf package -------------------------------------------------------------------------------
@pytest.mark.parametrize("location, said", [
    ("https://example.invalid/x.gguf", "--gguf https://example.invalid/x.gguf needs the gguf package, and a URL the "
                                       "remote extra's: pip install 'pecli[gguf,remote]'"),
    ("hf://org/repo/x.gguf", "pip install 'pecli[gguf,remote]'"),
    ("x.gguf", "--gguf needs the gguf package: pip install 'pecli[gguf]'"),
])
def test_without_gguf_a_url_is_told_both_extras(run_main, monkeypatch, location, said):
    import sys

    monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf raises ImportError
    done = run_main("inspect", "--gguf", location)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr


# -- one default length ----------------------------------------------------------------------------------------------
def test_check_options_take_the_one_default_length():
    from pecli.analysis.options import CheckOptions
    from pecli.schemes.build import DEFAULT_LENGTH

    assert CheckOptions().length == DEFAULT_LENGTH == 512


# -- metavars the reader can read ----------------------------------------------------------------------------------
PAGES = ["encode", "check", "compare", "wavelengths", "plot", "inspect", "permute", "verify", "diff", "extend", "sweep"]


@pytest.mark.parametrize("page", PAGES)
def test_no_page_shows_clicks_type_names(run_main, page):
    done = run_main(page, "--help")
    assert done.returncode == 0, done.stderr
    for leak in ("<list[", "range>", "[x>=", "[x<"):
        assert leak not in done.stdout, (page, leak)


def test_diffs_options_say_what_they_take(run_main):
    lines = {" ".join(line.strip("│ ").split()[:2]) for line in run_main("diff", "--help").stdout.splitlines()}
    assert {"--hf-config FILE", "--model ORG/NAME", "--gguf FILE", "--jobs N"} <= lines
    assert "--set KEY=VALUE" in {" ".join(line.strip("│ ").split()[:2])
                                 for line in run_main("encode", "--help").stdout.splitlines()}


def test_jobs_under_one_is_refused_in_one_line(run_main, tmp_path):
    _hunyuan(tmp_path, 2.0)
    assert_refused(run_main("diff", "--hf-config", "hy.json", "--gguf", "a.gguf", "--gguf", "b.gguf", "--jobs", "0"),
                   "jobs: must be >= 1, got 0")

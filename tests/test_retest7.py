"""Hostile retest, round seven: a Hub repository out of reach, comma-separated ``--positions``, a memory budget
under a byte, a write cut short by a full disk, a misspelled option.

Every refusal is exit 2 with one line on stderr naming the problem (``docs/exit-codes.md``), never exit 3,
quickly, and nothing half-written.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from conftest import TEST_ENV, assert_refused


# -- a Hub repository's .gguf files, without a network ------------------------------------------------------------
@pytest.fixture
def hub_without_network(monkeypatch, tmp_path):
    """huggingface_hub, whose listing must never start (it would retry for 24 s), no proxy, a model's config."""
    hub = pytest.importorskip("huggingface_hub")
    import pecli.models.sources.hub_reach as reach

    def never(*args, **kwargs):
        raise AssertionError("the Hub was asked although it cannot be reached")

    monkeypatch.setattr(hub.HfApi, "list_repo_files", never)
    for name in reach.PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example.invalid")
    config = tmp_path / "config.json"
    config.write_text(Path(__file__).resolve().parents[1].joinpath(
        "sample_configs/hf/meta-llama--llama-3.1-8b.json").read_text())
    return config


def test_a_hub_repository_whose_host_is_not_found_is_one_line_at_once(run_main, monkeypatch, hub_without_network):
    def not_found(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", not_found)
    done = run_main("diff", "--hf-config", hub_without_network, "--gguf", "hf://org/repo")
    assert_refused(done, "cannot list hf://org/repo: the Hub (https://hub.example.invalid) cannot be reached: "
                         "Name or service not known")


def test_a_hub_repository_whose_host_does_not_answer_is_refused_within_the_bound(run_main, monkeypatch,
                                                                              hub_without_network):
    import pecli.models.sources.hub_reach as reach

    released = threading.Event()

    def silent(*args, **kwargs):  # a resolver that never answers, until the test ends
        released.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", silent)
    monkeypatch.setattr(reach, "REACH_SECONDS", 0.05)
    try:
        done = run_main("diff", "--hf-config", hub_without_network, "--gguf", "hf://org/repo@main")
    finally:
        released.set()
    assert_refused(done, "cannot list hf://org/repo@main: the Hub (https://hub.example.invalid) cannot be reached: "
                         "no answer within 0.05 s")


def test_behind_a_proxy_the_hub_is_asked_through_it(run_main, monkeypatch, hub_without_network):
    import huggingface_hub

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.invalid:3128")
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: pytest.fail("the Hub's host was looked up directly"))
    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_files", lambda self, repo, revision=None: ["a.txt"])
    done = run_main("diff", "--hf-config", hub_without_network, "--gguf", "hf://org/repo")
    assert_refused(done, "hf://org/repo holds no .gguf file")


# -- --positions as its help says: a list ------------------------------------------------------------------------
def test_positions_take_comma_separated_ids(run_main, tmp_path):
    done = run_main("encode", "--scheme", "rope", "--dim", "4", "--positions", "0,5, 9", "--out", "p.npz")
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "p.npz") as saved:
        # rope, d = 4, base 10,000: θ = (1, 0.01); HF's half layout repeats cos(pθ) over the two halves
        angles = np.outer([0, 5, 9], [1.0, 0.01])
        assert saved["positions"].tolist() == [0, 5, 9]
        np.testing.assert_allclose(saved["cos"], np.cos(np.concatenate([angles, angles], axis=1)), rtol=0, atol=1e-15)


@pytest.mark.parametrize("scheme, value, said", [
    ("t5", "5", "positions: '5' is a single number, not positions: give start:stop[:step], a list such as 0,5,9, "
                "or an .npy file"),
    ("rope", "0,1,nan", "positions: must be finite numbers (no NaN or ±inf)"),
    ("rope", "0,1,1e309", "positions: must be finite numbers (no NaN or ±inf)"),
    ("t5", "0,1,2.5", "positions: must be whole numbers"),
])
def test_positions_that_are_no_list_of_ids_are_named(run_main, scheme, value, said):
    done = run_main("encode", "--scheme", scheme, "--positions", value)
    assert_refused(done, said)


def test_a_file_whose_name_has_commas_is_still_read(run_main, tmp_path):
    np.save(tmp_path / "1,2.npy", np.array([3, 4]))
    assert run_main("encode", "--scheme", "rope", "--dim", "4", "--positions", "1,2.npy").returncode == 0


# -- sizes and writes --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", ["0.5B", "0.4", "1e-4K"])
def test_a_memory_budget_under_one_byte_is_refused(run_main, size):
    assert_refused(run_main("encode", "--max-memory", size), f"max_memory: must be at least one byte, got '{size}'")


def _file_size_limit() -> None:  # in the child: writes past 64 KiB fail with EFBIG, as on a full disk
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs a file size limit")
@pytest.mark.parametrize("args, output", [
    (["encode", "--scheme", "sinusoidal", "--dim", "64", "--length", "512", "--apply", "q.npy", "--out", "out.npy"],
     "the disk is full or the file is over its size limit ("),
    (["encode", "--scheme", "rope", "--dim", "64", "--length", "4096", "--out", "out.npz"], "File too large"),
])
def test_a_write_cut_short_says_why_and_leaves_nothing(tmp_path, args, output):
    np.save(tmp_path / "q.npy", np.ones((512, 64), dtype=np.float32))
    env = {**os.environ, **TEST_ENV}
    env.pop("PECLI_DEBUG", None)
    done = subprocess.run([sys.executable, "-m", "pecli", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          preexec_fn=_file_size_limit, timeout=120)
    assert_refused(done, f"cannot write {args[-1]}: ", output)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["q.npy"]  # no temporary file, no output


def test_a_misspelled_option_is_not_offered_help(run_main):
    assert run_main("encode", "--alpha", "2").stderr == "pecli: error: No such option: --alpha\n"
    assert "(Possible options: --scale, --scheme, --set)" in run_main("encode", "--schem", "rope").stderr


# -- YAML 1.1's base 60 ------------------------------------------------------------------------------------------
def test_positions_with_a_colon_in_yaml_are_a_range_not_base_60(run_main, tmp_path):
    # YAML 1.1 reads 1:30 as 1 × 60 + 30 = 90; the user means positions 1 … 29
    (tmp_path / "pos.yaml").write_text("scheme: t5\npositions: 1:30\n")
    done = run_main("encode", "--config", "pos.yaml", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["positions"] == {"count": 29, "first": 1, "last": 29}
    done = run_main("encode", "--scheme", "t5", "--set", "positions=2:10:4", "--json")
    assert json.loads(done.stdout)["positions"] == {"count": 2, "first": 2, "last": 6}


@pytest.mark.parametrize("line, said", [("dim: 1:20", "dim: expected an integer, got '1:20'"),
                                        ("base: 1:30.5", "base: expected a number, got '1:30.5'")])
def test_a_base_60_number_in_yaml_is_refused_as_the_text_it_is(run_main, tmp_path, line, said):
    (tmp_path / "c.yaml").write_text(f"scheme: rope\n{line}\n")
    assert_refused(run_main("encode", "--config", "c.yaml"), said)


# -- verify's inputs are files -----------------------------------------------------------------------------------
@pytest.mark.parametrize("args, key, typed", [
    (["--scheme", "rope", "--dim", "8", "--inv-freq", "1,0.1,0.01,0.001"], "inv_freq", "1,0.1,0.01,0.001"),
    (["--scheme", "rope", "--dim", "8", "--inv-freq", "[1, 0.1]"], "inv_freq", "[1, 0.1]"),
    (["--scheme", "alibi", "--heads", "2", "--slopes", "0.5,0.25"], "slopes", "0.5,0.25"),
])
def test_verify_says_numbers_typed_for_a_file_are_no_file(run_main, args, key, typed):
    assert_refused(run_main("verify", *args), f"{key}: {typed!r} is no file: verify reads the array your code made, "
                                              f"saved as .npy (np.save('{key}.npy', values)) or in an .npz")


def test_verify_still_reads_a_file_named_like_a_number(run_main, tmp_path):
    np.save(tmp_path / "1", np.array([1.0, 0.01]))  # a file named "1.npy"; "1" itself is no file
    assert_refused(run_main("verify", "--scheme", "rope", "--dim", "4", "--inv-freq", "1"), "'1' is no file")
    assert run_main("verify", "--scheme", "rope", "--dim", "4", "--inv-freq", "1.npy").returncode == 0

"""GGUF files as a source of position plans: the numbers llama.cpp computes, worked out here from its
formulas; only the header and the position tensors are read; bad headers are one line and exit 2."""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")

from gguf_models import GEMMA3, LLAMA31, QWEN25_YARN, convert, llama3_rope_freqs, sparse_gguf, write_gguf  # noqa: E402


def config_file(tmp_path, config):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def inv_freqs(document):
    return np.array([pair["inv_freq"] for pair in document["pairs"]])


# GPT-J is not among them: llama.cpp does not run it (tests/test_gguf_archs.py)
@pytest.mark.parametrize("name", ["llama31", "qwen25", "phi3", "deepseek_v3", "phi2", "code_llama", "vicuna16k"])
def test_wavelengths_of_a_faithful_gguf_equal_the_configs(invoke, tmp_path, name):
    gguf_path, config = convert(tmp_path, name)
    ours = json.loads(invoke("wavelengths", "--gguf", gguf_path, "--json").stdout)
    theirs = json.loads(invoke("wavelengths", "--hf-config", config_file(tmp_path, config), "--json").stdout)
    np.testing.assert_allclose(inv_freqs(ours), inv_freqs(theirs), rtol=1e-6, atol=0)


def test_llama3_is_the_ladder_divided_by_rope_freqs(invoke, tmp_path):
    gguf_path, _ = convert(tmp_path, "llama31")
    expected = 500000.0 ** (-np.arange(0, 128, 2) / 128) / llama3_rope_freqs(LLAMA31).astype(np.float64)
    got = inv_freqs(json.loads(invoke("wavelengths", "--gguf", gguf_path, "--json").stdout))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got[40] == pytest.approx(500000.0 ** (-80 / 128) / 8, rel=1e-12)  # a long wavelength: divided by 8


def test_yarn_is_what_ggml_computes(invoke, tmp_path):
    # ggml_rope_yarn_corr_dims: d·ln(L / (2π·β)) / (2 ln base), floor/ceil, for β = 32 and 1, L = 32768, d = 128,
    # base 1e6; then θ_i·(1 − ramp_i) + θ_i/4·ramp_i with ramp_i = clip((i − low)/(high − low), 0, 1).
    gguf_path, _ = convert(tmp_path, "qwen25")
    corr = [128 * math.log(32768 / (2 * math.pi * b)) / (2 * math.log(1e6)) for b in (32, 1)]
    low, high = math.floor(corr[0]), math.ceil(corr[1])
    # 128·ln(32768/(2π·32))/ln(1e12) = 128·5.094/27.63 = 23.6 → 23; 128·ln(32768/2π)/27.63 = 39.65 → 40
    assert (low, high) == (23, 40)
    theta = 1e6 ** (-np.arange(0, 128, 2) / 128)
    ramp = np.clip((np.arange(64) - low) / (high - low), 0, 1)
    expected = theta * (1 - ramp) + theta / 4 * ramp
    document = json.loads(invoke("wavelengths", "--gguf", gguf_path, "--json").stdout)
    np.testing.assert_allclose(inv_freqs(document), expected, rtol=1e-9)
    # llama.cpp's recomputed attention factor, 0.1 ln 4 + 1, in cos and sin
    plan = json.loads(invoke("inspect", "config", "--gguf", gguf_path, "--json").stdout)
    assert plan["groups"][0]["options"]["rope_scaling"]["attention_factor"] == pytest.approx(0.1 * math.log(4) + 1)


def test_gemma3_sliding_layers_default_to_base_10000_unscaled(invoke, tmp_path):
    gguf_path, _ = convert(tmp_path, "gemma3")
    plan = json.loads(invoke("inspect", "config", "--gguf", gguf_path, "--json").stdout)
    groups = {g["name"]: g for g in plan["groups"]}
    assert groups["sliding_attention"]["layers"][:6] == [0, 1, 2, 3, 4, 6]  # layer i is full when i % 6 == 5
    assert groups["full_attention"]["layers"] == [5, 11, 17, 23, 29]
    assert groups["sliding_attention"]["options"]["base"] == 10000.0
    assert "rope_scaling" not in groups["sliding_attention"]["options"]
    assert groups["full_attention"]["options"]["rope_scaling"] == {"rope_type": "linear", "factor": 8.0}
    assert "gemma3.rope.freq_base_swa=10000" in groups["sliding_attention"]["keys_defaulted"]


def test_the_layout_is_said_in_the_checkpoints_frame(invoke, tmp_path):
    llama, _ = convert(tmp_path, "llama31")
    deepseek, _ = convert(tmp_path, "deepseek_v3")
    qwen, _ = convert(tmp_path, "qwen25")
    layouts = {path: json.loads(invoke("inspect", "config", "--gguf", path, "--json").stdout)["groups"][0]
               for path in (llama, deepseek, qwen)}
    assert layouts[llama]["options"]["layout"] == "half" and "permuted" in layouts[llama]["note"]
    assert layouts[deepseek]["options"]["layout"] == "interleaved"
    assert layouts[qwen]["options"]["layout"] == "half" and "NEOX" in layouts[qwen]["note"]


def test_bloom_reads_as_the_papers_alibi(invoke, tmp_path):
    gguf_path, _ = convert(tmp_path, "bloom")
    plan = json.loads(invoke("inspect", "config", "--gguf", gguf_path, "--json").stdout)
    assert plan["groups"][0]["options"] == {"scheme": "alibi", "heads": 16}


#: Reads a GGUF file's plan with every page of its tensor data made unreadable (``mprotect``, PROT_NONE) in
#: the memory map gguf's reader makes: a read of the data ends the child with SIGSEGV.
UNTOUCHED_DATA = """
import ctypes, mmap, sys
import numpy as np
from pecli.models.gguf_header import LocalFile, read_header

path = sys.argv[1]
with LocalFile(path) as source:
    data_start = read_header(source).data
start = -(-data_start // mmap.PAGESIZE) * mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
whole_map = np.memmap

def data_unreadable(*args, **kwargs):
    mapped = whole_map(*args, **kwargs)
    if mapped.nbytes > start and libc.mprotect(mapped.ctypes.data + start, mapped.nbytes - start, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    return mapped

np.memmap = data_unreadable
from pecli.models.gguf import read_gguf_plan

print(read_gguf_plan(path).groups[0].options["base"])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through the C library")
def test_a_ten_gigabyte_file_is_read_without_touching_its_data(tmp_path):
    # A header declaring one 50,000 × 50,000 F32 tensor (10 GB), the file extended sparsely to hold it; the
    # plan is read with the tensor's pages unreadable: touching them would end the child (SIGSEGV).
    import subprocess

    path = sparse_gguf(tmp_path)
    assert os.path.getsize(path) > 10 ** 10
    done = subprocess.run([sys.executable, "-c", UNTOUCHED_DATA, path], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert float(done.stdout) == 1e6


def _header(*fields: bytes) -> bytes:
    return b"GGUF" + struct.pack("<I", 3) + b"".join(fields)


@pytest.mark.parametrize("content, needle", [
    (_header(struct.pack("<QQ", 0, 1 << 60)), "metadata entries"),
    (_header(struct.pack("<QQ", 0, 1), struct.pack("<Q", 1 << 62)), "claims"),
    (_header(struct.pack("<QQ", 0, 1), struct.pack("<Q", 3), b"abc", struct.pack("<IIQ", 9, 8, 1 << 61)), "strings"),
    (_header(struct.pack("<QQ", 0, 1), struct.pack("<Q", 3), b"abc", struct.pack("<IIQ", 9, 6, 1 << 40)), "past the end"),
    (b"GGUF" + struct.pack("<I", 7) + bytes(16), "version 7"),
    (b"NOPE" + bytes(40), "no GGUF magic"),
])
def test_a_hostile_header_is_one_line_before_any_allocation(invoke, tmp_path, content, needle):
    path = tmp_path / "hostile.gguf"
    path.write_bytes(content + bytes(64))
    result = invoke("wavelengths", "--gguf", str(path))
    assert result.exit_code == 2 and needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_truncated_file_is_one_line(invoke, tmp_path):
    gguf_path, _ = convert(tmp_path, "llama31")
    data = Path(gguf_path).read_bytes()
    for cut in (30, len(data) // 2, len(data) - 8):
        (tmp_path / "cut.gguf").write_bytes(data[:cut])
        result = invoke("inspect", "config", "--gguf", str(tmp_path / "cut.gguf"))
        assert result.exit_code == 2 and "pecli: error: gguf:" in result.stderr, (cut, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1


def test_without_the_gguf_package_the_extra_is_named(invoke, tmp_path, monkeypatch):
    gguf_path, _ = convert(tmp_path, "phi2")
    monkeypatch.setitem(sys.modules, "gguf", None)
    result = invoke("wavelengths", "--gguf", gguf_path)
    assert result.exit_code == 2 and "pip install 'pecli[gguf]'" in result.stderr


def test_gguf_and_hf_config_together_are_refused(invoke, tmp_path):
    gguf_path, config = convert(tmp_path, "phi2")
    result = invoke("wavelengths", "--gguf", gguf_path, "--hf-config", config_file(tmp_path, config))
    assert result.exit_code == 2 and "not both" in result.stderr


def test_an_unknown_architecture_is_named(invoke, tmp_path):
    path = write_gguf(tmp_path / "x.gguf", "mamba", {"block_count": 2, "context_length": 8})
    result = invoke("wavelengths", "--gguf", path)
    assert result.exit_code == 2 and "'mamba'" in result.stderr


@pytest.mark.parametrize(("keys", "said"), [
    ({"context_length": 8}, "gguf: x.gguf has no llama.block_count"),  # llama.cpp requires it too
    ({"block_count": 1 << 20, "context_length": 8}, "gguf: llama.block_count in x.gguf is 1048576; pecli reads models "
                                                    "of at most 65,536 layers"),
])
def test_a_layer_count_missing_or_past_the_bound_is_one_line(invoke, tmp_path, keys, said):
    path = write_gguf(tmp_path / "x.gguf", "llama", keys)
    result = invoke("wavelengths", "--gguf", path)
    assert result.exit_code == 2 and said in result.stderr.replace(str(tmp_path) + "/", "")
    assert len(result.stderr.strip().splitlines()) == 1


def test_check_and_encode_take_a_gguf(invoke, tmp_path):
    gguf_path, _ = convert(tmp_path, "qwen25")
    assert invoke("check", "relativity", "--gguf", gguf_path, "--length", "64").exit_code in (0, 1)
    out = tmp_path / "e.npy"
    assert invoke("encode", "--gguf", gguf_path, "--length", "8", "--out", str(out)).exit_code == 0
    assert np.load(out).shape == (8, 128)
    assert GEMMA3 and QWEN25_YARN  # the configs the files above come from

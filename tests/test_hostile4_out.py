"""Hostile input, round four: outputs, memory, verify, the library's guards (issue 43).

Every refused case is exit 2 with one line on stderr and nothing written or overwritten (the command
line), or a ValueError naming the argument before any allocation (the library). Known values are worked
out by hand in the comments.
"""

from __future__ import annotations

import json
import math
import os
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conftest import HF_CONFIGS, assert_refused
from test_library_encode import hf_cos_sin  # the formula, written once

DEEPSEEK = HF_CONFIGS / "deepseek-ai--deepseek-v3.json"
SCOUT = HF_CONFIGS / "meta-llama--llama-4-scout-17b-16e-instruct.json"
LLAMA = HF_CONFIGS / "meta-llama--llama-3.1-8b.json"
#: DeepSeek-V3's logit scale: mscale(40, 1)² = (0.1 · ln 40 + 1)² (factor 40, mscale_all_dim 1).
DEEPSEEK_SCALE = (0.1 * math.log(40) + 1) ** 2


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# -- encode --logit-scale: written block by block ---------------------------------------------------------
def test_the_logit_scale_is_written_block_by_block(run_main, tmp_path, monkeypatch):
    from pecli import logit_scale_files

    monkeypatch.setattr(logit_scale_files, "BLOCK_POSITIONS", 1000)  # 2,500 positions: three blocks
    assert run_main("encode", "--hf-config", DEEPSEEK, "--logit-scale", "-L", "2500", "-o", "d.npy").returncode == 0
    values = np.load(tmp_path / "d.npy")
    assert values.dtype == np.float64 and values.shape == (2500,)
    np.testing.assert_allclose(values, DEEPSEEK_SCALE, rtol=1e-15)
    # Llama 4's NoPE layers: 1 + 0.1 · ln(1 + ⌊(p + 1) / 8192⌋), 1 up to p = 8190, 1 + 0.1 ln 2 from 8191
    monkeypatch.setattr(logit_scale_files, "BLOCK_POSITIONS", 4096)
    done = run_main("encode", "--hf-config", SCOUT, "--logit-scale", "-L", "20000", "-o", "s.npz")
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "s.npz") as archive:
        nope = archive["nope/logit_scale"]
        assert nope[8190] == 1 and nope[8191] == pytest.approx(1 + 0.1 * math.log(2), rel=1e-15)
        assert nope[16383] == pytest.approx(1 + 0.1 * math.log(3), rel=1e-15)
        assert (archive["chunked_attention/logit_scale"] == 1).all()
        assert json.loads(str(archive["metadata"]))["positions"] == 20000


def test_the_logit_scale_memory_is_flat_and_checked_before_work(run_main, tmp_path):
    from pecli.logit_scale_files import logit_scale_memory

    # a block of 2^18 positions: 8 B of positions, 4 float64 arrays while computing, 2 blocks per group
    assert logit_scale_memory(50_000_000, 1, ids_given=False) == (1 << 18) * 8 * (1 + 4 + 2)  # 14 MiB
    assert logit_scale_memory(150_000_000, 1, ids_given=False) == (1 << 18) * 8 * 7  # flat in the length
    assert logit_scale_memory(10, 2, ids_given=False) == 10 * 8 * (1 + 4 + 4)
    assert logit_scale_memory(1000, 1, ids_given=True) == 1000 * 8 * 7 + 8000  # given ids are held whole
    done = run_main("encode", "--hf-config", DEEPSEEK, "--logit-scale", "-L", "50000000", "-o", "big.npy",
                    "--max-memory", "8M")
    assert_refused(done, "--logit-scale needs about 14.0 MiB", "8.0 MiB")
    assert files(tmp_path) == {}


@pytest.mark.parametrize("extra, words", [
    (("--parts", "bogus"), "parts: does not apply with --logit-scale"),
    (("--parts", "cos"), "parts: does not apply with --logit-scale"),
    (("--dtype", "float16"), "dtype: does not apply with --logit-scale"),
])
def test_options_the_logit_scale_does_not_read_are_refused(run_main, tmp_path, extra, words):
    assert_refused(run_main("encode", "--hf-config", DEEPSEEK, "--logit-scale", "-L", "8", "-o", "s.npz", *extra), words)
    assert files(tmp_path) == {}


def test_an_error_is_the_only_line(run_main, tmp_path):
    # Scout's config says no_rope_layers: [] (a warning when the plan is used); the refusal comes alone.
    done = run_main("encode", "--hf-config", SCOUT, "--logit-scale", "-L", "8", "-o", "s.npy")
    assert_refused(done, "2 layer groups", ".npz")
    assert files(tmp_path) == {}
    done = run_main("encode", "--hf-config", SCOUT, "--logit-scale", "-L", "8", "-o", "s.npz")
    assert done.returncode == 0 and "warning: no_rope_layers is []" in done.stderr


# -- outputs ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ("encode", "--scheme", "rope", "--dim", "8", "-L", "4", "-o", "l.npy/"),
    ("encode", "--hf-config", DEEPSEEK, "--logit-scale", "-L", "4", "-o", "l.npy/"),
    ("wavelengths", "--scheme", "rope", "--dim", "8", "-o", "w.npy/"),
    ("extend", "--hf-config", LLAMA, "--target", "32768", "-o", "p.json/"),
    ("plot", "heatmap", "--scheme", "rope", "--dim", "8", "-L", "4", "-o", "p.png/"),
    ("sweep", "uniqueness", "--grid", "base=100,1000", "--dim", "8", "-L", "4", "-o", "s.csv/"),
    ("permute", "w.npy", "--from", "interleaved", "--to", "half", "--heads", "1", "-o", "q.npy/"),
    ("verify", "--scheme", "rope", "--dim", "8", "--cos", "c.npy", "--sin", "c.npy", "--plot", "v.png/"),
    ("sweep", "uniqueness", "--grid", "base=100,1000", "--grid", "dim=8,16", "-L", "4", "--plot", "s.png/"),
    ("encode", "--scheme", "rope", "--dim", "8", "-L", "4", "-o", "l.npy/."),  # pathlib would drop "/."
    ("wavelengths", "--scheme", "rope", "--dim", "8", "-o", "w.npy/.."),
])
def test_an_output_ending_in_a_separator_names_a_folder(run_main, tmp_path, args):
    np.save(tmp_path / "w.npy", np.ones((8, 4)))
    np.save(tmp_path / "c.npy", np.ones((4, 8)))
    before = files(tmp_path)
    assert_refused(run_main(*args), "a path ending in / (or /., /..) names a folder")
    assert files(tmp_path) == before


def _inputs(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_bytes(LLAMA.read_bytes())
    os.symlink("c.json", tmp_path / "link.json")
    os.link(tmp_path / "c.json", tmp_path / "hard.json")
    np.save(tmp_path / "x.npy", np.ones((4, 8)))
    np.save(tmp_path / "pos.npy", np.arange(4))
    np.save(tmp_path / "w.npy", np.ones((8, 4)))
    np.save(tmp_path / "inv.npy", 10000.0 ** (-np.arange(0, 8, 2) / 8))


@pytest.mark.parametrize("args, named", [
    (("extend", "--hf-config", "c.json", "--target", "32768", "-o", "c.json", "--force"), "c.json"),
    (("extend", "--hf-config", "c.json", "--target", "32768", "-o", "link.json", "--force"), "c.json"),
    (("extend", "--hf-config", "c.json", "--target", "32768", "-o", "hard.json", "--force"), "c.json"),
    (("extend", "--hf-config", "link.json", "--target", "32768", "-o", "c.json", "--force"), "link.json"),
    (("encode", "--scheme", "rope", "--dim", "8", "-L", "4", "--apply", "x.npy", "-o", "x.npy", "--force"), "x.npy"),
    (("encode", "--scheme", "rope", "--dim", "8", "--positions", "pos.npy", "-o", "pos.npy", "--force"), "pos.npy"),
    (("encode", "--scheme", "rope", "--dim", "8", "-L", "4", "--inv-freq", "inv.npy", "-o", "inv.npy", "--force"), "inv.npy"),
    (("permute", "w.npy", "--from", "interleaved", "--to", "half", "--heads", "1", "-o", "w.npy", "--force"), "w.npy"),
])
def test_no_output_overwrites_an_input(run_main, tmp_path, args, named):
    _inputs(tmp_path)
    before = files(tmp_path)
    assert_refused(run_main(*args), "is an input of this command", f"({named})")
    assert files(tmp_path) == before


def test_an_archive_member_named_as_an_input_is_that_file(tmp_path):
    from pecli.errors import PecliError
    from pecli.io import check_target, reading

    (tmp_path / "a.npz").write_bytes(b"PK")
    with reading([f"{tmp_path / 'a.npz'}:cos"]), pytest.raises(PecliError, match="is an input of this command"):
        check_target(tmp_path / "a.npz", suffixes=(".npz",), force=True)
    assert check_target(tmp_path / "b.npz", suffixes=(".npz",), force=True) == tmp_path / "b.npz"


# -- verify: archives checked as they are read --------------------------------------------------------------
def _rope_archive(path: Path, compressed: bool = False) -> None:
    # rope d = 8, base 10,000, half layout: θ_i = 10000^(−2i/8), cos/sin of p·θ over both halves
    positions = np.arange(64)[:, None]
    angles = positions * 10000.0 ** (-np.arange(0, 8, 2) / 8)
    angles = np.concatenate([angles, angles], axis=1)
    (np.savez_compressed if compressed else np.savez)(path, cos=np.cos(angles), sin=np.sin(angles))


def _flip(path: Path, member: str, at: int) -> None:
    """Flip one bit of byte ``at`` of ``member``'s stored bytes (its CRC-32 no longer matches)."""
    data = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo(member)
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26: info.header_offset + 30])
    data[info.header_offset + 30 + name_length + extra_length + at] ^= 1
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("at", [128 + 10 * 64 + 3, -5], ids=["row-10", "last-row"])
def test_verify_refuses_a_member_whose_crc_does_not_match(run_main, tmp_path, at):
    archive = tmp_path / "r.npz"
    _rope_archive(archive)
    assert run_main("verify", "--dim", "8", "--cos", archive, "--sin", archive).returncode == 0
    size = zipfile.ZipFile(archive).getinfo("cos.npy").file_size
    _flip(archive, "cos.npy", at % size)
    with pytest.raises(zipfile.BadZipFile):  # NumPy's own loader refuses it
        np.load(archive)["cos"]
    assert_refused(run_main("verify", "--dim", "8", "--cos", archive, "--sin", archive), "r.npz:cos is damaged", "CRC-32")


def test_verify_refuses_a_damaged_compressed_member(run_main, tmp_path):
    archive = tmp_path / "r.npz"
    _rope_archive(archive, compressed=True)
    _flip(archive, "cos.npy", 20)
    assert_refused(run_main("verify", "--dim", "8", "--cos", archive, "--sin", archive), "r.npz:cos is damaged")


def test_verify_refuses_a_budget_it_cannot_keep(run_main, tmp_path):
    archive = tmp_path / "r.npz"
    _rope_archive(archive)
    # cos and sin (64, 8): 24 B of ids a position (1,536 B) and the larger of the first rows (64 × 8 values
    # at 16 B: 8,192 B) and a one-row block (8 × 96 B): 9,728 B = 9.5 KiB
    done = run_main("verify", "--dim", "8", "--cos", archive, "--sin", archive, "--max-memory", "1K")
    assert_refused(done, "needs about 9.5 KiB", "budget of 1.0 KiB", "give a budget of 9.5 KiB or more")
    assert run_main("verify", "--dim", "8", "--cos", archive, "--sin", archive, "--max-memory", "9.5K").returncode == 0
    np.save(tmp_path / "t.npy", np.zeros((4, 8)))
    # a sinusoidal table (4, 8): 32 values × 8 B × 6 copies = 1,536 B = 1.5 KiB
    done = run_main("verify", "--scheme", "sinusoidal", "--dim", "8", "--table", "t.npy", "--max-memory", "1K")
    assert_refused(done, "table of shape [4, 8] needs about 1.5 KiB")


# -- the library ------------------------------------------------------------------------------------------
def test_library_comparisons_over_the_budget_are_refused_before_work():
    import pecli
    from pecli.testing import assert_encoding_close

    # 50,000² T5 buckets (a broadcast view, no memory of its own): 2.5·10⁹ values × 8 B × 6 = 111.76 GiB
    buckets = np.broadcast_to(np.zeros((1, 1), dtype=np.int64), (50000, 50000))
    with pytest.raises(ValueError, match=r"buckets of shape \[50000, 50000\] needs about 111.76 GiB.*budget of 4.00 GiB"):
        assert_encoding_close(scheme=pecli.build_scheme("t5"), buckets=buckets, max_memory="4G")
    # 8 × 30,000² ALiBi bias: 7.2·10⁹ values × 8 B × 10 = 536.44 GiB
    bias = np.broadcast_to(np.zeros((8, 1, 30000)), (8, 30000, 30000))
    with pytest.raises(ValueError, match=r"bias of shape \[8, 30000, 30000\] needs about 536.44 GiB"):
        assert_encoding_close(scheme=pecli.build_scheme("alibi", {"heads": 8}), bias=bias)


def test_positions_past_2_to_the_53_are_refused():
    import pecli
    from pecli.testing import assert_rope_close

    rope = pecli.build_scheme("rope", {"dim": 8})
    ones = np.ones((2, 8))
    with pytest.raises(ValueError, match=r"positions: 1,152,921,504,606,846,977 is not below 2\^53"):
        assert_rope_close(ones, ones, scheme=rope, positions=np.array([2**60, 2**60 + 1]))
    with pytest.raises(ValueError, match=r"positions: 9,007,199,254,740,992 is not below 2\^53"):
        assert_rope_close(ones, ones, scheme=rope, positions=np.array([2**53 - 1, 2**53]))
    # 2^53 − 1 is compared (and found to differ), not refused
    with pytest.raises(AssertionError):
        assert_rope_close(ones, ones, scheme=rope, positions=np.array([2**53 - 2, 2**53 - 1]))


def test_library_encode_of_a_range_refuses_before_listing_it():
    import pecli

    # rope d = 128 at 3·10⁷ positions: cos and sin (L, 128) float64 alone are 2 × 28.6 GiB
    with pytest.raises(ValueError, match=r"^positions: rope at 30,000,000 positions needs about .* budget of 1.00 GiB"):
        pecli.encode("rope", range(3 * 10**7), dim=128, max_memory="1G")
    small = pecli.encode("rope", range(3, 40, 5), dim=8)
    assert small.positions.tolist() == list(range(3, 40, 5)) and small.cos.shape == (8, 8)
    cos, _ = hf_cos_sin(np.arange(3, 40, 5), 8)  # the range's positions, not 0 … 7
    np.testing.assert_allclose(small.cos, cos, rtol=0, atol=1e-12)


# -- completion offers what the command accepts ---------------------------------------------------------------
def complete(monkeypatch, capsys, line: str) -> list[str]:
    from pecli.cli import run

    monkeypatch.setenv("_PECLI_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", line)
    monkeypatch.setenv("COMP_CWORD", str(len(line.split(" ")) - 1))
    with pytest.raises(SystemExit):
        run([])
    return capsys.readouterr().out.split()


@pytest.mark.parametrize("line, expected", [
    ("pecli wavelengths --scheme ", ["sinusoidal", "rope", "rope-nd", "mrope"]),  # frequency pairs
    ("pecli inspect config --scheme ", ["rope", "rope-nd", "mrope"]),
    ("pecli verify --scheme ", ["rope", "alibi", "sinusoidal", "t5", "mrope"]),
    ("pecli plot wavelengths --scheme ", ["sinusoidal", "rope"]),
    ("pecli plot similarity-2d --scheme ", ["sinusoidal-nd", "rope-nd"]),
    ("pecli plot bias --scheme ", ["relative", "t5", "alibi"]),
    # the parameters of the schemes verify takes: rope's and sinusoidal's layouts, not sinusoidal-nd's split
    ("pecli verify --layout ", ["interleaved", "half"]),
])
def test_completion_offers_the_schemes_the_command_accepts(monkeypatch, capsys, line, expected):
    assert complete(monkeypatch, capsys, line) == expected


@pytest.mark.parametrize("line, command", [
    ("pecli wavelengths --scheme ", ("wavelengths",)),
    ("pecli verify --scheme ", ("verify",)),
    ("pecli plot wavelengths --scheme ", ("plot", "wavelengths", "-o", "x.png")),
])
def test_every_scheme_offered_is_accepted_and_no_other(monkeypatch, capsys, run_main, unrendered, line, command):
    from pecli.schemes import SCHEMES

    offered = complete(monkeypatch, capsys, line)
    monkeypatch.delenv("_PECLI_COMPLETE")
    for name in SCHEMES:
        done = run_main(*command, "--scheme", name, "--force")
        refused = done.returncode == 2 and any(words in done.stderr for words in (
            "needs a scheme", "does not support scheme", "must be one of", "draws positions along a line"))
        assert refused == (name not in offered), (name, done.stderr)


def test_verify_refuses_a_member_shorter_than_its_header(run_main, tmp_path):
    import io

    # cos (64, 8) float64: a 128-byte header and 4,096 bytes of values; the member keeps 32 rows (2,176 B)
    positions = np.arange(64)[:, None]
    angles = np.concatenate([positions * 10000.0 ** (-np.arange(0, 8, 2) / 8)] * 2, axis=1)
    whole, sines = io.BytesIO(), io.BytesIO()
    np.save(whole, np.cos(angles))
    np.save(sines, np.sin(angles))
    with zipfile.ZipFile(tmp_path / "short.npz", "w") as archive:
        archive.writestr("cos.npy", whole.getvalue()[:128 + 32 * 64])
        archive.writestr("sin.npy", sines.getvalue())
    done = run_main("verify", "--dim", "8", "--cos", "short.npz", "--sin", "short.npz")
    assert_refused(done, "short.npz:cos holds 2,176 bytes, fewer than the 4,224 its header declares")


def test_compare_says_a_models_warning_only_when_it_answers(run_main, tmp_path):
    done = run_main("compare", "--hf-config", SCOUT, "--hf-config", "nosuch.json", "-L", "64")
    assert_refused(done, "nosuch.json")
    done = run_main("compare", "--hf-config", SCOUT, "--hf-config", LLAMA, "-L", "64")
    assert done.returncode == 0 and done.stderr.startswith("pecli: warning: no_rope_layers is []")


@pytest.mark.parametrize("yaml, args, words", [
    ('scheme: rope\nout: "a\\0b.npy"\n', ("encode", "-L", "4"), "--out 'a\\x00b.npy': a file name cannot hold a NUL byte"),
    ('scheme: rope\nplot: "a\\0b.png"\n', ("sweep", "uniqueness", "--grid", "base=1,2", "--grid", "dim=8,16", "-L", "4"),
     "--plot 'a\\x00b.png': a file name cannot hold a NUL byte"),
    ('scheme: rope\nout: "a\\0b.csv"\n', ("sweep", "uniqueness", "--grid", "base=1,2", "-L", "4"), "a file name cannot hold a NUL"),
    ('scheme: rope\ndim: 8\ncos: "a\\0b.npy"\nsin: "a\\0b.npy"\n', ("verify",), "cos: 'a\\x00b.npy': a file name cannot hold"),
])
def test_a_file_name_with_a_nul_byte_is_refused_before_work(run_main, tmp_path, yaml, args, words):
    # YAML spells a NUL byte ("\0"), which no command line can: it made os calls raise ValueError (exit 3)
    (tmp_path / "c.yaml").write_text(yaml)
    before = files(tmp_path)
    assert_refused(run_main(*args, "--config", "c.yaml"), words)
    assert files(tmp_path) == before

"""``--gguf URL`` / ``hf://…`` and ``diff`` over many GGUF files, against a real web server on 127.0.0.1
(``tests/gguf_server.py``: byte ranges, the bytes it sends counted, and the ways a server goes wrong).

The file served has a real Llama 3.1 8B header — 128,256 tokens in its vocabulary, ``rope_freqs`` as the
converter writes it — and a 10 GB weight tensor after it (sparse on disk). The truth each remote answer is
held to is the same file's answer read from disk; the header walk itself is held to ``gguf.GGUFReader``,
llama.cpp's own reader, on every file ``tests/gguf_models.py`` converts.
"""

from __future__ import annotations

import json
import os

import importlib.util

import numpy as np
import pytest

from gguf_models import LLAMA31, convert, realistic_gguf
from gguf_server import GgufServer

if importlib.util.find_spec("aiohttp") is None:  # found, not imported: the client loads it when a test reads
    pytest.skip("aiohttp is not installed (the remote extra installs it)", allow_module_level=True)
pytest.importorskip("gguf")

MiB = 1 << 20


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(server, folder)``: the realistic file ``real.gguf``, one with a wrong base ``wrong.gguf``, and
    ``short.gguf`` (the first 64 KiB of the real one: a header claiming more than the file holds)."""
    folder = tmp_path_factory.mktemp("served")
    real = realistic_gguf(folder / "real.gguf", merges=0)
    wrong = str(folder / "wrong.gguf")
    os.replace(convert(folder, "llama31", "base_missing")[0], wrong)
    short = folder / "short.gguf"
    with open(real, "rb") as stream:
        short.write_bytes(stream.read(64 << 10))
    (folder / "config.json").write_text(json.dumps(LLAMA31))
    server = GgufServer({"real.gguf": real, "wrong.gguf": wrong, "short.gguf": str(short)}, delay=1.0)
    yield server, folder
    server.stop()


@pytest.fixture
def server(served, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", served[0].url)  # the Hub is this server (conftest keeps the real one offline)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    served[0].reset()
    return served[0]


def test_a_url_gives_the_local_files_answer_having_fetched_the_header_and_rope_freqs_only(served, server):
    from pecli.models.gguf import read_gguf_metadata, read_gguf_plan

    folder = served[1]
    assert os.path.getsize(folder / "real.gguf") > 10 ** 10
    local = read_gguf_plan(str(folder / "real.gguf"), source="file")
    remote = read_gguf_plan(f"{server.url}/ok/real.gguf", source="file")
    assert remote == local
    assert server.sent <= 16 * MiB
    values, tensors, types = read_gguf_metadata(f"{server.url}/ok/real.gguf")
    # the bytes of rope_freqs came: Meta's llama3 divisors (1 for short wavelengths, 8 for long ones)
    assert tensors["rope_freqs"][0] == 1.0 and tensors["rope_freqs"][-1] == 8.0
    assert types["llama.rope.freq_base"] == "FLOAT32" and values["llama.rope.freq_base"] == 500000.0


def test_diff_against_a_url_is_the_diff_against_the_downloaded_file(served, server, invoke):
    config = str(served[1] / "config.json")
    local = invoke("diff", "--hf-config", config, "--gguf", str(served[1] / "real.gguf"), "--json")
    remote = invoke("diff", "--hf-config", config, "--gguf", f"{server.url}/ok/real.gguf", "--json")
    assert (local.exit_code, remote.exit_code) == (0, 0)
    assert json.loads(local.stdout)["differences"] == json.loads(remote.stdout)["differences"] == []


@pytest.mark.parametrize("where, words", [
    ("norange/real.gguf", "does not serve byte ranges"),
    ("loop/real.gguf", "redirect"),
    ("lying/real.gguf", "shorter than the"),
    ("cut/real.gguf", "cut"),
    ("slow/real.gguf", "no answer within 0.2 s"),
    ("ok/missing.gguf", "not found (HTTP 404)"),
    ("ok/short.gguf", "tokenizer.ggml.tokens claims 128,256 strings"),
], ids=["no-range", "redirect-loop", "lying-length", "truncated-body", "timeout", "404", "header-past-the-end"])
def test_a_bad_server_or_file_is_one_line_and_exit_2(served, server, invoke, monkeypatch, where, words):
    from pecli.models import gguf_remote

    if where.startswith("slow/"):  # the server answers after 1 s
        monkeypatch.setattr(gguf_remote, "TIMEOUT_SECONDS", 0.2)
    result = invoke("diff", "--hf-config", str(served[1] / "config.json"), "--gguf", f"{server.url}/{where}")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"pecli: error: gguf: ")
    assert words in result.stderr and "Traceback" not in result.stderr
    assert server.sent <= 16 * MiB


def test_the_hub_forms_read_the_repositorys_file_at_its_revision(served, server):
    from pecli.models.gguf import read_gguf_plan

    local = read_gguf_plan(str(served[1] / "real.gguf"), source="file")
    assert read_gguf_plan("hf://org/repo/real.gguf", source="file") == local
    assert read_gguf_plan("org/repo@v1:real.gguf", source="file") == local
    assert server.sent <= 2 * 16 * MiB


def test_a_collection_is_a_row_per_file_same_different_or_unreadable(served, server, invoke, tmp_path):
    listed = tmp_path / "list.txt"
    listed.write_text(f"# three files\n{server.url}/ok/real.gguf\n\n{served[1] / 'wrong.gguf'}\n"
                      f"{server.url}/ok/missing.gguf\n")
    result = invoke("diff", "--hf-config", str(served[1] / "config.json"), "--gguf", f"@{listed}", "--json")
    assert result.exit_code == 1
    rows = {row["file"].rsplit("/", 1)[-1]: row for row in json.loads(result.stdout)["rows"]}
    verdicts = [rows[name]["verdict"] for name in ("real.gguf", "wrong.gguf", "missing.gguf")]
    assert verdicts == ["same", "different", "unreadable"]
    assert "llama.rope.freq_base = absent" in rows["wrong.gguf"]["first_difference"]
    assert rows["missing.gguf"]["error"] == "not found (HTTP 404)"


def test_a_hub_repository_is_every_gguf_in_it_and_its_report_resumes(served, server, invoke, tmp_path):
    config, out = str(served[1] / "config.json"), tmp_path / "report.csv"
    first = invoke("diff", "--hf-config", config, "--gguf", "hf://org/repo", "-o", str(out), "-q")
    assert first.exit_code == 1, first.stderr
    import csv

    with out.open(newline="") as stream:
        rows = {row["file"]: row["verdict"] for row in csv.DictReader(stream)}
    assert rows == {"hf://org/repo/real.gguf": "same", "hf://org/repo/short.gguf": "unreadable",
                    "hf://org/repo/wrong.gguf": "different"}
    server.reset()
    again = invoke("diff", "--hf-config", config, "--gguf", "hf://org/repo", "-o", str(out), "-q")
    assert again.exit_code == 1
    assert server.sent < 1 * MiB  # the unreadable file only is read again (the listing and its 64 KiB)


def test_every_command_reading_gguf_takes_a_url(served, server, invoke):
    local = invoke("wavelengths", "--gguf", str(served[1] / "real.gguf"), "--json")
    remote = invoke("wavelengths", "--gguf", f"{server.url}/ok/real.gguf", "--json")
    assert remote.exit_code == local.exit_code == 0
    assert json.loads(remote.stdout)["pairs"] == json.loads(local.stdout)["pairs"]


def test_two_files_without_a_config_still_compare_the_second_with_the_first(served, invoke):
    result = invoke("diff", "--gguf", str(served[1] / "real.gguf"), "--gguf", str(served[1] / "wrong.gguf"))
    assert result.exit_code == 1 and "first" in result.stdout


@pytest.mark.parametrize("args", [("--gguf", "{folder}", "-o", "x.csv"),
                                  ("--hf-config", "{folder}/config.json", "--gguf", "{folder}/nothing*.gguf"),
                                  ("--hf-config", "{folder}/config.json", "--gguf", "@{folder}/missing.txt"),
                                  ("--hf-config", "{folder}/config.json", "--gguf", "@{folder}/itself.txt"),
                                  ("--hf-config", "{folder}/config.json", "--gguf", "{folder}", "--jobs", "2",
                                   "--cluster", "tcp://127.0.0.1:1")])
def test_a_collection_asked_wrongly_is_one_line_and_exit_2(served, invoke, args):
    (served[1] / "itself.txt").write_text("@itself.txt\n")
    result = invoke("diff", *[a.format(folder=served[1]) for a in args])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize("name, bug", [
    (n, b) for n in ("llama31", "phi3", "gemma3", "deepseek_v3", "bloom", "qwen25") for b in (None, "ext_factor")
    if not (b == "ext_factor" and n not in ("qwen25", "deepseek_v3"))])
def test_the_header_walk_reads_what_gguf_reader_reads(tmp_path, name, bug):
    from gguf import GGUFReader, GGUFValueType

    from pecli.models.gguf import read_gguf_metadata

    path = convert(tmp_path, name, bug)[0]
    values, tensors, types = read_gguf_metadata(path)
    reader = GGUFReader(path)
    expected = {k: f for k, f in reader.fields.items() if not k.startswith(("GGUF.", "tokenizer."))
                and not (f.types[0] == GGUFValueType.ARRAY and f.types[-1] == GGUFValueType.STRING)}
    assert values == {k: f.contents() for k, f in expected.items()}
    assert types == {k: f.types[0].name for k, f in expected.items()}
    want = {t.name.removesuffix(".weight"): np.asarray(t.data, dtype=np.float64) for t in reader.tensors}
    assert set(tensors) == set(want) and all(np.array_equal(tensors[k], want[k]) for k in want)


def test_threads_processes_and_dask_write_the_same_report(served, server, run_main, tmp_path):
    files = ("--gguf", f"{server.url}/ok/real.gguf", "--gguf", str(served[1] / "wrong.gguf"))
    command = ("diff", "--hf-config", str(served[1] / "config.json"), *files, "-q", "-o")
    assert run_main(*command, "threads.jsonl").returncode == 1
    assert run_main(*command, "two.jsonl", "--jobs", "2").returncode == 1
    threads = (tmp_path / "threads.jsonl").read_bytes()
    assert (tmp_path / "two.jsonl").read_bytes() == threads and threads.count(b"\n") == 2
    pytest.importorskip("distributed", reason="the dask extra is not installed (the test extra installs it)")
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        result = run_main(*command, "dask.jsonl", "--cluster", cluster.scheduler_address)
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "dask.jsonl").read_bytes() == threads


def test_a_collections_title_counts_its_files_in_the_right_number():
    from pecli.sweeps.gguf_collection import CollectionResult

    one = CollectionResult([{"verdict": "same"}], read=1, resumed=0)
    two = CollectionResult([{"verdict": "same"}, {"verdict": "unreadable"}], read=2, resumed=0)
    assert one.table_title() == "1 GGUF file: 1 same, 0 different, 0 unreadable"
    assert two.table_title() == "2 GGUF files: 1 same, 0 different, 1 unreadable"

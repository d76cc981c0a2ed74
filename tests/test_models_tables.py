"""``--weights CHECKPOINT``: learned position tables read from tiny safetensors files made here."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("safetensors")
from safetensors.numpy import save_file  # noqa: E402

from pecli.config import build_scheme  # noqa: E402
from pecli.errors import ConfigError, PecliError  # noqa: E402


def ramp_table(rows: int, dim: int) -> np.ndarray:
    """Row p is p/8 + column/64: exact in bfloat16 for the sizes used here, every row distinct."""
    return (np.arange(rows)[:, None] / 8 + np.arange(dim)[None, :] / 64).astype(np.float32)


@pytest.fixture
def gpt2(tmp_path):
    path = tmp_path / "gpt2.safetensors"
    save_file({"wpe.weight": ramp_table(16, 4), "wte.weight": np.ones((5, 4), np.float32)}, str(path))
    return path


def check_json(invoke, *args):
    result = invoke("check", *args, "--json")
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_gpt2_table_found_by_name_and_sized_by_it(gpt2):
    scheme = build_scheme("learned", {"weights": str(gpt2)})
    assert (scheme.tensor, scheme.max_length, scheme.dim, scheme.row_offset) == ("wpe.weight", 16, 4, 0)
    np.testing.assert_array_equal(scheme.encode(np.arange(16)), ramp_table(16, 4))


def test_checks_run_on_the_table_at_its_rows(invoke, gpt2):
    report = check_json(invoke, "uniqueness", "--weights", gpt2)
    assert report["length"] == 16 and report["passed"]  # L defaults to the table's rows
    assert report["params"]["weights"] == str(gpt2)
    assert check_json(invoke, "distinguishability", "--weights", gpt2)["passed"]  # a straight line: p ± 1 nearest


def test_extrapolation_past_the_rows_is_undefined(invoke, gpt2):
    report = check_json(invoke, "extrapolation", "--weights", gpt2, "--length", "20")
    assert report["verdict"] == "fail" and report["results"][0]["figures"]["first_undefined"] == 16


def test_opt_bf16_drops_its_two_offset_rows_and_widens_exactly(tmp_path):
    table = ramp_table(10, 4)
    path = tmp_path / "opt.safetensors"
    save_file({"model.decoder.embed_positions.weight": table.astype(ml_dtypes.bfloat16)}, str(path))
    scheme = build_scheme("learned", {"weights": str(path)})
    assert (scheme.row_offset, scheme.max_length) == (2, 8)
    np.testing.assert_array_equal(scheme.table(), table[2:].astype(np.float64))


def test_bf16_read_from_its_bytes_when_numpy_refuses(tmp_path, monkeypatch):
    from pecli.weights import checkpoint

    table = ramp_table(6, 2)
    path = tmp_path / "bf.safetensors"
    save_file({"wpe.weight": table.astype(ml_dtypes.bfloat16)}, str(path))
    monkeypatch.setattr(checkpoint, "_read_numpy", lambda info: pytest.fail("the NumPy API was asked"))
    np.testing.assert_array_equal(checkpoint.Checkpoint(path).read("wpe.weight"), table)


def test_sharded_index_reads_only_the_shard_and_tensor_asked(tmp_path, monkeypatch):
    import safetensors

    save_file({"embeddings.word_embeddings.weight": np.zeros((3, 4), np.float32)}, str(tmp_path / "a.safetensors"))
    save_file({"bert.embeddings.position_embeddings.weight": ramp_table(12, 4)}, str(tmp_path / "b.safetensors"))
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {
        "embeddings.word_embeddings.weight": "a.safetensors", "bert.embeddings.position_embeddings.weight": "b.safetensors",
    }}))
    opened = []
    real_open = safetensors.safe_open
    monkeypatch.setattr(safetensors, "safe_open", lambda file, **kw: opened.append(file) or real_open(file, **kw))
    scheme = build_scheme("learned", {"weights": str(index)})
    assert scheme.max_length == 12 and scheme.row_offset == 0
    np.testing.assert_array_equal(scheme.table(), ramp_table(12, 4))
    assert opened == [str(tmp_path / "b.safetensors")]


def test_table_read_once(gpt2):
    scheme = build_scheme("learned", {"weights": str(gpt2)})
    assert scheme.table() is scheme.table()
    assert hash(scheme) == hash(build_scheme("learned", {"weights": str(gpt2)}))


@pytest.mark.parametrize(("params", "key"), [
    ({"dim": 8}, "dim"),
    ({"max_length": 17}, "max_length"),
    ({"tensor": "nope"}, "tensor"),
    ({"seed": 3}, "seed"),
    ({"row_offset": 16}, "row_offset"),
])
def test_what_contradicts_the_checkpoint_is_refused(gpt2, params, key):
    with pytest.raises(ConfigError) as caught:
        build_scheme("learned", {"weights": str(gpt2), **params})
    assert caught.value.key == key


def test_no_usual_name_or_several_ask_for_tensor(tmp_path):
    none = tmp_path / "none.safetensors"
    save_file({"w": np.zeros((2, 2), np.float32)}, str(none))
    two = tmp_path / "two.safetensors"
    save_file({"wpe.weight": np.zeros((2, 2), np.float32), "x.position_embeddings.weight": np.zeros((2, 2), np.float32)}, str(two))
    for path, says in ((none, "usual names"), (two, "several")):
        with pytest.raises(ConfigError, match=says):
            build_scheme("learned", {"weights": str(path)})


def test_tensor_without_weights_is_refused():
    with pytest.raises(ConfigError, match="give weights"):
        build_scheme("learned", {"tensor": "wpe.weight"})


def test_not_a_safetensors_file_is_one_line(invoke, tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\xff" * 64)
    result = invoke("encode", "--weights", bad)
    assert result.exit_code == 2 and "not a safetensors file" in result.stderr and len(result.stderr.splitlines()) == 1


def test_memory_bound_from_the_header(tmp_path):
    from pecli.weights.checkpoint import Checkpoint

    path = tmp_path / "big.safetensors"
    save_file({"wpe.weight": np.zeros((64, 64), np.float32)}, str(path))
    with pytest.raises(PecliError, match="over the budget"):
        Checkpoint(path).read("wpe.weight", max_bytes=1000)


def test_plot_similarity_of_a_checkpoint(invoke, gpt2, tmp_path, unrendered):
    out = tmp_path / "sim.png"  # the similarity figure is rendered by tests/test_plot.py
    result = invoke("plot", "similarity", "--weights", gpt2, "--out", out, "--json", "--dpi", "20")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["params"]["tensor"] == "wpe.weight" and out.read_bytes() == unrendered


def test_missing_safetensors_names_the_extra(gpt2, monkeypatch):
    import sys

    from pecli.weights.checkpoint import Checkpoint

    monkeypatch.setitem(sys.modules, "safetensors", None)
    with pytest.raises(PecliError, match=r"pip install 'pecli\[models\]'"):
        Checkpoint(gpt2).read("wpe.weight")

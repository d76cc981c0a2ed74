"""``pecli sweep`` (issue 23): grids, a row per point, resuming, local processes and Dask, same rows.

Known values: along a RoPE encoding (pairs (cos pω_i, sin pω_i), ω_i = base^(−2i/d)) every step between
adjacent positions has the length √Σ_i (2 sin(ω_i/2))², whatever p: the chord of angle ω_i on each unit
circle. The sweep's ``min_step`` of every point is checked against that formula, and one point's row
against ``pecli check … --json`` itself (the two doors must agree).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.checks import SETTINGS
from pecli.errors import ConfigError
from pecli.sweeps.files import read_rows
from pecli.sweeps.grid import build_grid, confirm_size, parse_axis

ROPE = ("--scheme", "rope", "-L", "64")


def chord_step(base: float, dim: int) -> float:
    omega = base ** (-2 * np.arange(dim // 2) / dim)
    return float(np.sqrt(np.sum((2 * np.sin(omega / 2)) ** 2)))


def error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- the grid ----------------------------------------------------------------------------------------
def test_axes_are_parsed_with_the_keys_declarations():
    assert parse_axis("base=1e4, 1e5") == ("base", ["1e4", "1e5"])
    assert parse_axis("train-length=8") == ("train_length", ["8"])
    assert parse_axis("grid=[[4, 4], [8, 8]]") == ("grid", [[4, 4], [8, 8]])
    grid = build_grid([parse_axis("rope_theta=1e2,1e4"), parse_axis("dim=8,16,32")], "rope", SETTINGS)
    assert grid.names == ("base", "dim") and grid.count == 6
    # grid order: the first axis varies slowest
    assert [tuple(p.values()) for _, p in grid.points()] == [
        (100.0, 8), (100.0, 16), (100.0, 32), (10000.0, 8), (10000.0, 16), (10000.0, 32)]
    assert grid.index_of({"base": "10000.0", "dim": "16"}) == 4  # CSV text finds its point
    assert grid.index_of({"base": 1e6, "dim": 16}) is None


@pytest.mark.parametrize(("axes", "words"), [
    ([], "the grid is empty"),
    (["base"], "expected NAME=V1,V2"),
    (["=1,2"], "expected NAME=V1,V2"),
    (["base="], "base lists no values"),
    (["base=1,,2"], "base has an empty value"),
    (["bass=1,2"], "unknown name 'bass': a grid of rope varies one of dim, base, layout"),
    (["dim=8,abc"], "grid: dim: expected an integer, got 'abc'"),
    (["layout=half,diagonal"], "grid: layout: must be one of half, interleaved; got 'diagonal'"),
    (["base=1e4,10000"], "base lists 10000.0 twice"),
    (["base=1,2", "rope_theta=3"], "base is given twice"),
])
def test_bad_grids_are_refused(axes, words):
    with pytest.raises(ConfigError, match=words):
        build_grid([parse_axis(a) for a in axes], "rope", SETTINGS)


def test_a_million_points_need_yes():
    values = ",".join(str(n) for n in range(1, 1001))
    grid = build_grid([parse_axis(f"length={values}"), parse_axis(f"train_length={values}")], "rope", SETTINGS)
    with pytest.raises(ConfigError, match=r"1,000,000 points \(1000 × 1000 \(length, train_length\)\).*--yes"):
        confirm_size(grid, False)
    confirm_size(grid, True)


@pytest.mark.parametrize(("args", "words"), [
    ((), "grid: the grid is empty: give at least one --grid NAME=V1,V2"),
    (("--grid", "bass=1,2"), "unknown name 'bass'"),
    (("--grid", "base:1,2"), "expected NAME=V1,V2,… (a grid axis, e.g. base=1e4,1e5) or the HxW cells"),
    (("--grid", "base=1,2", "--plot", "h.png"), "plot: draws a heatmap of two grid axes; this grid has 1 (base)"),
    (("--grid", "base=1,2", "--jobs", "2", "--cluster", "tcp://127.0.0.1:8786"), "give one of them"),
    (("--grid", "base=1,2", "--dim", "7"), "dim: must be even"),  # fixed options no point can run with
    (("--grid", "base=1,2", "-o", "rows.txt"), "unsupported suffix .txt"),
    (("layout", "--grid", "base=1,2"), "check: must be one of uniqueness"),
])
def test_bad_input_is_one_line_exit_2(run_main, args, words):
    result = run_main("sweep", *ROPE, *args)
    assert result.returncode == 2 and words in error_line(result)


@pytest.mark.parametrize(("module", "args", "words"), [
    ("distributed", ("--cluster", "tcp://127.0.0.1:8786"), "cluster: needs dask.distributed, which is not installed: pip install 'pecli[dask]'"),
    ("pyarrow.parquet", ("-o", "rows.parquet"), "out: .parquet needs pyarrow, which is not installed: pip install 'pecli[parquet]'"),
])
def test_a_missing_extra_is_named(run_main, monkeypatch, module, args, words):
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # import fails as if it were not installed
    result = run_main("sweep", *ROPE, "--grid", "base=1,2", *args)
    assert result.returncode == 2 and error_line(result) == f"pecli: error: {words}"


def test_a_million_points_without_yes_on_the_command_line(run_main):
    values = ",".join(str(n) for n in range(2, 1002))
    result = run_main("sweep", *ROPE, "--grid", f"length={values}", "--grid", f"train_length={values}")
    assert result.returncode == 2 and "pass --yes" in error_line(result)


# -- rows -----------------------------------------------------------------------------------------------
def test_rows_hold_the_known_step_and_a_failing_point_is_a_row(run_main):
    result = run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "--grid", "dim=8,9,16", "--json")
    assert result.returncode == 1  # a point failed: its row says why, the others ran
    document = json.loads(result.stdout)
    assert (document["points"], document["written"], document["skipped"], document["failed"]) == (6, 6, 0, 2)
    for row in document["rows"]:
        if row["dim"] == 9:
            assert row["verdict"] == "error" and row["error"] == "dim: must be even, got 9"
        else:
            assert row["error"] is None
            assert row["distinguishability.min_step"] == pytest.approx(chord_step(row["base"], row["dim"]), rel=1e-12)
    assert [(r["base"], r["dim"]) for r in document["rows"]] == [(b, d) for b in (100.0, 1e4) for d in (8, 9, 16)]


def test_a_row_is_what_check_json_says(run_main):
    args = ("--scheme", "rope", "-L", "128", "--dim", "16")
    checked = json.loads(run_main("check", "all", *args, "--base", "1e4", "--json").stdout)
    swept = json.loads(run_main("sweep", "all", *args, "--grid", "base=100,1e4", "--json").stdout)
    row = swept["rows"][1]
    assert row["base"] == 1e4 and row["verdict"] == checked["verdict"]
    for result in checked["results"]:
        name = result["property"]
        assert row[f"{name}.verdict"] == result["verdict"] and row[f"{name}.key_figure"] == result["key_figure"]
        assert row[f"{name}.sampled"] == result["sampled"]
        for figure, value in result["figures"].items():
            cell = row[f"{name}.{figure}"]
            assert (json.loads(cell) if isinstance(value, (list, dict)) else cell) == value, (name, figure)


def test_the_library_door_gives_the_command_lines_rows(run_main):
    import pecli

    swept = json.loads(run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "--json").stdout)
    result = pecli.sweep("distinguishability", {"base": [100, 1e4]}, scheme="rope", length=64)
    assert result.rows == swept["rows"] and (result.written, result.failed) == (2, 0)


def test_a_models_config_is_swept_as_check_reads_it(run_main, tmp_path):
    from pathlib import Path

    config = str(Path(__file__).resolve().parents[1] / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json")
    checked = json.loads(run_main("check", "distinguishability", "--hf-config", config, "-L", "64", "--base", "1e4", "--json").stdout)
    swept = json.loads(run_main("sweep", "distinguishability", "--hf-config", config, "-L", "64", "--grid", "base=1e4,1e6", "--json").stdout)
    row = swept["rows"][0]
    assert row["verdict"] == checked["verdict"] and swept["failed"] == 0
    assert row["distinguishability.min_step"] == checked["results"][0]["figures"]["min_step"]
    gemma3 = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
              "num_hidden_layers": 12, "sliding_window_pattern": 6, "rope_theta": 1e6, "rope_local_base_freq": 1e4}
    (tmp_path / "gemma3.json").write_text(json.dumps(gemma3))  # sliding layers and full ones: two RoPEs
    groups = run_main("sweep", "--hf-config", "gemma3.json", "--grid", "base=1e4,1e6")
    assert groups.returncode == 2 and "choose one with --layer N or --layer-group NAME" in error_line(groups)


def test_an_interrupted_sweep_resumes_without_recomputing(run_main, tmp_path, monkeypatch):
    import pecli.checks

    measured = []
    real = pecli.checks.check_report

    def counted(scheme, prop, options):
        if len(measured) == 2 and stop:
            raise KeyboardInterrupt
        measured.append(scheme.params()["base"])
        return real(scheme, prop, options)

    monkeypatch.setattr(pecli.checks, "check_report", counted)
    sweep = ("sweep", "distinguishability", *ROPE, "--grid", "dim=9,8", "--jobs", "1")
    stop = True
    interrupted = run_main(*sweep, "--grid", "base=100,1e4,1e6", "-o", "rows.csv")
    assert interrupted.returncode == 130 and measured == [100.0, 1e4]
    rows, _ = read_rows(tmp_path / "rows.csv")  # as they finished: dim 9 fails at every base, then two points
    assert [(r["dim"], r["base"], r["verdict"]) for r in rows] == [
        ("9", "100.0", "error"), ("9", "10000.0", "error"), ("9", "1000000.0", "error"),
        ("8", "100.0", "pass"), ("8", "10000.0", "fail")]
    stop = False
    resumed = run_main(*sweep, "--grid", "base=100,1e4,1e6,1e8", "-o", "rows.csv")  # and an axis grown by one value
    assert resumed.returncode == 1 and measured == [100.0, 1e4, 1e6, 1e8]  # the error rows run again
    assert "8 points, 6 run, 2 already in rows.csv; 4 failed" in resumed.stderr
    fresh = run_main(*sweep, "--grid", "base=100,1e4,1e6,1e8", "-o", "fresh.csv")
    assert fresh.returncode == 1
    assert (tmp_path / "rows.csv").read_bytes() == (tmp_path / "fresh.csv").read_bytes()  # grid order, same columns


def test_a_file_of_another_sweep_is_not_touched_without_force(run_main, tmp_path):
    first = run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "-o", "rows.jsonl")
    assert first.returncode == 0
    before = (tmp_path / "rows.jsonl").read_bytes()
    other = run_main("sweep", "distinguishability", "--scheme", "rope", "-L", "32", "--grid", "base=100,1e4", "-o", "rows.jsonl")
    assert other.returncode == 2 and "holds a sweep of the same grid names with another check or other fixed options" in error_line(other)
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    foreign = run_main("sweep", *ROPE, "--grid", "base=100", "-o", "notes.csv")
    assert foreign.returncode == 2 and "notes.csv exists and is not a pecli sweep file" in error_line(foreign)
    assert (tmp_path / "rows.jsonl").read_bytes() == before and (tmp_path / "notes.csv").read_text() == "a,b\n1,2\n"
    forced = run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100", "-o", "notes.csv", "--force")
    assert forced.returncode == 0 and read_rows(tmp_path / "notes.csv")[1][:2] == ["base", "sweep"]


def test_one_two_processes_and_dask_write_the_same_bytes(run_main, tmp_path):
    sweep = ("sweep", "all", *ROPE, "--grid", "base=100,1e4", "--grid", "dim=8,16", "-o")
    assert run_main(*sweep, "one.jsonl", "--jobs", "1").returncode == 0
    assert run_main(*sweep, "two.jsonl", "--jobs", "2").returncode == 0
    one = (tmp_path / "one.jsonl").read_bytes()
    assert (tmp_path / "two.jsonl").read_bytes() == one and one.count(b"\n") == 4
    pytest.importorskip("distributed", reason="the dask extra is not installed (the test extra installs it)")
    from distributed import LocalCluster

    # A scheduler and two workers on the loopback address only, in this process (threads), over TCP.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        result = run_main(*sweep, "dask.jsonl", "--cluster", cluster.scheduler_address)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "dask.jsonl").read_bytes() == one


def test_parquet_holds_the_same_rows_and_resumes_from_its_sidecar(run_main, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="the parquet extra is not installed")
    import pecli.checks

    real, calls = pecli.checks.check_report, []

    def interrupted_at_the_second(*args):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args)

    sweep = ("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "--grid", "dim=8,9", "--jobs", "1", "-o")
    monkeypatch.setattr(pecli.checks, "check_report", interrupted_at_the_second)
    assert run_main(*sweep, "rows.parquet").returncode == 130
    partial = tmp_path / "rows.parquet.partial.jsonl"  # Parquet cannot be appended to: the rows so far
    assert not (tmp_path / "rows.parquet").exists() and len(read_rows(partial)[0]) == 2  # (100, 8), and (100, 9): an error, run again
    monkeypatch.setattr(pecli.checks, "check_report", real)
    resumed = run_main(*sweep, "rows.parquet")
    assert resumed.returncode == 1 and "4 points, 3 run, 1 already in rows.parquet" in resumed.stderr
    assert not partial.exists() and run_main(*sweep, "rows.jsonl").returncode == 1
    parquet, columns = read_rows(tmp_path / "rows.parquet")
    jsonl, _ = read_rows(tmp_path / "rows.jsonl")
    assert [{k: v for k, v in row.items() if v is not None} for row in parquet] == [
        {k: v for k, v in row.items() if v is not None} for row in jsonl]
    assert columns[:5] == ["base", "dim", "sweep", "verdict", "error"]


# -- grids of cells, config files, plots ------------------------------------------------------------
def test_grid_cells_stay_the_schemes_and_can_be_swept(run_main):
    cells = json.loads(run_main("sweep", "distinguishability", "--scheme", "rope-nd", "--dim", "8", "--grid", "4x4",
                                "--grid", "base=100,1e4", "--json").stdout)
    assert [row["distinguishability.positions"] for row in cells["rows"]] == [16, 16]
    swept = json.loads(run_main("sweep", "distinguishability", "--scheme", "rope-nd", "--dim", "8",
                                "--grid", "grid=2x2,4x3", "--json").stdout)
    assert [(row["grid"], row["distinguishability.positions"]) for row in swept["rows"]] == [("[2, 2]", 4), ("[4, 3]", 12)]


def test_a_presets_options_are_grid_names(run_main):
    swept = json.loads(run_main("sweep", "distinguishability", "--preset", "mae", "--grid", "combine=concat,add", "--json").stdout)
    assert [row["combine"] for row in swept["rows"]] == ["concat", "add"] and swept["failed"] == 0


def test_a_config_file_holds_the_grid(run_main, tmp_path):
    (tmp_path / "sweep.yaml").write_text("scheme: rope\nlength: 64\ngrid:\n  rope_theta: [100, 1.0e4]\n  dim: 8,16\n")
    from_file = json.loads(run_main("sweep", "distinguishability", "--config", "sweep.yaml", "--json").stdout)
    given = json.loads(run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "--grid", "dim=8,16", "--json").stdout)
    assert from_file["rows"] == given["rows"] and from_file["sweep"] == given["sweep"]


def test_heatmap_orientation_and_plot_file(run_main, tmp_path, unrendered):
    from pecli.render.figures.sweep import metric_matrix

    rows = [{"verdict": v, "m": m} for v, m in (("pass", 1), ("fail", 2), ("warn", "3.5"), ("error", None), ("pass", 5), ("n/a", 6))]
    numbers, categories = metric_matrix(rows, (3, 2), "m")  # x: 3 values (the first axis), y: 2
    assert categories is None and numbers.shape == (2, 3)
    assert np.array_equal(numbers, np.array([[1, 3.5, 5], [2, np.nan, 6]]), equal_nan=True)
    verdicts, categories = metric_matrix(rows, (3, 2), "verdict")
    assert [categories[int(v)] for v in verdicts[0]] == ["pass", "warn", "pass"]
    result = run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "--grid", "dim=8,16",
                      "--plot", "h.png", "--metric", "min_step", "-q")
    assert result.returncode == 0 and (tmp_path / "h.png").read_bytes() == unrendered
    unknown = run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100", "--metric", "nope", "-q")
    assert unknown.returncode == 2 and "metric: no column 'nope'" in error_line(unknown)

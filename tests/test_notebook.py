"""The example notebook runs, and the library's results show themselves in it.

examples/tour.ipynb is executed by a real Jupyter kernel (nbclient, ipykernel: the test extra); its
outputs are checked for what a notebook user sees: HTML tables, a DataFrame, an inline figure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pecli.notebook import cell_text, html_table

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def executed():
    # the test extra's notebook tools (and pandas, which the notebook's to_frame() cell uses)
    for module in ("nbformat", "nbclient", "ipykernel", "pandas"):
        pytest.importorskip(module, reason=f"{module} is not installed (the test extra installs it)")
    import nbformat  # here, not at collection: Jupyter's client costs every test process its import
    from nbclient import NotebookClient

    notebook = nbformat.read(EXAMPLES / "tour.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def outputs(cell, kind: str) -> list[str]:
    return [out["data"][kind] for out in cell.outputs if "data" in out and kind in out["data"]]


def test_the_notebook_runs_and_shows_tables(executed):
    assert not [out for cell in executed for out in cell.outputs if out.get("output_type") == "error"]
    by_source = {cell.source.splitlines()[0]: cell for cell in executed}
    report = by_source['report = pecli.check(rope, "all", length=1024)']
    assert "<table>" in outputs(report, "text/html")[0] and "distinguishability" in outputs(report, "text/html")[0]
    frame = by_source['report.to_frame()[["property", "verdict", "value"]]']
    assert "uniqueness" in outputs(frame, "text/plain")[0]  # a pandas DataFrame
    spectrum = by_source["pecli.spectrum(rope, context=4096, train_length=1024)"]
    assert "wavelength" in outputs(spectrum, "text/html")[0]
    figure = by_source['figure, notes = pecli.plot("dot-distance", rope, length=512)']
    assert outputs(figure, "image/png"), "the figure is not shown inline"
    plan = by_source['pecli.model_plan("../sample_configs/hf/google--gemma-2-9b-it.json")']
    assert "sliding_attention" in outputs(plan, "text/html")[0]


def test_html_table_escapes_and_formats():
    text = html_table("a <title>", [{"x": 1.0 / 3, "y": None}, {"x": "<b>", "z": [1, 2.5]}])
    assert "a &lt;title&gt;" in text and "&lt;b&gt;" in text and "<th>z</th>" in text
    assert "<td>0.333333</td>" in text and "<td>1, 2.5</td>" in text
    assert cell_text(float("inf")) == "inf" and cell_text({"a": 1}) == "a=1"


def test_check_reports_iterate_as_lists_did():
    import pecli
    from pecli.analysis.registry import all_names

    report = pecli.check(pecli.build_scheme("rope", {"dim": 8}), "all", length=64)
    assert len(report) == len(list(report)) == len(all_names())
    assert report[0].property == "uniqueness" and report.length == 64


def test_a_check_report_as_a_data_frame():
    pytest.importorskip("pandas", reason="pandas is not installed (the test extra installs it)")
    import pecli

    report = pecli.check(pecli.build_scheme("rope", {"dim": 8}), "all", length=64)
    frame = report.to_frame()
    assert list(frame["property"]) == [r.property for r in report]

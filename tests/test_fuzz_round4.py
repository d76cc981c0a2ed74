"""Hostile input, round four retried (issues 43 and 44): what the retest found, and a sample of its cases.

``tests/fuzz_cases_round4.py`` holds the cases (about 8,000; ``python tests/fuzz_cases_round4.py`` runs them
all); the suite runs every 12th case of three areas. The tests below pin what the retest found broken.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))



def test_a_sample_of_the_round_four_cases_keeps_the_contract(tmp_path, monkeypatch):
    pytest.importorskip("gguf", reason="the cases read GGUF files, written with the gguf extra (pecli[gguf])")
    import fuzz_cases_round4 as cases

    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("PECLI_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    cases.make_inputs(tmp_path)
    runner = cases.Runner(tmp_path, every=12)
    for area in (cases.issue43_area, cases.yaml_area, cases.outputs_area):
        area(runner)
    assert not runner.failures, "\n".join(runner.failures)
    assert sum(held for held, _ in runner.tally.values()) > 40


def one_line_refusal(done, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pecli: error: "), done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_yaml_key_that_is_a_list_or_mapping_is_refused_in_one_line(run_main, tmp_path):
    # YAML's complex keys (``? [a]``) construct a list or a mapping as the key: not hashable (exit 3 before)
    for text, kind in (("? [a]\n: 1\n", "list"), ("? {a: 1}\n: 1\n", "mapping")):
        (tmp_path / "c.yaml").write_text(text)
        one_line_refusal(run_main("encode", "--config", "c.yaml"), "line 1", kind)


@pytest.mark.parametrize("base", [0.0, -1.0])
def test_a_gguf_base_at_or_below_zero_is_refused_without_numpy_warnings(run_main, tmp_path, base):
    pytest.importorskip("gguf")
    from gguf_models import LLAMA31, llama_keys, write_gguf

    # 0^(-2i/d) is infinite and (-1)^(-2i/d) undefined: NumPy warned on stderr above the error line before
    write_gguf(tmp_path / "b.gguf", "llama", {**llama_keys(LLAMA31), "rope.freq_base": base})
    for args in (("wavelengths", "--gguf", "b.gguf"), ("diff", "--gguf", "b.gguf", "--gguf", "b.gguf")):
        one_line_refusal(run_main(*args), "llama.rope.freq_base", "above 0")


def test_build_scheme_wants_its_parameters_as_a_mapping():
    import pecli

    with pytest.raises(TypeError, match="mapping"):
        pecli.build_scheme("rope", [("dim", 8)])


def test_a_printed_result_wraps_long_cells_at_spaces_and_never_cuts_a_word():
    from pecli.notebook import SUMMARY_CELL, text_summary

    cause = "the arrays fit base 100,000; the model's is 10,000 (max_position_embeddings 4096)"
    text = text_summary("VerifyReport", "t", [{"item": "cause: base", "value": cause}])
    assert "…" not in text
    assert " ".join(text.split()).endswith(cause)  # every word, in order
    assert all(len(line) <= 2 + len("cause: base") + 2 + SUMMARY_CELL for line in text.splitlines()[1:])
    long = text_summary("X", "t", [{"a": " ".join(["max_position_embeddings"] * 20)}])
    assert long.splitlines()[-1].endswith(" …") and "max_position_embeddi\n" not in long



@pytest.mark.parametrize("args", [("compare", "-L", "16", "--scale", "1e308"), ("check", "all", "-L", "16", "--scale", "1e4"),
                                  ("plot", "heatmap", "-L", "16", "--scheme", "learned", "--std", "1e308", "-o", "p.png")])
def test_a_table_multiplier_past_1000_is_refused_before_work(run_main, tmp_path, args):
    # scale 1e308 overflowed squared distances (SVD did not converge: exit 3); past 65,504 float16 holds inf
    one_line_refusal(run_main(*args), "must be <= 1000")
    assert not (tmp_path / "p.png").exists()


def test_wavelengths_lengths_past_2_to_the_32_are_refused_and_the_library_checks_them_too(run_main):
    import pecli
    from pecli.errors import ConfigError

    one_line_refusal(run_main("wavelengths", "--scheme", "rope", "--dim", "16", "--train-length", "9" * 400),
                     "train_length", "digits")  # OverflowError (exit 3) before
    rope = pecli.build_scheme("rope", {"dim": 16})
    for options in ({"context": -1}, {"context": 16, "train_length": 0}, {"context": 10**400}, {"context": "x"}):
        with pytest.raises(ConfigError, match="must be an integer from 1 to"):  # -1 and 0 gave a table before
            pecli.spectrum(rope, **options)


def test_a_list_key_read_from_a_0d_npy_is_one_number(run_main, tmp_path):
    import numpy as np

    np.save(tmp_path / "one.npy", np.float64(0.5))  # shape (): max(()) raised inside (exit 3)
    one_line_refusal(run_main("encode", "--scheme", "rope", "--dim", "8", "--inv-freq", "one.npy", "-L", "4"), "inv_freq")
    done = run_main("encode", "--scheme", "rope", "--dim", "2", "--inv-freq", "one.npy", "-L", "4", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["params"]["inv_freq"] == [0.5]

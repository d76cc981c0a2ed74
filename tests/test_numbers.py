"""One number style in every output (:mod:`pecli.numbers`): counts with thousands separators from
10,000 on, floats with four significant digits and a short exponent (``6.575e4``, never ``6.575e+04``).

The expected strings below are written by hand from that rule. The second half runs commands whose
tables, titles and reasons hold counts past 10,000 and floats past 10⁴ and greps what they print.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pecli.cli import app
from pecli.numbers import exponent, integer, number, tokens

LLAMA31 = "sample_configs/hf/meta-llama--llama-3.1-8b.json"
MISTRAL = "sample_configs/hf/mistralai--mistral-7b-instruct-v0.3.json"
LLAMA2 = "sample_configs/hf/meta-llama--llama-2-7b-hf.json"


@pytest.mark.parametrize("value, text", [
    (0, "0"), (2048, "2048"), (9999, "9999"), (10_000, "10,000"), (131_072, "131,072"), (-65_536, "-65,536"),
    (10**12, "1,000,000,000,000"),
])
def test_counts(value, text):
    assert integer(value) == text


@pytest.mark.parametrize("value", [1.5, "12", None, True])
def test_a_count_is_an_integer(value):
    with pytest.raises(TypeError, match="value"):
        integer(value)


@pytest.mark.parametrize("value, text", [
    (65_750.3, "6.575e4"), (1.05e-14, "1.05e-14"), (-1e4 - 0.5, "-1e4"), (4.412e-6, "4.412e-6"),
    (0.00085123, "0.0008512"), (2.5, "2.5"), (131_072.0, "131,072"), (500_000.0, "500,000"),
    (2.047e7, "2.047e7"), (1e30, "1e30"), (-0.0, "0"), (float("inf"), "inf"), (float("nan"), "nan"),
])
def test_measured_floats(value, text):
    assert number(value) == text


def test_digits_and_exponents():
    assert number(0.857142, 3) == "0.857" and number(12345.678, 3) == "1.23e4" and number(1e-6, 6) == "1e-6"
    assert exponent("6.575e+04") == "6.575e4" and exponent("1e-06") == "1e-6" and exponent("2.5") == "2.5"


@pytest.mark.parametrize("value, decimals, text", [
    (62_831.853, 0, "62,832"), (14_899.83, 1, "14,899.8"), (6.2832, 1, "6.3"), (999_999.4, 0, "999,999"),
    (5_063_256.3, 0, "5.063e6"), (20_470_000.0, 1, "2.047e7"),
])
def test_lengths_in_tokens(value, decimals, text):
    assert tokens(value, decimals) == text


# -- what commands print -------------------------------------------------------------------------------
#: A float written with a long exponent (``e+04``, ``e-06``) or a ``+`` in it.
LONG_EXPONENT = re.compile(r"\de[+-]0\d|\de\+\d")
#: Five digits or more with no separator, not in a fraction (``0.000123``) nor an exponent.
UNSEPARATED = re.compile(r"(?<![\d.,eE])\d{5,}")
#: A line of a JSON document a command prints for a file (``extend``'s config.json patch): JSON has
#: no thousands separators, so its lines are read as JSON, not as text.
JSON_LINE = re.compile(r'^\s*("[^"]*":|[\[\]{}],?$)')

COMMANDS = {
    "check sinusoidal": ["check", "all", "--scheme", "sinusoidal", "--dim", "16", "--length", "12000"],
    "check learned": ["check", "all", "--scheme", "learned", "--dim", "8", "--length", "12000"],
    "check alibi": ["check", "all", "--scheme", "alibi", "--length", "12000"],
    "check t5": ["check", "all", "--scheme", "t5", "--length", "12000"],
    "check rope": ["check", "all", "--scheme", "rope", "--dim", "16", "--length", "12000"],
    "check binary": ["check", "all", "--scheme", "binary", "--length", "12000"],
    "compare": ["compare", "--length", "12000", "--set", "dim=16"],
    "compare models": ["compare", "--hf-config", LLAMA31, "--hf-config", MISTRAL, "--set", "length=96"],
    "wavelengths": ["wavelengths"],
    "wavelengths context": ["wavelengths", "--scheme", "rope", "--dim", "32", "--context", "131072",
                            "--train-length", "8192"],
    "wavelengths llama 3.1": ["wavelengths", "--hf-config", LLAMA31, "--context", "1024"],
    "extend": ["extend", "--hf-config", LLAMA2, "--target", "32768"],
    "inspect config": ["inspect", "config", "--hf-config", LLAMA31],
}


@pytest.mark.parametrize("args", list(COMMANDS.values()), ids=list(COMMANDS))
def test_outputs_write_numbers_one_way(args, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, args, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    lines = [line for line in result.stdout.splitlines() if not JSON_LINE.match(line)]
    long = [line for line in lines if LONG_EXPONENT.search(line)]
    bare = [line for line in lines if UNSEPARATED.search(line)]
    assert not long, "long exponents:\n" + "\n".join(long)
    assert not bare, "counts without separators:\n" + "\n".join(bare)

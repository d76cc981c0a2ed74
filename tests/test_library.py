"""The library API: a notebook user never imports from ``pecli.cli``."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import pecli


def test_encode_and_build_are_top_level():
    # d = 2, base 10000: ω_0 = 1, so PE[1] = (sin 1, cos 1) in the paper's interleaved layout
    np.testing.assert_allclose(pecli.encode("sinusoidal", range(2), dim=2), [[0.0, 1.0], [math.sin(1), math.cos(1)]])
    assert pecli.build_scheme("binary", length=256).at_length(512).bits == 9


def test_checks_spectrum_compare_and_plot_are_top_level():
    from pecli.analysis.registry import all_names

    rope = pecli.build_scheme("rope", {"dim": 8})
    (result,) = pecli.check(rope, "relativity", length=64)
    assert result.verdict == "pass"
    assert [r.property for r in pecli.run_checks(rope, "all", pecli.CheckOptions(length=32))] == list(all_names())
    # pair 1 of d = 8, base 10000: θ_1 = 10000^(−1/4) = 0.1, wavelength 20π
    assert pecli.spectrum(rope, context=100).pairs[1].wavelength == pytest.approx(20 * math.pi)
    table = pecli.compare([("mine", rope), pecli.build_scheme("alibi")], length=16)
    assert [row.label for row in table.rows] == ["mine", "alibi"]
    figure, notes = pecli.plot("wavelengths", rope, length=64)
    assert figure.axes and isinstance(notes, list)
    assert "rope" in pecli.SCHEMES and pecli.Capability.FREQUENCIES in type(rope).capabilities()


def test_imports_stay_light():
    # `import pecli` loads nothing heavy; the NumPy core never imports Typer, Rich or matplotlib (DESIGN.md);
    # the CLI, its plot command and the figures' module included, imports matplotlib only to draw.
    code = (
        "import sys, pecli\n"
        "print(sorted(m for m in ('numpy', 'typer', 'matplotlib', 'rich') if m in sys.modules))\n"
        "import pecli.schemes, pecli.config, pecli.io, pecli.analysis.registry\n"
        "print(sorted(m for m in ('typer', 'rich', 'matplotlib') if m in sys.modules))\n"
        "import pecli.cli, pecli.cli.plot, pecli.render.figures\n"
        "print(sorted(m for m in ('matplotlib',) if m in sys.modules))"
    )
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert process.returncode == 0, process.stderr
    assert process.stdout.split("\n")[:3] == ["[]", "[]", "[]"]


@pytest.mark.parametrize("kind", ["dot-distance", "extrapolation", "wavelengths"])
def test_library_and_command_line_draw_the_same_figure(kind):
    # The same scheme through both doors: pecli.plot and `pecli plot KIND --scheme rope --base 500000 -L 8192`.
    # README's example once drew base 10,000 and tested on 512 through the library.
    import pecli
    from pecli.cli.plot import SETTINGS, _request
    from pecli.config import resolve
    from pecli.render import figures

    rope = pecli.build_scheme("rope", {"dim": 128, "base": 500000})
    library, _ = pecli.plot(kind, rope, length=8192)
    spec = resolve({"scheme": "rope", "dim": 128, "base": 500000, "length": 8192, "kind": kind}, SETTINGS)
    command, _ = figures.draw(kind, _request(spec))
    assert suptitle(library) == suptitle(command)
    assert "base=500000" in suptitle(library)


def suptitle(figure) -> str:
    """The figure's title: Figure.get_suptitle is matplotlib 3.8's, and pecli takes 3.7 (its _suptitle)."""
    if hasattr(figure, "get_suptitle"):
        return figure.get_suptitle()
    return figure._suptitle.get_text() if figure._suptitle is not None else ""


def test_a_models_config_in_the_library(tmp_path):
    # Gemma 3's two bases through the library, from a path or from the parsed config.
    import json

    import pecli

    config = {"model_type": "gemma3_text", "head_dim": 256, "num_attention_heads": 8, "hidden_size": 2560,
              "num_hidden_layers": 12, "rope_theta": 1e6, "rope_local_base_freq": 10000.0}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert [g.name for g in pecli.model_plan(str(path)).groups] == ["sliding_attention", "full_attention"]
    assert pecli.model_scheme(config, layer=0).base == 10000.0
    assert pecli.model_scheme(config, group="full_attention").base == 1e6
    from pecli.errors import ConfigError

    with pytest.raises(ConfigError, match="--layer"):
        pecli.model_scheme(config)


def test_dir_lists_the_public_names():
    import pecli

    names = dir(pecli)
    assert {"spectrum", "compare", "run_checks", "model_plan", "encode"} <= set(names)
    assert "importlib" not in names and "Any" not in names


@pytest.mark.parametrize("config", ["meta-llama--llama-3.1-8b.json", "google--gemma-2-9b-it.json",
                                    "microsoft--phi-3-mini-128k-instruct.json"])
def test_check_gives_one_answer_through_the_library_and_the_command_line(invoke, config):
    # A model's config.json through both doors: `pecli check all --hf-config F -L 512 --json` and
    # pecli.run_checks(pecli.model_scheme(F, length=512), "all") give the same verdicts and figures.
    import json
    from pathlib import Path

    import pecli

    path = str(Path(__file__).parents[1] / "sample_configs" / "hf" / config)
    result = invoke("check", "all", "--hf-config", path, "-L", "512", "--json")
    assert result.exit_code in (0, 1), result.stderr
    command = {r["property"]: (r["verdict"], r["figures"]) for r in json.loads(result.stdout)["results"]}
    library = pecli.run_checks(pecli.model_scheme(path, length=512), "all", pecli.CheckOptions(length=512))
    from pecli.cli.common import jsonable

    assert {r.property: (r.verdict, jsonable(r.figures)) for r in library} == command


def test_encode_takes_a_scheme_object_too():
    # The same array from the name and parameters as from the scheme they build (row 1, pair 1 of d = 4,
    # base 100: θ_1 = 100^(−2/4) = 0.1, so the rotated reference has cos 0.1, sin 0.1 at components 1, 3).
    import pecli

    rope = pecli.build_scheme("rope", {"dim": 4, "base": 100.0})
    from_object, from_name = pecli.encode(rope, range(3)), pecli.encode("rope", range(3), dim=4, base=100.0)
    np.testing.assert_array_equal(from_object, from_name)
    assert from_object[1, 1] == pytest.approx(math.cos(0.1)) and from_object[1, 3] == pytest.approx(math.sin(0.1))
    with pytest.raises(TypeError, match="built scheme"):
        pecli.encode(rope, range(3), dim=8)

"""Options come from declarations: every scheme parameter is an option, a YAML key and a ``--set`` key;
an option means the same in every command (what `--help` shows of them: tests/test_help.py)."""

from __future__ import annotations

import pytest
import typer

from pecli.cli import build_app
from pecli.cli.options import SHORT_FLAGS, option_name
from pecli.config import resolve
from pecli.schemes import SCHEMES

COMMANDS = ("encode", "check", "compare", "wavelengths", "plot")


@pytest.fixture(scope="module")
def group():
    return typer.main.get_command(build_app())


def _options(command) -> dict[str, list[str]]:
    return {param.name: [*param.opts, *getattr(param, "secondary_opts", [])] for param in command.params}


@pytest.mark.parametrize("name", list(SCHEMES))
def test_every_scheme_parameter_is_an_option_a_yaml_key_and_a_set_key(group, name):
    encode = _options(group.get_command(None, "encode"))
    for key, parameter in SCHEMES[name].parameters().items():
        assert encode[key][0] in (option_name(key), "--no-" + option_name(key)[2:]), (name, key)
        if parameter.default is not None:  # the declared default round-trips through a layer
            spec = resolve({"scheme": name, key: parameter.default})
            assert spec.scheme.params()[key] == (list(parameter.default) if isinstance(parameter.default, tuple) else parameter.default)


def test_short_flags_mean_one_thing_everywhere(group):
    for command in COMMANDS:
        for key, names in _options(group.get_command(None, command)).items():
            for short in (n for n in names if len(n) == 2):
                assert SHORT_FLAGS.get(key) == short or (key, short) in {("help", "-h"), ("quiet", "-q"), ("force", "-f")}, (command, key, short)
    assert "-s" not in _options(group.get_command(None, "compare")).get("schemes", [])


def test_each_command_lists_only_what_it_reads(group):
    wavelengths = _options(group.get_command(None, "wavelengths"))
    assert "base" in wavelengths and "scaling" in wavelengths
    for key in ("dtype", "positions", "heads", "buckets", "bits", "max_relative_position"):
        assert key not in wavelengths, key
    assert "positions" not in _options(group.get_command(None, "compare"))

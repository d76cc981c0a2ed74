"""One contract, every registered scheme: a scheme added to ``pecli.schemes.SCHEMES`` is covered here
the moment it is registered (small parameters below are only a speed-up; a scheme missing from
``SMALL`` runs with its defaults).

What every scheme promises (see ``pecli/schemes/base.py``): its kind is one of KINDS; ``arrays`` starts
with ``main_key`` and its main array has ``main_shape(n)``; ``encode`` is (n, width) float64 for
additive and rotary schemes; ``score(m, n)`` has shape (channels, *broadcast(m, n)); ``params()`` is
JSON and rebuilds the same scheme; bad parameter values raise ConfigError naming the key; positions
must be non-negative integers.
"""

from __future__ import annotations

import json
import types
import typing

import numpy as np
import pytest

from pecli.config import build_scheme, scheme_parameters
from pecli.errors import ConfigError, PecliError, PositionError
from pecli.schemes import KINDS, SCHEMES

NAMES = list(SCHEMES)
LENGTH = 16

#: Small sizes so that the whole contract runs in a second or two.
SMALL: dict[str, dict] = {
    "integer": {"dim": 6},
    "binary": {},
    "sinusoidal": {"dim": 8},
    "learned": {"dim": 6},
    "relative": {"dim": 4, "max_relative_position": 3},
    "t5": {"buckets": 8, "max_distance": 12},
    "alibi": {"heads": 4},
    "rope": {"dim": 8},
    "sinusoidal-nd": {"dim": 8, "grid": [4, 4]},
    "rope-nd": {"dim": 8, "grid": [4, 4]},
    "mrope": {"dim": 8, "mrope_section": [2, 1, 1], "sequence": "text:4,image:1x4x4,text:8"},
}


def at(scheme, ids):
    """The scheme's positions of rows ``ids``: the ids themselves, or an n-D scheme's cells (16 of them)."""
    ids = np.asarray(ids)
    return scheme.cells()[ids] if scheme.has_cells else ids


def stored(positions):
    return positions if positions.ndim == 1 else positions.T


def make(name: str):
    return build_scheme(name, SMALL.get(name, {}), length=LENGTH)


def test_registry_is_complete():
    # The schemes of the foundation issue are all registered, under their own names.
    assert {"integer", "binary", "sinusoidal", "learned", "relative", "t5", "alibi", "rope"} <= set(SCHEMES)
    for name, cls in SCHEMES.items():
        assert cls.name == name


@pytest.mark.parametrize("name", NAMES)
def test_kind_and_docstring(name):
    cls = SCHEMES[name]
    assert cls.kind in KINDS
    assert cls.summary
    assert cls.__doc__ and len(cls.__doc__.strip()) > 20  # the formula and its source live here


@pytest.mark.parametrize("name", NAMES)
def test_arrays_main_key_and_main_shape(name):
    scheme = make(name)
    for ids in (np.arange(LENGTH), np.array([3, 5, 9]), np.array([0])):
        positions = at(scheme, ids)
        arrays = scheme.arrays(positions)
        assert isinstance(arrays, dict) and arrays
        assert next(iter(arrays)) == scheme.main_key
        main = arrays[scheme.main_key]
        assert isinstance(main, np.ndarray)
        assert main.shape == tuple(scheme.main_shape(ids.size))
        assert main.dtype.kind in "fi"
        if main.dtype.kind == "f":
            assert main.dtype == np.float64  # the core computes in float64; the CLI casts
        assert np.all(np.isfinite(main))
        np.testing.assert_array_equal(arrays["positions"], stored(positions))
        for key, value in arrays.items():
            assert isinstance(key, str) and isinstance(value, np.ndarray), key


@pytest.mark.parametrize("name", NAMES)
def test_encode_shape_dtype_and_agreement(name):
    scheme = make(name)
    positions = at(scheme, np.arange(LENGTH))
    if scheme.kind == "bias":
        with pytest.raises(PecliError):
            scheme.encode(positions)
        return
    encoding = scheme.encode(positions)
    assert encoding.shape == (LENGTH, scheme.width) == tuple(scheme.main_shape(LENGTH))
    assert encoding.dtype == np.float64
    np.testing.assert_array_equal(scheme.arrays(positions)[scheme.main_key], encoding)
    np.testing.assert_array_equal(scheme.encode(positions), encoding)  # deterministic
    # A position's vector does not depend on which other positions are asked for.
    np.testing.assert_allclose(scheme.encode(at(scheme, [5]))[0], encoding[5], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_score_shape(name):
    scheme = make(name)
    channels = scheme.channels
    assert scheme.score(at(scheme, 2), at(scheme, 5)).shape == (channels,)
    m = at(scheme, np.arange(3).reshape(3, 1))
    n = at(scheme, np.arange(4).reshape(1, 4))
    scores = scheme.score(m, n)
    assert scores.shape == (channels, 3, 4)
    assert scores.dtype.kind == "f"
    assert np.all(np.isfinite(scores))
    np.testing.assert_allclose(scores[:, 1, 2], scheme.score(at(scheme, 1), at(scheme, 2)), rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_score_matches_kind(name):
    scheme = make(name)
    m, n = at(scheme, [0, 3, 7, 2]), at(scheme, [1, 3, 2, 9])
    if scheme.kind == "additive":
        # score(m, n) = E_m · E_n
        e_m, e_n = scheme.encode(m), scheme.encode(n)
        np.testing.assert_allclose(scheme.score(m, n)[0], np.sum(e_m * e_n, axis=1), rtol=1e-12, atol=1e-15)
    else:
        # Rotary and bias scores depend on n − m only: shifting both positions by 4 changes nothing.
        np.testing.assert_allclose(scheme.score(m + 4, n + 4), scheme.score(m, n), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_apply_by_kind(name):
    scheme = make(name)
    positions = at(scheme, np.arange(5))
    x = np.random.default_rng(0).standard_normal((2, 5, scheme.width))
    if scheme.kind == "bias":
        with pytest.raises(PecliError, match="--apply"):
            scheme.apply(x, positions)
        return
    out = scheme.apply(x, positions)
    assert out.shape == x.shape and out.dtype == np.float64
    if scheme.kind == "additive":
        np.testing.assert_allclose(out, x + scheme.encode(positions))
    with pytest.raises(PecliError):
        scheme.apply(x[..., :-1], positions)  # wrong number of features
    with pytest.raises(PecliError):
        scheme.apply(x, at(scheme, np.arange(4)))  # positions do not match the second-to-last axis


@pytest.mark.parametrize("name", NAMES)
def test_params_json_and_round_trip(name):
    scheme = make(name)
    params = scheme.params()
    assert set(params) == set(scheme_parameters(type(scheme)))
    text = json.dumps(params)
    rebuilt = build_scheme(name, json.loads(text), length=LENGTH)
    assert rebuilt == scheme
    four = at(scheme, np.arange(4))
    np.testing.assert_array_equal(rebuilt.arrays(four)[rebuilt.main_key], scheme.arrays(four)[scheme.main_key])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [[-1, 2], [0.5, 1], [[0, 1]]], ids=["negative", "fractional", "2-D"])
def test_positions_must_be_non_negative_integers(name, bad):
    # Schemes whose angles are a position times a frequency take real positions (negative, fractional);
    # every other one refuses them, and every scheme refuses positions of the wrong shape.
    scheme = make(name)
    shaped = bad != [[0, 1]]
    if scheme.has_cells:  # positions of k coordinates: each bad value as a cell, and bare ids for "2-D"
        bad = [[value] * scheme.position_rank for value in bad] if shaped else [0, 1]
    if scheme.real_positions and shaped:
        assert np.all(np.isfinite(scheme.arrays(bad)[scheme.main_key]))
        return
    with pytest.raises(PositionError):
        scheme.arrays(bad)


@pytest.mark.parametrize("name", [name for name in NAMES if SCHEMES[name].real_positions])
def test_real_positions_are_refused_when_not_finite(name):
    scheme = make(name)
    bad = [[np.nan] * scheme.position_rank] if scheme.has_cells else [0.5, np.inf]
    with pytest.raises(PositionError, match="finite"):
        scheme.arrays(bad)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_named(name):
    with pytest.raises(ConfigError) as info:
        build_scheme(name, {"no_such_key": 1})
    assert info.value.key == "no_such_key"
    assert str(info.value).startswith("no_such_key: ")


def bad_values(setting) -> list:
    """Values of the wrong type or out of range for a parameter, worked out from its declaration."""
    kind = setting.type
    if typing.get_origin(kind) in (typing.Union, types.UnionType):  # int | None → int
        kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
    values: list = []
    if kind is bool:
        values.append("maybe")
    elif kind is int:
        values += ["abc", 2.5, True]
    elif kind is float:
        values += ["abc", "nan"]
    elif kind is str:
        values.append([1, 2])
    elif typing.get_origin(kind) is tuple:
        values.append("abc")
    if setting.choices:
        values.append("no-such-choice")
    step = 1 if kind is int else 0.5
    if setting.minimum is not None:
        values.append(setting.minimum - step)
    if setting.exclusive_minimum is not None:
        values.append(setting.exclusive_minimum)
    if setting.maximum is not None:
        values.append(setting.maximum + step)
    return values


CASES = [
    (name, key, value)
    for name, cls in SCHEMES.items()
    for key, setting in scheme_parameters(cls).items()
    for value in bad_values(setting)
]


@pytest.mark.parametrize("name,key,value", CASES, ids=[f"{n}-{k}-{v!r}" for n, k, v in CASES])
def test_bad_parameter_value_names_the_key(name, key, value):
    with pytest.raises(ConfigError) as info:
        build_scheme(name, {**SMALL.get(name, {}), key: value}, length=LENGTH)
    assert info.value.key == key
    assert str(info.value).startswith(f"{key}: ")


@pytest.mark.parametrize("name", NAMES)
def test_every_scheme_through_the_cli(name, invoke, tmp_path):
    # pecli encode --scheme NAME writes the main array first in .npz, with metadata; --json has its shape.
    out = tmp_path / f"{name}.npz"
    scheme = build_scheme(name, SMALL.get(name, {}), length=6)
    length = len(scheme.cells()) if scheme.has_cells else 6  # an n-D scheme encodes its own cells
    sets = [arg for key, value in SMALL.get(name, {}).items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    length_option = [] if scheme.has_cells else ["--length", "6"]
    result = invoke("encode", "--scheme", name, *length_option, *sets, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["scheme"] == name and document["kind"] == scheme.kind
    assert document["main"] == scheme.main_key
    assert document["shape"] == list(scheme.main_shape(length))
    from pecli.schemes.encoded import made_on_request

    # A rotary scheme's encoding is written on request (--parts): its archive starts with its cos cache.
    first = "cos" if scheme.main_key in made_on_request(scheme) else scheme.main_key
    with np.load(out) as archive:
        assert archive.files[0] == first
        assert "metadata" in archive.files and "positions" in archive.files
        assert json.loads(str(archive["metadata"]))["scheme"] == name
        np.testing.assert_allclose(archive[first], scheme.arrays(at(scheme, np.arange(length)))[first])


def test_no_function_in_pecli_is_over_80_lines():
    """Long functions are split into named steps (the rule of the documentation issue)."""
    import ast

    from pecli_source import PACKAGE as root
    from pecli_source import statements, tree

    long = []
    for path in sorted(root.rglob("*.py")):
        for node in statements(tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80:
                long.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    assert not long, long

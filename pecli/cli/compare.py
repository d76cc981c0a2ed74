"""``pecli compare``: every property of several schemes, one row each, with the seeds' claims set against them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer

from pecli.analysis import ANALYSES, CheckOptions, run_checks
from pecli.analysis.claims import claims_for, disagreement
from pecli.analysis.spectrum import wavelengths_of
from pecli.analysis.structure import bias_domain, has_vectors, vectors
from pecli.cli.common import CONFIG_PANEL, JsonOption, errors_to_exit, print_json, stdout_console
from pecli.config import (
    DEFAULT_LENGTH, build_scheme, coerce, load_yaml, normalize_key, parse_sets, read_hf_config, scheme_parameters,
)
from pecli.dtypes import DTYPES
from pecli.errors import ConfigError
from pecli.schemes import SCHEMES

#: The schemes compared when none are given: the eight base families.
BASE_SCHEMES = ("integer", "binary", "sinusoidal", "learned", "relative", "t5", "alibi", "rope")
ACTS_ON = {"additive": "input", "rotary": "q,k", "bias": "logits"}
#: Keys a compare YAML file accepts.
COMPARE_KEYS = ("schemes", "length", "dim", "train_length", "dtype", "strict", "hf_config")


def _opt(*names: str, help: str, panel: str = "Compare") -> Any:
    return typer.Option(*names, help=help, rich_help_panel=panel, show_default=False)


def compare(
    schemes: Annotated[Optional[str], _opt("--schemes", "-s", help="comma-separated scheme names [default: all base schemes]")] = None,
    length: Annotated[Optional[int], _opt("--length", "-L", help=f"number of positions [default: {DEFAULT_LENGTH}]")] = None,
    dim: Annotated[Optional[int], _opt("--dim", "-d", help="vector size, for the schemes that have one")] = None,
    train_length: Annotated[Optional[int], _opt("--train-length", "-T", help="extrapolation: training length [default: L // 2]")] = None,
    dtype: Annotated[Optional[str], _opt("--dtype", help="precision (and uniqueness) dtype [default: bfloat16 for precision]")] = None,
    strict: Annotated[Optional[bool], _opt("--strict/--no-strict", help="warnings count as failures")] = None,
    config: Annotated[Optional[str], _opt("--config", "-c", help="YAML: schemes (a list of names or of scheme mappings), length, dim, …", panel=CONFIG_PANEL)] = None,
    hf_config: Annotated[Optional[list[str]], _opt("--hf-config", help="add the RoPE of a HuggingFace config.json as a row (repeatable)", panel=CONFIG_PANEL)] = None,
    set_: Annotated[Optional[list[str]], _opt("--set", help="override any key: key=value (repeatable)", panel=CONFIG_PANEL)] = None,
    json: JsonOption = False,
) -> None:
    """Measure every property of several schemes: one row per scheme, one column per verdict.

    Each row also gives the parameter count, where the scheme acts (input, q,k or logits), the value
    range and the largest wavelength. Where a measurement disagrees with a claim of the seed articles,
    a footnote says so.
    """
    with errors_to_exit():
        settings = load_yaml(config) if config else {}
        unknown = sorted(set(settings) - set(COMPARE_KEYS))
        if unknown:
            raise ConfigError(unknown[0], f"unknown key for compare (valid keys: {', '.join(COMPARE_KEYS)})")
        given = {"schemes": schemes, "length": length, "dim": dim, "train_length": train_length, "dtype": dtype, "strict": strict}
        settings.update({k: v for k, v in given.items() if v is not None})
        overrides = parse_sets(set_)
        unknown = sorted(set(overrides) - set(COMPARE_KEYS))
        if unknown:
            raise ConfigError(unknown[0], f"unknown key for compare (valid keys: {', '.join(COMPARE_KEYS)})")
        settings.update(overrides)
        settings = {key: value for key, value in settings.items() if value is not None}  # null: the default
        length_value = coerce("length", settings.get("length", DEFAULT_LENGTH), int, minimum=3)
        dim_value = coerce("dim", settings["dim"], int, minimum=1) if settings.get("dim") is not None else None
        train = coerce("train_length", settings["train_length"], int, minimum=1) if settings.get("train_length") is not None else None
        dtype_value = coerce("dtype", settings["dtype"], str, choices=DTYPES) if settings.get("dtype") is not None else None
        strict_value = coerce("strict", settings.get("strict", False), bool)
        entries = _entries(settings.get("schemes"))
        if not hf_config and settings.get("hf_config"):
            configured = settings["hf_config"]
            hf_config = [configured] if isinstance(configured, str) else list(configured)
        if hf_config:
            if settings.get("schemes") is None:
                entries = []
            for path in hf_config:
                options = read_hf_config(path)
                options.pop("scheme")
                entries.append(("rope", {**options, "label": Path(path).stem}))
        document = compare_document(entries, length_value, dim=dim_value, train_length=train, dtype=dtype_value, strict=strict_value)
    if json:
        print_json(document)
    else:
        from pecli.cli.common import jsonable
        from pecli.render.check import compare_renderable

        stdout_console().print(compare_renderable(jsonable(document)))


def _entries(value: Any) -> list[tuple[str, dict[str, Any]]]:
    """(scheme name, parameters) from ``a,b,c``, a list of names, or a list of mappings with ``scheme``."""
    if value is None:
        return [(name, {}) for name in BASE_SCHEMES]
    items = [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ConfigError("schemes", "expected a comma-separated list of names or a list of scheme mappings")
    entries = []
    for item in items:
        if isinstance(item, str):
            entries.append((item, {}))
        elif isinstance(item, dict) and "scheme" in item:
            params = {normalize_key(str(k)): v for k, v in item.items() if k != "scheme"}
            entries.append((str(item["scheme"]), params))
        else:
            raise ConfigError("schemes", f"each entry must be a name or a mapping with a 'scheme' key, got {item!r}")
    for name, _ in entries:
        if name not in SCHEMES:
            raise ConfigError("schemes", f"unknown scheme {name!r}; valid: {', '.join(SCHEMES)}")
    return entries


def compare_document(
    entries: list[tuple[str, dict[str, Any]]], length: int, *, dim: int | None = None,
    train_length: int | None = None, dtype: str | None = None, strict: bool = False,
) -> dict[str, Any]:
    """Run every property check on every entry; the JSON document ``pecli compare --json`` prints."""
    rows, footnotes = [], []
    for name, params in entries:
        params = dict(params)
        given_label = params.pop("label", None)
        if dim is not None and "dim" in scheme_parameters(SCHEMES[name]) and "dim" not in params:
            params["dim"] = dim
        scheme = build_scheme(name, params, length=length)
        options = CheckOptions(length=length, dtype=dtype, train_length=train_length, strict=strict)
        results = {r.property: r.to_dict() for r in run_checks(scheme, "all", options)}
        marks: dict[str, list[int]] = {}
        for prop, claim in claims_for(name).items():
            words = disagreement(claim, results[prop]["verdict"])
            if words:
                number = len(footnotes) + 1
                footnotes.append({
                    "number": number, "scheme": name, "property": prop, "source": claim.source,
                    "claim": claim.quote, "claimed": claim.holds, "measured": results[prop]["verdict"],
                    "text": f"{name}, {prop}: {claim.source}: “{claim.quote}”; {words}: {results[prop]['reason']}",
                })
                marks.setdefault(prop, []).append(number)
        shown = {k: v for k, v in params.items() if not isinstance(v, (dict, list, tuple))}
        label = given_label or name + (f"({', '.join(f'{k}={v}' for k, v in shown.items())})" if shown else "")
        rows.append({
            "label": label,
            "scheme": name,
            "params": scheme.params(),
            "kind": scheme.kind,
            "acts_on": ACTS_ON.get(scheme.kind, scheme.kind),
            "parameter_count": int(scheme.parameter_count),
            "value_range": _value_range(scheme, length),
            "max_wavelength": _max_wavelength(scheme),
            "results": results,
            "footnotes": marks,
        })
    return {"length": length, "properties": list(ANALYSES), "rows": rows, "footnotes": footnotes}


def _value_range(scheme, length: int) -> list[float]:
    values = vectors(scheme, length) if has_vectors(scheme) else bias_domain(scheme, length).rows
    return [float(np.min(values)) + 0.0, float(np.max(values)) + 0.0]


def _max_wavelength(scheme) -> float | None:
    inv_freq = getattr(scheme, "inv_freq", None)
    if inv_freq is None:
        return None
    finite = wavelengths_of(inv_freq)
    finite = finite[np.isfinite(finite)]
    return float(finite.max()) if finite.size else None

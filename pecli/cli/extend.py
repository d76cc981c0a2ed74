"""``pecli extend``: the RoPE changes that reach a longer context, measured, ranked, as config patches."""

from __future__ import annotations

import json as json_module
import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from pecli.cli.common import (
    CONFIG_OPTIONS, OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, check_output_flags, errors_to_exit, message,
    print_json, stdout_console,
)
from pecli.cli.options import CONFIG_PANEL, make_option
from pecli.config import MEMORY_SETTING, Setting, load_yaml, memory_budget, merge
from pecli.engines import names as engine_names
from pecli.errors import ConfigError
from pecli.extend.patches import methods

EXTEND_PANEL = "Extend"
#: What --pick takes besides a method.
PICK_EXTRA = ("given", "shipped")
TARGET = Setting("target", str, None, "the context to reach, in tokens (above the model's max_position_embeddings)")
PICK = Setting("pick", str, None, "the candidate whose patch is shown and written: a method, 'given' (--method) "
               "or 'shipped' (the family's own recipe)", default_text="the given recipe, else the first ranked",
               choices=(*methods(), *PICK_EXTRA))
METHOD = Setting("method", str, None, "measure this method with --factor beside the ranked candidates",
                 choices=methods())
FACTOR = Setting("factor", float, None, "scaling factor s of --method over the training length (for base: "
                 "what rope_theta is multiplied by)", minimum=1)
TRAIN_LENGTH = Setting("train_length", str, None, "the length the model was trained on, L₀",
                       default_text="the scaling's original length, else max_position_embeddings")
RUNTIME = Setting("runtime", str, None, "print the flags or overrides this engine needs for the chosen candidate",
                  choices=engine_names())
OUT = Setting("out", Path, None, "write the chosen candidate's config patch (JSON) to this file")
#: The keys a --config YAML file or --set may give.
KEYS = ("hf_config", "model", "target", "pick", "method", "factor", "train_length", "runtime", "out", "max_memory")


def extend(
    target: make_option(TARGET, panel=EXTEND_PANEL) = None,
    pick: make_option(PICK, panel=EXTEND_PANEL) = None,
    method: make_option(METHOD, panel=EXTEND_PANEL) = None,
    factor: make_option(FACTOR, panel=EXTEND_PANEL) = None,
    train_length: make_option(TRAIN_LENGTH, panel=EXTEND_PANEL) = None,
    runtime: make_option(RUNTIME, panel=EXTEND_PANEL) = None,
    out: make_option(OUT, panel=OUTPUT_PANEL) = None,
    hf_config: CONFIG_OPTIONS["hf_config"] = None,
    model: CONFIG_OPTIONS["model"] = None,
    config: CONFIG_OPTIONS["config"] = None,
    set_: CONFIG_OPTIONS["set"] = None,
    max_memory: make_option(MEMORY_SETTING, panel=CONFIG_PANEL) = None,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """The RoPE changes that take a model to --target tokens, measured there and ranked, each with its config patch.

    The candidates: yarn, llama3, dynamic (NTK), linear (position interpolation), a base raised to Men et
    al.'s bound for the target, and longrope for a model that carries LongRoPE factors; each built from the
    model's training frequencies and length (--train-length), in the form its config.json uses, keeping
    the scaling keys its attention still reads. --method with --factor measures a recipe of your own
    beside them, and a family's shipped recipe (Llama 3.1, Qwen2.5, Qwen3, Code Llama) is measured too.
    Each is read back with pecli's own config reader and measured at the target: angles training never
    saw, how far the pairs that turned fully move, the spacing of nearby positions, the logit scale,
    distinguishability and bfloat16 precision, and ranked by the rule its documentation page writes out.
    --out writes the chosen candidate's patch as JSON to merge into config.json; --runtime prints what
    vLLM, SGLang, llama.cpp or MLX need to serve it.
    """
    with errors_to_exit():
        check_output_flags(json, quiet)
        given = {"hf_config": hf_config, "model": model, "target": target, "pick": pick, "method": method,
                 "factor": factor, "train_length": train_length, "runtime": runtime, "out": out,
                 "max_memory": max_memory}
        options = merge(_from_file(config), {k: v for k, v in given.items() if v is not None}, _sets(set_))
        if options.get("target") is None:
            raise ConfigError("target", "give the context to reach (--target N)")
        for key in ("hf_config", "model", "out", "target", "train_length", "max_memory"):
            _scalar(key, options.get(key))
        pick_setting, method_setting = _method_settings()
        chosen = pick_setting.coerce(options["pick"]) if options.get("pick") is not None else None
        recipe = method_setting.coerce(options["method"]) if options.get("method") is not None else None
        scale = FACTOR.coerce(options["factor"]) if options.get("factor") is not None else None
        engine = RUNTIME.coerce(options["runtime"]) if options.get("runtime") is not None else None
        target_file = None
        if options.get("out") is not None:
            from pecli.io import check_target

            target_file = check_target(str(options["out"]), suffixes=(".json",), force=force,
                                       inputs=(config, options.get("hf_config")))
        budget = memory_budget(options.get("max_memory"))
        data, source = _config(options)
        from pecli.extend.report import extension_report
        from pecli.cli.progress import reporter_for
        from pecli.progress import reporting

        with reporting(reporter_for(quiet=quiet or json)):
            report = extension_report(data, options["target"], source, max_bytes=budget,
                                      train_length=options.get("train_length"), method=recipe, factor=scale, pick=chosen)
        picked = report.candidate(chosen)
        serving = _serving(engine, report, picked, data)
        if target_file is not None:
            from pecli.io import write_atomic

            text = json_module.dumps(picked.config_patch, indent=2) + "\n"
            write_atomic(target_file, lambda stream: stream.write(text.encode()), force=force)
        if json:
            document = report.to_dict()
            if serving is not None:
                document["runtime"] = serving.to_dict()
            print_json(document)
        elif not quiet:
            from pecli.render.extend import extend_renderable

            stdout_console().print(extend_renderable(report, picked, serving))
        if target_file is not None:
            message(f"wrote the {picked.label or picked.method} patch to {target_file}", quiet=quiet or json)


def _method_settings() -> tuple[Setting, Setting]:
    """--pick and --method with the methods of the scaling registry as it is now (the options' help was
    written at import; a scaling type registered since is taken too)."""
    import dataclasses

    return (dataclasses.replace(PICK, choices=(*methods(), *PICK_EXTRA)), dataclasses.replace(METHOD, choices=methods()))


def _sets(pairs: list[str] | None) -> dict:
    from pecli.config import parse_sets

    sets = parse_sets(pairs)
    unknown = sorted(set(sets) - set(KEYS))
    if unknown:
        raise ConfigError(unknown[0], f"is not a key of pecli extend (it takes {', '.join(KEYS)})")
    return sets


def _scalar(key: str, value) -> None:
    """A key that names a file, a model or a number takes one value, not a list or a mapping."""
    if isinstance(value, (dict, list, tuple, set)):
        raise ConfigError(key, f"expected one value, got a {'mapping' if isinstance(value, dict) else 'list'}")


def _serving(name: str | None, report, picked, config: dict):
    if name is None:
        return None
    from pecli.engines import engine

    return engine(name).serving(report.base, picked.config_patch, report.target, config)


def _from_file(path: str | None) -> dict:
    if path is None:
        return {}
    data = load_yaml(path)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(unknown[0], f"is not a key of pecli extend (it takes {', '.join(KEYS)})")
    return data


def _config(options: dict) -> tuple[dict, str]:
    """The model's parsed config.json and how messages name it."""
    from pecli.models.sources.config_json import read_config

    hf_config, model = options.get("hf_config"), options.get("model")
    if (hf_config is None) == (model is None):
        raise ConfigError("hf_config", "give the model: --hf-config FILE or --model ID (one of them)")
    if model is not None:
        from pecli.models.sources.hub import config_path

        path, source = config_path(str(model)), str(model)
    else:
        path, source = str(hf_config), str(hf_config)
    if options.get("out") is not None:  # the model's config.json in the hub's cache is an input too
        from pecli.io import refuse_inputs

        # a model's folder stands for its config.json (config_files.read_json): that file is what is read
        refuse_inputs(str(options["out"]), (path, os.path.join(path, "config.json")) if os.path.isdir(path) else (path,))
    return read_config(path, source), source

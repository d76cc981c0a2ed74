"""``pecli extend``: the RoPE changes that reach a longer context, measured, ranked, as config patches."""

from __future__ import annotations

import json as json_module
from pathlib import Path
from typing import Annotated, Optional

import typer

from pecli.cli.common import (
    CONFIG_OPTIONS, OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, check_output_flags, errors_to_exit, message,
    print_json, stdout_console,
)
from pecli.cli.options import CONFIG_PANEL, make_option
from pecli.config import MEMORY_SETTING, Setting, load_yaml, memory_budget, merge
from pecli.errors import ConfigError

EXTEND_PANEL = "Extend"
TARGET = Setting("target", str, None, "the context to reach, in tokens (above the model's max_position_embeddings)")
PICK = Setting("pick", str, None, "the candidate whose patch --out writes", default_text="the first ranked",
               choices=("yarn", "llama3", "dynamic", "base", "linear", "longrope"))
OUT = Setting("out", Path, None, "write the chosen candidate's config patch (JSON) to this file")
#: The keys a --config YAML file may give.
KEYS = ("hf_config", "model", "target", "pick", "out", "max_memory")


def extend(
    target: make_option(TARGET, panel=EXTEND_PANEL) = None,
    pick: make_option(PICK, panel=EXTEND_PANEL) = None,
    out: make_option(OUT, panel=OUTPUT_PANEL) = None,
    hf_config: CONFIG_OPTIONS["hf_config"] = None,
    model: CONFIG_OPTIONS["model"] = None,
    config: CONFIG_OPTIONS["config"] = None,
    max_memory: make_option(MEMORY_SETTING, panel=CONFIG_PANEL) = None,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """The RoPE changes that take a model to --target tokens, measured there and ranked, each with its config patch.

    The candidates: yarn, llama3, dynamic (NTK), linear (position interpolation), a base raised to Men et
    al.'s bound for the target, and longrope for a model that carries LongRoPE factors; each built from the
    model's pre-training frequencies and length, in the form its config.json uses. Each is read back with
    pecli's own config reader and measured at the target: angles pre-training never saw, how far the pairs
    that turned fully in pre-training move, the spacing of nearby positions, distinguishability and
    bfloat16 precision, and ranked by the rule its documentation page writes out. --out writes the first
    candidate's patch (--pick another) as JSON to merge into config.json.
    """
    with errors_to_exit():
        check_output_flags(json, quiet)
        given = {"hf_config": hf_config, "model": model, "target": target, "pick": pick, "out": out,
                 "max_memory": max_memory}
        options = merge(_from_file(config), {k: v for k, v in given.items() if v is not None})
        if options.get("target") is None:
            raise ConfigError("target", "give the context to reach (--target N)")
        chosen = PICK.coerce(options["pick"]) if options.get("pick") is not None else None
        target_file = None
        if options.get("out") is not None:
            from pecli.io import check_target

            target_file = check_target(Path(options["out"]), suffixes=(".json",), force=force)
        data, source = _config(options)
        from pecli.analysis.extension import extension_report
        from pecli.cli.progress import reporter_for
        from pecli.progress import reporting

        with reporting(reporter_for(quiet=quiet or json)):
            report = extension_report(data, options["target"], source, max_bytes=memory_budget(options.get("max_memory")))
        picked = report.candidate(chosen)
        if target_file is not None:
            from pecli.io import write_atomic

            text = json_module.dumps(picked.config_patch, indent=2) + "\n"
            write_atomic(target_file, lambda stream: stream.write(text.encode()), force=force)
        if json:
            print_json(report.to_dict())
        elif not quiet:
            _show(report, picked)
        if target_file is not None:
            message(f"wrote the {picked.method} patch to {target_file}", quiet=quiet or json)


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
    from pecli.config_files import read_json

    hf_config, model = options.get("hf_config"), options.get("model")
    if (hf_config is None) == (model is None):
        raise ConfigError("hf_config", "give the model: --hf-config FILE or --model ID (one of them)")
    if model is not None:
        from pecli.models.hub import config_path

        path, source = config_path(str(model)), str(model)
    else:
        path, source = str(hf_config), str(hf_config)
    data = read_json(path, "hf_config")
    if not isinstance(data, dict):
        raise ConfigError("hf_config", f"{source} must hold a JSON object")
    return data, source


LEGEND = ("unseen: pairs whose angle at the target is past any pre-training gave them; in range: the longest "
          "context without such pairs; shift: octaves the pairs that turned fully in pre-training move, on average; "
          "near: spacing of adjacent positions against pre-training's; attn: attention factor; "
          "fails: unseen-angles, distinguishability or bfloat16 at the target; *: frequencies change with the length")


def _show(report, picked) -> None:
    """The candidates side by side, then the chosen one's reason and patch."""
    from rich.console import Group
    from rich.syntax import Syntax
    from rich.text import Text

    from pecli.render.tables import number

    b = report.base
    from rich.table import Table

    table = Table(title=f"pecli extend: {b.pretraining:,} (pre-training) / {b.served:,} → {report.target:,} tokens",
                  title_justify="left")
    for header in ("#", "method", "unseen", "in range", "shift", "near", "attn", "fails"):
        table.add_column(header, justify="left" if header in ("method", "fails") else "right", no_wrap=True)
    for c in report.candidates:
        m = c.measures
        reach = "all" if m["angles_in_range_up_to"] is None else f"{m['angles_in_range_up_to']:,}"
        table.add_row(str(c.rank), c.method + ("*" if m["length_dependent"] else ""), str(m["unseen_pairs"]), reach,
                      number(m["trained_pair_shift"]), number(m["local_resolution"]), number(m["attention_factor"]),
                      ", ".join(c.failed) or "none")
    parts = [table, Text(LEGEND), Text(f"critical dimension (Liu et al. 2023): {report.critical_dimension} of {b.dim}")]
    parts += [Text(f"note: {note}") for note in report.notes]
    parts += [Text(f"{picked.method} (rank {picked.rank}): {picked.why}"),
              Syntax(json_module.dumps(picked.config_patch, indent=2), "json", theme="ansi_dark", background_color="default")]
    stdout_console().print(Group(*parts))

"""``pecli diff``: does a GGUF file (or another config) encode positions the way the model does?"""

from __future__ import annotations

import sys
import textwrap
from typing import Annotated, Optional

import typer

from pecli.cli.common import (
    CONFIG_PANEL, ForceOption, JsonOption, QuietOption, check_output_flags, errors_to_exit, print_json,
)
from pecli.cli.diff_collection import ClusterOption, JobsOption, OutOption
from pecli.errors import ConfigError

HfConfigs = Annotated[Optional[list[str]], typer.Option(
    "--hf-config", metavar="FILE", help="a HuggingFace config.json or model folder (twice: compare two configs, the first as the reference)",
    rich_help_panel=CONFIG_PANEL, show_default=False)]
Models = Annotated[Optional[list[str]], typer.Option(
    "--model", metavar="ORG/NAME", help="a HuggingFace model ORG/NAME[@REVISION] (twice: compare two revisions)",
    rich_help_panel=CONFIG_PANEL, show_default=False)]
Gguf = Annotated[Optional[list[str]], typer.Option(
    "--gguf", metavar="FILE", help="a GGUF file (a path, an https:// URL, hf://ORG/REPO/FILE.gguf or ORG/REPO:FILE.gguf: its "
    "header and position tensors are fetched, not its weights), compared with the config; with the config, "
    "several, a folder, a glob, @LIST or hf://ORG/REPO: a row per file; without it, twice: two files, the "
    "first the reference; with --runtime llama.cpp: the file the flags run on (needs pecli[gguf])",
    rich_help_panel=CONFIG_PANEL, show_default=False)]
Runtime = Annotated[Optional[str], typer.Option(
    "--runtime", help="an engine whose own rules, with its flags (--args), are compared with the config: llama.cpp, "
    "vllm, sglang, mlx",
    rich_help_panel=CONFIG_PANEL, show_default=False)]
Args = Annotated[Optional[str], typer.Option(
    "--args", help="the engine's command-line flags, quoted as one string", rich_help_panel=CONFIG_PANEL, show_default=False)]


def diff(
    hf_config: HfConfigs = None, model: Models = None, gguf: Gguf = None, runtime: Runtime = None, args: Args = None,
    json: JsonOption = False, quiet: QuietOption = False, out: OutOption = None, force: ForceOption = False,
    jobs: JobsOption = None, cluster: ClusterOption = None,
) -> None:
    """Compare two position plans group by group: exit 0 when they give the same numbers, 1 when not.

    The reference is the model's config.json (--hf-config or --model); the candidate is a GGUF file
    (--gguf), an engine's flags (--runtime llama.cpp --args "…", over the config or over a --gguf file), or
    a second config or GGUF file (the first given is the reference). Compared: the layout, the rotated components, every pair's frequency (1e-6
    relative), the attention factor, the context. Each difference is a line with the key on each side,
    both values and its effect. --json: {"same", "differences": [{"gguf_key", "hf_key", "gguf_value",
    "hf_value", "effect", …}]}; two configs name their sides old and new, an engine runtime (with "engine":
    {"name", "version", "source"}, "accepted", "refused", "served", "departures").
    Many GGUF files against one config (several --gguf, a folder, a glob, @LIST, hf://ORG/REPO): one row
    per file, same, different (its first difference) or unreadable (why); -o report.csv|.jsonl|.parquet,
    resumed by a rerun; --jobs N processes or --cluster ADDRESS; exit 0 only when every file is the same.
    """
    from pecli.cli import diff_collection

    with errors_to_exit():
        check_output_flags(json, quiet)
        ggufs, references = list(gguf or []), len(hf_config or []) + len(model or [])
        if diff_collection.is_collection(ggufs, references, out=out, jobs=jobs, cluster=cluster):
            if runtime is not None or args is not None:
                raise ConfigError("runtime", "llama.cpp's flags run on one GGUF file: give one --gguf with --runtime")
            from pecli.config import model_plan

            reference = model_plan(hf_config[0], None) if hf_config else model_plan(None, model[0])
            diff_collection.run(ggufs, reference, out=out, force=force, jobs=jobs, cluster=cluster, json=json, quiet=quiet)
        if out is not None or jobs is not None or cluster is not None:
            raise ConfigError("out", "-o, --jobs and --cluster read many GGUF files against one model: give --hf-config "
                              "FILE (or --model ID) and the files with --gguf")
        from pecli.diff_request import compared

        found = compared(list(hf_config or []), list(model or []), list(gguf or []), runtime, args)
    if json:
        print_json(found.to_dict())
    elif not quiet:
        width = _line_width()
        for line in found.lines() or [_same_line(found)]:
            sys.stdout.write(textwrap.fill(line, width, subsequent_indent="    ", break_long_words=False,
                                           break_on_hyphens=False) + "\n")
    raise typer.Exit(0 if found.same else 1)


def _line_width() -> int:
    """Where a difference wraps: the terminal's width (``COLUMNS`` when set), 80 for a pipe; at least 40."""
    import shutil

    return max(40, shutil.get_terminal_size((80, 24)).columns)


def _same_line(found) -> str:
    groups = len(found.reference.groups)
    return (f"same: {found.candidate.source} encodes positions as {found.reference.source} does "
            f"({groups} layer group{'s' if groups != 1 else ''} compared)")

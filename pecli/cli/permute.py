"""``pecli permute``: a q or k projection from one RoPE layout to the other (Meta ↔ HF Llama)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer

from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, check_output_flags, errors_to_exit, message, print_json,
)
from pecli.cli.options import CONFIG_PANEL, make_option
from pecli.config import MEMORY_SETTING, Setting, memory_budget
from pecli.errors import ConfigError
from pecli.weights.permute import LAYOUTS, check_weight, permute_layout

PERMUTE_PANEL = "Permute"
SUFFIXES = (".npy", ".safetensors")

SOURCE = Setting("from", str, None, "the layout the weights are in", choices=LAYOUTS)
TARGET = Setting("to", str, None, "the layout to write", choices=LAYOUTS)
HEADS = Setting("heads", int, None, "heads of the projection (k: num_key_value_heads)", minimum=1,
                default_text="rows / --head-dim")
HEAD_DIM = Setting("head_dim", int, None, "components per head", minimum=2, default_text="rows / --heads")
TENSOR = Setting("tensor", str, None, "the tensor of a .safetensors input (and its name in a .safetensors output)",
                 default_text="the file's only tensor")
OUT = Setting("out", Path, None, "output file: .npy or .safetensors")


def _layout_option(setting: Setting) -> Any:
    return Annotated[Optional[str], typer.Option(
        f"--{setting.name}", help=f"{setting.help}; one of {', '.join(LAYOUTS)}", rich_help_panel=PERMUTE_PANEL,
        show_default=False,
    )]


def permute(
    source_file: Annotated[Path, typer.Argument(metavar="INPUT", help="the weight: .npy, or .safetensors with --tensor")],
    source: _layout_option(SOURCE) = None,
    target: _layout_option(TARGET) = None,
    heads: make_option(HEADS, panel=PERMUTE_PANEL) = None,
    head_dim: make_option(HEAD_DIM, panel=PERMUTE_PANEL) = None,
    tensor: make_option(TENSOR, panel=PERMUTE_PANEL) = None,
    out: make_option(OUT, panel=OUTPUT_PANEL) = None,
    max_memory: make_option(MEMORY_SETTING, panel=CONFIG_PANEL) = None,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Move the rows of a q or k projection between the interleaved and half RoPE layouts.

    interleaved → half is the permutation transformers' convert_llama_weights_to_hf applies to Meta
    checkpoints, head by head (give k projections their num_key_value_heads); half → interleaved undoes
    it exactly. Writes .npy or .safetensors (in the input's dtype), whole or not at all.
    """
    with errors_to_exit():
        check_output_flags(json, quiet)
        source, target = SOURCE.coerce(_required(source, "from")), TARGET.coerce(_required(target, "to"))
        if out is None:
            raise ConfigError("out", "give the output file (--out FILE.npy or FILE.safetensors)")
        from pecli.io import check_target

        target_path = check_target(out, suffixes=SUFFIXES, force=force, inputs=(source_file,))
        budget = memory_budget(max_memory)
        weight, name = read_weight(source_file, tensor, budget)
        check_weight(weight)
        count = heads_of(weight.shape[0], heads, head_dim)
        permuted = permute_layout(weight, count, source, target)
        write_weight(target_path, permuted, name, force=force)
        if json:
            print_json({"input": str(source_file), "tensor": name, "from": source, "to": target, "heads": count,
                        "shape": list(permuted.shape), "dtype": str(permuted.dtype), "out": str(target_path)})
        message(f"wrote {target_path}", quiet=quiet or json)


def _required(value: str | None, key: str) -> str:
    if value is None:
        raise ConfigError(key, f"give the layout (--{key} {' or '.join(LAYOUTS)})")
    return value


def heads_of(rows: int, heads: int | None, head_dim: int | None) -> int:
    """The number of heads from ``--heads`` or ``--head-dim`` (both: they must agree with the rows)."""
    if heads is None and head_dim is None:
        raise ConfigError("heads", "give --heads (k projections: num_key_value_heads) or --head-dim")
    if heads is not None and head_dim is not None and heads * head_dim != rows:
        raise ConfigError("head_dim", f"{heads} heads of {head_dim} are not the {rows} rows of the weight")
    if heads is None:
        if rows % head_dim:
            raise ConfigError("head_dim", f"{rows} rows are not a whole number of heads of {head_dim}")
        heads = rows // head_dim
    return heads


def read_weight(path: Path, tensor: str | None, budget: int) -> tuple[np.ndarray, str]:
    """The weight in its own dtype (bfloat16 as ml_dtypes' bfloat16) and the name to write it under."""
    if path.suffix == ".npy":
        if tensor is not None:
            raise ConfigError("tensor", "applies to a .safetensors input")
        from pecli.io import load_array

        return load_array(path, key="input", max_bytes=budget // 2), "weight"
    from pecli.weights.checkpoint import Checkpoint

    checkpoint = Checkpoint(path, key="input")
    if tensor is None:
        names = checkpoint.names()
        if len(names) != 1:
            raise ConfigError("tensor", f"{path} holds {len(names)} tensors; choose one with --tensor")
        tensor = names[0]
    info = checkpoint.info(tensor)
    weight = checkpoint.read(tensor, max_bytes=budget // 2)
    return weight.astype(stored_dtype(info.dtype)), tensor


def stored_dtype(code: str) -> np.dtype:
    """The NumPy dtype of a safetensors float code (bfloat16 and float8 through ml_dtypes)."""
    import ml_dtypes

    from pecli.weights.checkpoint import RAW_DTYPES

    if code in RAW_DTYPES:
        return np.dtype(getattr(ml_dtypes, RAW_DTYPES[code]))
    return np.dtype({"F64": np.float64, "F32": np.float32, "F16": np.float16}[code])


def write_weight(target: Path, weight: np.ndarray, name: str, *, force: bool) -> None:
    """``weight`` as .npy (bfloat16 widened exactly to float32) or as tensor ``name`` of a .safetensors file."""
    from pecli.io import save_npy, write_atomic

    if target.suffix == ".npy":
        save_npy(target, weight, force=force)
        return
    from pecli.extras import optional_import

    numpy_api = optional_import("safetensors.numpy", "writing .safetensors")
    data = numpy_api.save({name: np.ascontiguousarray(weight)})
    write_atomic(target, lambda stream: stream.write(data), force=force)

"""Regenerate the engines' data tables (``pecli/engines/*_models.py``, ``mlx_args.py``, ``transformers_archs.py``)
from the engines' own installed code.

``python tools/regenerate.py engine-tables`` runs it as below. Run with the Python of a virtual environment outside the repository that has transformers (the version the
fixtures use, 5.24.0), pointing at the ``site-packages`` folders of the engines' environments::

    /work/ref/vllm/bin/python tools/engine_tables.py \\
        --vllm /work/ref/vllm/lib/python3.11/site-packages \\
        --sglang /work/ref/sglang/lib/python3.11/site-packages \\
        --mlx /work/ref/mlx/lib/python3.11/site-packages

Everything is read from source files (``ast``, regular expressions), except transformers' model-type mappings,
which are imported from the running interpreter's transformers. The measured versions: vLLM 0.33.0, SGLang
0.5.23, mlx-lm 0.32.2, transformers 5.24.0.
"""

from __future__ import annotations

import argparse
import ast
import glob
import os
import re
import textwrap
from pathlib import Path

ENGINES = Path(__file__).resolve().parent.parent / "pecli" / "engines"
#: ModelArgs fields kept with their defaults.
MLX_FIELDS = re.compile(r"^(rope_theta|rotary_emb_base|partial_rotary_factor|rotary_pct|rope_scaling|rope_traditional|"
                        r"head_dim|rope_parameters)$")
#: ModelArgs fields without a default kept as required (positions, contexts, windows, layer types).
MLX_REQUIRED = re.compile(r"rope|theta|position|rotary|head_dim|window|layer_types|nope|partial|mrope|alibi|ctx", re.I)


def words(items) -> str:
    return "\n".join(textwrap.wrap(" ".join(sorted(items)), 116))


def mapping_lines(mapping: dict[str, str]) -> str:
    lines, line = [], "    "
    for key, value in sorted(mapping.items()):
        item = f'"{key}": "{value}", '
        if len(line) + len(item) > 118:
            lines.append(line.rstrip())
            line = "    "
        line += item
    lines.append(line.rstrip())
    return "\n".join(lines)


def mlx_fields(site: str) -> dict[str, dict]:
    out = {}
    for path in sorted(glob.glob(os.path.join(site, "mlx_lm", "models", "*.py"))):
        source = open(path).read()
        found = re.search(r"class (\w*Args)\(BaseModelArgs\):\n(.*?)(?=\n\S|\n    def )", source, re.S)
        if not found:
            continue
        fields = {}
        for line in found.group(2).split("\n"):
            match = re.match(r"    (\w+): ([^=]+?)(?: = (.+))?$", line)
            if not match:
                continue
            name, _, default = match.groups()
            if default is None and MLX_REQUIRED.search(name):
                fields[name] = "REQUIRED"
            elif default is not None and MLX_FIELDS.match(name):
                text = default.strip().replace("_", "")
                try:
                    fields[name] = ast.literal_eval(text)
                except (ValueError, SyntaxError):
                    fields[name] = text
        if fields:
            out[Path(path).stem] = fields
    return out


def sglang_native(site: str) -> set[str]:
    names = set()
    for path in glob.glob(os.path.join(site, "sglang", "srt", "models", "*.py")):
        found = re.search(r"^EntryClass\s*=\s*(\[.*?\]|\w+)", open(path).read(), re.S | re.M)
        if found:
            names |= set(re.findall(r"\b([A-Z]\w+)\b", found.group(1)))
    return names


#: The suffixes of vLLM's generating architectures (``config/model.py``, ``_SUFFIX_TO_DEFAULTS``: runner generate).
VLLM_GENERATING_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel")


def vllm_registry(site: str) -> tuple[set[str], set[str], set[str]]:
    """vLLM's registered architectures, those of its Transformers backend, and the registered ones whose model class
    is no generating class (its name has none of :data:`VLLM_GENERATING_SUFFIXES`: an embedding model's)."""
    tree = ast.parse(open(os.path.join(site, "vllm", "model_executor", "models", "registry.py")).read())
    native, backend, not_generating = set(), set(), set()
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or not isinstance(node.value, ast.Dict):
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        name = getattr(target, "id", "")
        if not (name.startswith("_") and name.endswith("_MODELS")) or name.startswith(("_PREVIOUSLY", "_OOT")):
            continue
        keys = {key.value for key in node.value.keys if isinstance(key, ast.Constant)}
        (backend if name.startswith("_TRANSFORMERS") else native).update(keys)
        for key, value in zip(node.value.keys, node.value.values):
            if isinstance(key, ast.Constant) and isinstance(value, ast.Tuple) and len(value.elts) == 2 and \
                    isinstance(value.elts[1], ast.Constant) and not str(value.elts[1].value).endswith(VLLM_GENERATING_SUFFIXES):
                not_generating.add(key.value)
    return native, backend, not_generating


def transformers_base_classes() -> dict[str, str]:
    """transformers' base model class of each model type (``MODEL_MAPPING_NAMES``), which vLLM names a config
    without ``architectures`` by (``transformers_utils/config.py:939-949``)."""
    from transformers.models.auto import modeling_auto as auto

    return {k: v for k, v in auto.MODEL_MAPPING_NAMES.items() if isinstance(v, str)}


def transformers_tables() -> tuple[dict[str, str], set[str]]:
    import transformers
    from transformers.models.auto import modeling_auto as auto

    names = {**dict(auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES), **dict(auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES),
             **dict(auto.MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES)}
    names = {k: v for k, v in names.items() if isinstance(v, str)}
    compatible = set()
    for path in glob.glob(os.path.join(os.path.dirname(transformers.__file__), "models", "*", "modeling_*.py")):
        source = open(path).read()
        if "_supports_attention_backend = True" in source:
            compatible |= set(re.findall(r"^class (\w+)\(", source, re.M))
    return names, {v for v in names.values() if v not in compatible}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for engine in ("vllm", "sglang", "mlx"):
        parser.add_argument(f"--{engine}", required=True, help=f"the site-packages folder holding {engine}")
    given = parser.parse_args()
    header = '"""{}"""\n\nfrom __future__ import annotations\n\n'
    fields = mlx_fields(given.mlx)
    (ENGINES / "mlx_args.py").write_text(header.format(
        "mlx-lm 0.32.2's ``ModelArgs`` position fields, per model file (generated by tools/engine_tables.py): each\n"
        "field's default, or ``REQUIRED`` for a field without one (a config that lacks it is refused with a TypeError).\n"
        "The fields named rope_theta, rotary_emb_base, partial_rotary_factor, rotary_pct, rope_scaling, rope_traditional,\n"
        "head_dim, rope_parameters with their defaults; every field without a default whose name speaks of positions,\n"
        "contexts, windows or layer types. A model file's ``__post_init__`` is not in it.\n")
        + "from typing import Any\n\nREQUIRED = \"REQUIRED\"\n\nFIELDS: dict[str, dict[str, Any]] = {\n"
        + "".join(f"    {k!r}: {v!r},\n" for k, v in fields.items()) + "}\n")
    (ENGINES / "sglang_models.py").write_text(header.format(
        "SGLang 0.5.23's model registry (generated by tools/engine_tables.py): the architectures it has a model file\n"
        "for (the ``EntryClass`` of every ``sglang/srt/models/*.py``); another runs on its Transformers backend\n"
        "(``model_loader/utils.py:111-195``), which refuses a class of transformers that is not backend-compatible\n"
        "(:data:`pecli.engines.transformers_archs.BACKEND_INCOMPATIBLE`).\n")
        + f'NATIVE = frozenset("""\n{words(sglang_native(given.sglang))}\n""".split())\n')
    native, backend, not_generating = vllm_registry(given.vllm)
    base_classes = transformers_base_classes()
    (ENGINES / "vllm_models.py").write_text(header.format(
        "vLLM 0.33.0's model registry (``vllm/model_executor/models/registry.py``, generated by\n"
        "tools/engine_tables.py): :data:`NATIVE`, the architectures with a vLLM model file; :data:`TRANSFORMERS_BACKEND`,\n"
        "those it runs through its Transformers backend (``_TRANSFORMERS_SUPPORTED_MODELS``). An architecture in\n"
        "neither runs on the Transformers backend too (measured: T5, Helium, Persimmon, Phi-MoE).\n"
        ":data:`BASE_CLASS_OF`: for a config without ``architectures``, transformers 5.24.0's base model class of its\n"
        "model type (``MODEL_MAPPING_NAMES``), which vLLM names it by (``transformers_utils/config.py:939-949``);\n"
        ":data:`NOT_GENERATING`, those of them registered with a class that is no generating class.\n")
        + f'NATIVE = frozenset("""\n{words(native)}\n""".split())\n\n'
        + f'TRANSFORMERS_BACKEND = frozenset("""\n{words(backend)}\n""".split())\n\n'
        + f"BASE_CLASS_OF = {{\n{mapping_lines(base_classes)}\n}}\n\n"
        + f'NOT_GENERATING = frozenset("""\n{words(not_generating & set(base_classes.values()))}\n""".split())\n')
    architecture_of, incompatible = transformers_tables()
    (ENGINES / "transformers_archs.py").write_text(header.format(
        "transformers 5.24.0's architectures, as data (generated by tools/engine_tables.py): :data:`ARCHITECTURE_OF`,\n"
        "the class of each model type (speech seq2seq, else seq2seq, else causal-LM mapping of ``modeling_auto.py``);\n"
        ":data:`BACKEND_INCOMPATIBLE`, the classes without ``_supports_attention_backend``, which an engine's\n"
        "Transformers backend refuses.\n")
        + f"ARCHITECTURE_OF = {{\n{mapping_lines(architecture_of)}\n}}\n\n"
        + f'BACKEND_INCOMPATIBLE = frozenset("""\n{words(incompatible)}\n""".split())\n')


if __name__ == "__main__":
    main()

"""Hostile input, round four retried (issues 43 and 44): named cases, run in-process, each held to the contract.

Every case is a command line with the files it reads. The contract: exit 0, 1 or 2 (never 3, never a
traceback); exit 2 says exactly one line starting ``pecli: error:``; a refusal writes nothing; no input is
ever changed; ``--json`` prints one JSON document. Areas: each option of each command with wrong types and
extreme values, each config key pecli reads with values of the wrong kind, YAML ``--config``/``--set``,
outputs, GGUF files, and the cases named in issue 43. ``python tests/fuzz_cases_round4.py [AREA…]`` runs
them all and prints a tally per area; ``tests/test_fuzz_round4.py`` runs a fast sample in the suite.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from gguf_models import DEEPSEEK_V3, GEMMA3, LLAMA31, PHI3, convert, llama3_rope_freqs, llama_keys, write_gguf  # noqa: E402

#: Values of the wrong kind or at the edges, for an option (as text) and for a config key (as JSON).
OPTION_VALUES = ["nan", "-inf", "-1", "0", "1e308", "abc", "", "9" * 400, "1_000", "١٠", "[1]", "2.5"]
KEY_VALUES = [float("nan"), float("inf"), -1, 0, 1e308, 1e-320, "x", "8192", [8192], {"a": 1}, None, True, 1.5, 2**70,
              int("9" * 400), [], ""]

#: The scheme that makes each scheme option mean something (else the option is refused for the default scheme).
SCHEME_OF = {
    "bits": ["--scheme", "binary"], "seed": ["--scheme", "learned"], "std": ["--scheme", "learned"],
    "max-relative-position": ["--scheme", "relative"], "buckets": ["--scheme", "t5"], "max-distance": ["--scheme", "t5"],
    "heads": ["--scheme", "alibi"], "slope-dtype": ["--scheme", "alibi"], "spacing": [], "scale": [],
    "partial-rotary-factor": ["--scheme", "rope"], "rope-fraction": ["--scheme", "rope"], "scaling": ["--scheme", "rope"],
    "factor": ["--scheme", "rope", "--scaling", "linear"], "original-max-position": ["--scheme", "rope", "--scaling", "yarn", "--factor", "4"],
    "max-position-embeddings": ["--scheme", "rope", "--scaling", "yarn", "--factor", "4"],
    "context": ["--scheme", "rope", "--scaling", "dynamic", "--factor", "2"],
    "beta-fast": ["--scheme", "rope", "--scaling", "yarn", "--factor", "4"], "beta-slow": ["--scheme", "rope", "--scaling", "yarn", "--factor", "4"],
    "mscale": ["--scheme", "rope", "--scaling", "yarn", "--factor", "4"], "mscale-all-dim": ["--scheme", "rope", "--scaling", "yarn", "--factor", "4"],
    "attention-factor": ["--scheme", "rope", "--scaling", "yarn", "--factor", "4"],
    "low-freq-factor": ["--scheme", "rope", "--scaling", "llama3", "--factor", "8"],
    "high-freq-factor": ["--scheme", "rope", "--scaling", "llama3", "--factor", "8"],
    "short-factor": ["--scheme", "rope", "--dim", "8", "--scaling", "longrope", "--original-max-position", "8"],
    "long-factor": ["--scheme", "rope", "--dim", "8", "--scaling", "longrope", "--original-max-position", "8"],
    "xpos": ["--scheme", "rope"], "inv-freq": ["--scheme", "rope", "--dim", "4"],
    "grid": ["--scheme", "rope-nd"], "combine": ["--scheme", "sinusoidal-nd"], "indexing": ["--scheme", "rope-nd"],
    "prefix-tokens": ["--scheme", "rope-nd"], "axis-dims": ["--scheme", "rope-nd"],
    "mrope-section": ["--scheme", "mrope"], "sequence": ["--scheme", "mrope"], "spatial-merge-size": ["--scheme", "mrope"],
    "temporal": ["--scheme", "mrope"], "second-per-grid-t": ["--scheme", "mrope"], "tokens-per-second": ["--scheme", "mrope"],
    "weights": ["--scheme", "learned"], "tensor": ["--scheme", "learned"], "row-offset": ["--scheme", "learned"],
}
#: Options whose values name files or drive other options; tried in the outputs and files areas instead.
SKIPPED = {"cluster", "out", "plot", "config", "hf-config", "model", "gguf", "set", "weights", "cos", "sin", "slopes",
           "bias", "table", "position-ids", "args", "runtime", "source_file", "subject", "prop", "kind", "grid_values"}
#: Each command's smallest run (what an option is added to).
BASE = {
    "encode": ["encode", "-L", "16"], "check": ["check", "all", "-L", "16"], "compare": ["compare", "-L", "16"],
    "wavelengths": ["wavelengths", "--scheme", "rope", "--dim", "16"], "plot": ["plot", "heatmap", "-L", "16", "-o", "p.png"],
    "inspect": ["inspect", "scheme"], "permute": ["permute", "k.npy", "--from", "interleaved", "--to", "half", "--heads", "2", "-o", "k2.npy"],
    "verify": ["verify", "--scheme", "rope", "--dim", "8", "--cos", "cos.npy", "--sin", "sin.npy"],
    "extend": ["extend", "--hf-config", "llama.json", "--target", "32768"],
    "sweep": ["sweep", "distinguishability", "--grid", "dim=8,16", "-L", "16", "--yes"],
    "diff": ["diff", "--hf-config", "llama.json", "--gguf", "llama31.gguf"],
}
#: The config keys pecli reads, as paths in the config (a dotted path reaches into rope_scaling).
CONFIG_KEYS = ["model_type", "hidden_size", "num_attention_heads", "num_hidden_layers", "head_dim",
               "max_position_embeddings", "rope_theta", "partial_rotary_factor", "rope_scaling",
               "rope_scaling.rope_type", "rope_scaling.factor", "rope_scaling.low_freq_factor",
               "rope_scaling.high_freq_factor", "rope_scaling.original_max_position_embeddings", "layer_types",
               "num_key_value_heads", "sliding_window", "rope_parameters", "torch_dtype", "use_sliding_window",
               "rope_interleaved", "no_rope_layers", "attention_multiplier", "query_pre_attn_scalar"]
GEMMA_KEYS = ["rope_local_base_freq", "sliding_window_pattern", "query_pre_attn_scalar", "sliding_window",
              "head_dim", "rope_scaling.factor", "layer_types"]
DEEPSEEK_KEYS = ["qk_rope_head_dim", "qk_nope_head_dim", "rope_scaling.mscale", "rope_scaling.mscale_all_dim",
                 "rope_scaling.beta_fast", "rope_scaling.beta_slow", "rope_scaling.factor", "kv_lora_rank"]
PHI3_KEYS = ["rope_scaling.short_factor", "rope_scaling.long_factor", "original_max_position_embeddings"]


def make_inputs(folder: Path) -> None:
    """The files the cases read: sample model configs, their GGUF conversions, arrays for verify and permute."""
    os.chdir(folder)
    for name, config in (("llama.json", LLAMA31), ("gemma.json", GEMMA3), ("deepseek.json", DEEPSEEK_V3),
                         ("phi3.json", PHI3)):
        Path(name).write_text(json.dumps(config))
    for name in ("llama31", "gemma3", "phi3", "deepseek_v3"):
        path, _ = convert(folder, name)
        os.replace(path, f"{name}.gguf")
    rng = np.random.default_rng(0)
    np.save("k.npy", rng.standard_normal((16, 8)).astype(np.float32))
    angles = np.arange(16)[:, None] * 10000.0 ** (-np.arange(0, 8, 2) / 8)
    np.save("cos.npy", np.cos(np.concatenate([angles, angles], 1)))
    np.save("sin.npy", np.sin(np.concatenate([angles, angles], 1)))
    Path("ok.yaml").write_text("scheme: rope\ndim: 16\nlength: 16\n")


def mutated(config: dict, key: str, value) -> dict:
    config = json.loads(json.dumps(config))
    *parents, last = key.split(".")
    node = config
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[last] = value
    return config


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): (b"<link>" + os.readlink(p).encode() if p.is_symlink() else
                                         p.read_bytes() if p.is_file() else b"<other>")
            for p in folder.rglob("*") if not p.is_fifo()}


class Runner:
    """Runs cases in-process in one folder and keeps a tally per area."""

    def __init__(self, folder: Path, every: int = 1) -> None:
        import typer

        from pecli.cli import build_app

        self.folder = folder
        self.group = typer.main.get_command(build_app())
        self.tally: dict[str, list[int]] = {}
        self.failures: list[str] = []
        self.notes: list[str] = []
        self.every, self.seen = every, 0  # run every n-th case only (the suite's fast sample)

    def __call__(self, area: str, args: list[str], *, codes=(0, 1, 2), writes=True, env=None) -> tuple[int, str, str]:
        from pecli.cli import run

        self.seen += 1
        if (self.seen - 1) % self.every:
            return -1, "", ""
        os.chdir(self.folder)
        before = snapshot(self.folder)
        out, err = io.StringIO(), io.StringIO()
        saved = {k: os.environ.get(k) for k in (env or {})}
        os.environ.update(env or {})
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = run([str(a) for a in args], command=self.group)
        except BaseException as error:  # noqa: BLE001 - a case that escapes run() is a failure to report
            code, err = 99, io.StringIO(f"escaped run(): {error!r}")
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        text, stdout = err.getvalue(), out.getvalue()
        problems = []
        if code not in codes:
            problems.append(f"exit {code}")
        if "Traceback" in text:
            problems.append("traceback")
        if code == 2 and (text.count("\n") != 1 or not text.startswith("pecli: error: ")):
            problems.append("not one error line")
        after = snapshot(self.folder)
        changed = [name for name in before if after.get(name) != before[name]]
        outputs = {str(a) for o, a in zip(args, args[1:]) if o in ("-o", "--out", "--plot")}
        inputs = {str(a) for a in args} - outputs
        for name in changed:
            resolved = os.path.relpath(os.path.realpath(self.folder / name), self.folder)
            if name in inputs or resolved in inputs or any(
                    os.path.relpath(os.path.realpath(self.folder / o), self.folder) in inputs for o in outputs if o == name):
                problems.append(f"overwrote the input {name}")
            elif "--force" not in args:
                problems.append(f"overwrote {name} without --force")
            path = self.folder / name  # the next case reads the file as it was
            if before[name].startswith(b"<link>"):
                path.unlink(missing_ok=True)
                path.symlink_to(before[name][6:].decode())
            elif before[name] != b"<other>":
                path.unlink(missing_ok=True)
                path.write_bytes(before[name])
        added = sorted(set(after) - set(before))
        if added and (code == 2 or not writes):
            problems.append(f"wrote {added} on exit {code}")
        if "--json" in args and code in (0, 1):
            try:
                json.loads(stdout)
            except ValueError:
                problems.append("--json output is not one JSON document")
        for name in added:  # leave the folder as it was
            path = self.folder / name
            if path.is_file() or path.is_symlink():
                path.unlink()
        for name in sorted(added, reverse=True):
            path = self.folder / name
            if path.is_dir():
                path.rmdir()
        held = not problems
        self.tally.setdefault(area, [0, 0])[0 if held else 1] += 1
        if not held:
            self.failures.append(f"[{area}] pecli {' '.join(map(str, args))[:300]!r}: {', '.join(problems)}: {text[:400]!r}")
        return code, stdout, text


# -- the areas ------------------------------------------------------------------------------------------------
def options_area(r: Runner, values=OPTION_VALUES) -> None:
    """Every option of every command, with each value of the wrong kind."""
    for name, command in sorted(r.group.commands.items()):
        for param in command.params:
            if param.param_type_name != "option" or getattr(param, "is_flag", False) or param.name.replace("_", "-") in SKIPPED \
                    or param.name in SKIPPED:
                continue
            option = param.opts[0]
            context = SCHEME_OF.get(option.lstrip("-"), [])
            base = list(BASE[name])
            if context and name in ("encode", "check", "compare", "wavelengths", "plot", "inspect", "verify", "sweep"):
                if "--scheme" in base:
                    i = base.index("--scheme")
                    del base[i:i + 2]
                    if name == "verify" and context[1] != "rope":
                        continue  # verify's arrays are RoPE's
                base += context if name != "compare" else context[2:]
            for value in values:
                r("options", [*base, option, value])


def config_keys_area(r: Runner) -> None:
    """Each config key pecli reads, with values of the wrong kind, through inspect, wavelengths and encode -o."""
    models = [("llama.json", LLAMA31, CONFIG_KEYS), ("gemma.json", GEMMA3, GEMMA_KEYS),
              ("deepseek.json", DEEPSEEK_V3, DEEPSEEK_KEYS), ("phi3.json", PHI3, PHI3_KEYS)]
    for _, config, keys in models:
        for key in keys:
            for value in KEY_VALUES:
                path = r.folder / "bad.json"
                try:
                    text = json.dumps(mutated(config, key, value))
                except ValueError:
                    continue
                path.write_text(text)
                for args in (["inspect", "config", "--hf-config", "bad.json", "--json"], ["wavelengths", "--hf-config", "bad.json", "--json"],
                             ["encode", "--hf-config", "bad.json", "-L", "8", "-o", "e.npy"]):
                    code, _, err = r("config keys", args)
                    if code == 0 and not err and (isinstance(value, (str, list, dict)) or value is None or
                                                  (isinstance(value, float) and not math.isfinite(value))):
                        r.notes.append(f"quiet exit 0: {key}={value!r:.40} via {args[0]}")
                path.unlink()


def yaml_area(r: Runner) -> None:
    """YAML --config and --set: types, tags, aliases, typos, huge numbers."""
    docs = ["dim: [1, 2]", "dim: .nan", "dim: 1e400", "length: -1", "scheme: !!python/object:os.system x",
            "dim: &a 8\nlength: *a", "rope_thetta: 10000\nscheme: rope", "scheme: rope\nbase: '500000'",
            "scheme: rope\nbase: 0x10", "scheme: rope\nbase: 1_000", "? [a]\n: 1", "dim: 8\ndim: 16", "- 1",
            "scheme: rope\nscaling: {type: yarn}", "scheme: rope\nfactor: 4", "scheme: rope\nout: /dev/full",
            "out: ok.yaml\nforce: true", "hf_config: llama.json\nlength: 8", "hf_config: [1]",
            "scheme: rope\ndim: 8\nlength: 8\nlayer: 99", "dim: " + "9" * 5000, "\x00", "dim: 8\n\xff",
            "scheme: rope\nmrope_section: 'abc'", "length: 2**70", "length: 1e20", "preset: nope"]
    for i, doc in enumerate(docs):
        name = f"c{i}.yaml"
        (r.folder / name).write_bytes(doc.encode("utf-8", "surrogateescape") if isinstance(doc, str) else doc)
        for command in (["encode"], ["check", "all"], ["wavelengths"]):
            r("yaml", [*command, "--config", name, "-L", "16"])
        (r.folder / name).unlink()
    sets = ["dim=", "=8", "dim", "dim=8=9", "rope_thetta=1", "scheme=rope", "base=nan", "base=[1]", "length=1e400",
            "hf_config=llama.json", "out=ok.yaml", "force=yes", "dim=" + "9" * 100000, "x.y=1", "scaling.factor=4",
            "dim=!!binary AA==", "dim=*a", "dim=&a 8"]
    for s in sets:
        for command in (["encode"], ["check", "all"], ["extend", "--hf-config", "llama.json", "--target", "32768"],
                        ["wavelengths", "--scheme", "rope"]):
            r("yaml", [*command, "--set", s, "-L", "16"] if command[0] != "extend" else [*command, "--set", s])


def outputs_area(r: Runner) -> None:
    """-o to folders, existing files, inputs, symlinks, /dev/full, read-only folders, odd names."""
    (r.folder / "dir").mkdir(exist_ok=True)
    ro = r.folder / "ro"
    ro.mkdir(exist_ok=True)
    ro.chmod(0o555)
    (r.folder / "exists.npy").write_bytes(b"keep")
    (r.folder / "exists.png").write_bytes(b"keep")
    if not (r.folder / "link.npy").is_symlink():
        (r.folder / "link.npy").symlink_to("k.npy")
        (r.folder / "dangling.npy").symlink_to("nowhere/x.npy")
    targets = ["dir", "dir/", "exists.npy", "k.npy", "link.npy", "dangling.npy", "/dev/full", "ro/x.npy", "x.npy/",
               "nowhere/x.npy", "", ".", "-", "x.txt", "x.NPY", "a\nb.npy", "x" * 300 + ".npy", "/dev/null", "/proc/x.npy"]
    commands = {
        "encode": (["encode", "-L", "8"], ".npy"),
        "encode-logit": (["encode", "--hf-config", "llama.json", "--logit-scale", "-L", "8"], ".npy"),
        "wavelengths": (["wavelengths", "--scheme", "rope", "--dim", "8"], ".csv"),
        "plot": (["plot", "heatmap", "-L", "8"], ".png"),
        "permute": (["permute", "k.npy", "--from", "interleaved", "--to", "half", "--heads", "2"], ".npy"),
        "extend": (["extend", "--hf-config", "llama.json", "--target", "32768"], ".json"),
        "sweep": (["sweep", "distinguishability", "--grid", "dim=8,16", "-L", "8", "--yes"], ".csv"),
        "verify": (["verify", "--scheme", "rope", "--dim", "8", "--cos", "cos.npy", "--sin", "sin.npy", "--plot"], ".png"),
    }
    for label, (args, suffix) in commands.items():
        for target in targets + ["exists" + suffix, "llama.json", "k.npy"]:
            option = ["--plot", target] if label == "verify" else ["-o", target]
            base = args[:-1] if label == "verify" else args
            for force in ([], ["--force"]):
                code, _, err = r("outputs", [*base, *option, *force])
        # writing over an input, --force or not, is refused (extend's config, permute's source)
    r("outputs", ["extend", "--hf-config", "llama.json", "--target", "32768", "-o", "llama.json", "--force"], codes=(2,))
    r("outputs", ["permute", "k.npy", "--from", "interleaved", "--to", "half", "--heads", "2", "-o", "k.npy", "--force"], codes=(2,))
    r("outputs", ["permute", "k.npy", "--from", "interleaved", "--to", "half", "--heads", "2", "-o", "link.npy", "--force"], codes=(2,))
    ro.chmod(0o755)


def gguf_area(r: Runner) -> None:
    """GGUF files with keys of the wrong type or value, through wavelengths, inspect and diff."""
    config = dict(LLAMA31)
    base_keys = llama_keys(config)
    bad = {"rope.freq_base": [True, "x", 0.0, -1.0, float("nan"), float("inf"), 1e38], "context_length": [0, 2**31, "x"],
           "rope.dimension_count": [0, 3, 100000, "x"], "attention.head_count": [0, "x"],
           "rope.scaling.type": ["bogus", 1], "rope.scaling.factor": [0.0, -1.0, float("nan"), "x"],
           "block_count": [0, 10**9]}
    for key, values in bad.items():
        for value in values:
            keys = dict(base_keys)
            keys[key] = value
            try:
                write_gguf(r.folder / "bad.gguf", "llama", keys, {"rope_freqs.weight": llama3_rope_freqs(config)})
            except Exception:  # noqa: BLE001 - gguf's writer refuses some types: nothing to test
                continue
            for args in (["wavelengths", "--gguf", "bad.gguf"], ["inspect", "config", "--gguf", "bad.gguf"],
                         ["diff", "--hf-config", "llama.json", "--gguf", "bad.gguf"], ["encode", "--gguf", "bad.gguf", "-L", "8"]):
                code, _, err = r("gguf", args)
                if code == 0 and key == "rope.freq_base" and not isinstance(value, float):
                    r.notes.append(f"gguf {key}={value!r} read, exit 0 via {args[0]}")
            (r.folder / "bad.gguf").unlink()
    for name in ("llama31", "gemma3", "phi3", "deepseek_v3"):
        for args in (["inspect", "config", "--gguf", f"{name}.gguf"], ["wavelengths", "--gguf", f"{name}.gguf"],
                     ["diff", "--gguf", f"{name}.gguf", "--gguf", f"{name}.gguf"], ["diff", "--gguf", f"{name}.gguf", "--json"]):
            r("gguf", args)
    os.mkfifo(r.folder / "fifo.gguf")
    for args in (["wavelengths", "--gguf", "fifo.gguf"], ["diff", "--hf-config", "llama.json", "--gguf", "fifo.gguf"],
                 ["inspect", "config", "--gguf", "fifo.gguf"], ["diff", "--hf-config", "fifo.gguf", "--gguf", "llama31.gguf"]):
        r("gguf", args, codes=(2,))
    (r.folder / "fifo.gguf").unlink()
    (r.folder / "trunc.gguf").write_bytes((r.folder / "llama31.gguf").read_bytes()[:40])
    for args in (["wavelengths", "--gguf", "trunc.gguf"], ["diff", "--hf-config", "llama.json", "--gguf", "trunc.gguf"]):
        r("gguf", args, codes=(2,))
    (r.folder / "trunc.gguf").unlink()


def issue43_area(r: Runner) -> None:
    """The cases named in issue 43, each as the issue spells it."""
    r.folder.joinpath("layers.json").write_text(json.dumps({**LLAMA31, "num_hidden_layers": 6,
                                                             "layer_types": ["full_attention"] * 600}))
    r("issue 43", ["inspect", "config", "--hf-config", "layers.json"], codes=(2,))
    r("issue 43", ["encode", "--hf-config", "layers.json", "-L", "8", "-o", "l.npy"], codes=(2,))
    for key, value in (("max_position_embeddings", float("nan")), ("max_position_embeddings", [8192]),
                       ("max_position_embeddings", "8192"), ("model_type", [1]), ("model_type", {"a": 1}),
                       ("rope_scaling.factor", float("nan")), ("rope_scaling.factor", 1e308), ("_pecli_underived", 1),
                       ("rope_theta", "500000"), ("partial_rotary_factor", "0.5"), ("rope_theta", 1),
                       ("model_type", 123), ("model_type", 1.5), ("model_type", True)):
        r.folder.joinpath("bad.json").write_text(json.dumps(mutated(LLAMA31, key, value)))
        expected = (2,) if key != "rope_theta" or value != 1 else (0, 1, 2)
        for args in (["inspect", "config", "--hf-config", "bad.json"], ["wavelengths", "--hf-config", "bad.json"]):
            code, _, err = r("issue 43", args, codes=expected)
    for value in ("yarn", [1], 7):
        r.folder.joinpath("bad.json").write_text(json.dumps({**LLAMA31, "rope_scaling": value}))
        r("issue 43", ["inspect", "config", "--hf-config", "bad.json"], codes=(2,))
    for value in ("x", [1]):
        r.folder.joinpath("bad.json").write_text(json.dumps({**GEMMA3, "rope_parameters": {
            "sliding_attention": value, "full_attention": {"rope_type": "default", "rope_theta": 1e6}}}))
        r("issue 43", ["inspect", "config", "--hf-config", "bad.json"], codes=(2,))
    r("issue 43", ["encode", "--hf-config", "llama.json", "--logit-scale", "--parts", "bogus", "-L", "8"], codes=(2,))
    r("issue 43", ["encode", "-L", "8", "-o", "l.npy/"], codes=(2,))
    r("issue 43", ["extend", "--hf-config", "llama.json", "--target", "32768", "-o", "llama.json", "--force"], codes=(2,))
    r("issue 43", ["extend", "--hf-config", "llama.json", "--target", "32768", "--set", "beta_fast=" + "1" * 100000])
    r("issue 43", ["verify", "--scheme", "rope", "--dim", "8", "--cos", "cos.npy", "--sin", "sin.npy", "--max-memory", "1K"],
      codes=(2,))
    r("issue 43", ["encode", "--hf-config", "deepseek.json", "--logit-scale", "-L", "1e400"], codes=(2,))
    r.folder.joinpath("layers.json").unlink()
    r.folder.joinpath("bad.json").unlink()


def library_area(r: Runner) -> None:
    """The library's functions with bad arguments: one PecliError/ValueError/TypeError, never MemoryError or worse."""
    import pecli

    rope = pecli.build_scheme("rope", {"dim": 8})
    calls = {
        "encode huge range": lambda: pecli.encode(rope, range(3 * 10**7)),
        "encode 2^70": lambda: pecli.encode(rope, [2**70]),
        "encode nan pos": lambda: pecli.encode(rope, [float("nan")]),
        "encode str pos": lambda: pecli.encode(rope, ["a"]),
        "encode None scheme": lambda: pecli.encode(None),
        "encode dtype": lambda: pecli.encode(rope, range(4), dtype="int8"),
        "encode max_memory": lambda: pecli.encode(rope, range(4), max_memory="-1"),
        "build dim str": lambda: pecli.build_scheme("rope", {"dim": "x"}),
        "build dim huge": lambda: pecli.build_scheme("rope", {"dim": 10**12}),
        "build unknown": lambda: pecli.build_scheme("ropee"),
        "build params list": lambda: pecli.build_scheme("rope", [1]),
        "build length": lambda: pecli.build_scheme("rope", {"dim": 8}, length=-1),
        "t5 huge": lambda: pecli.encode(pecli.build_scheme("t5", length=50000)),
        "alibi huge": lambda: pecli.encode(pecli.build_scheme("alibi", {"heads": 8}, length=30000)),
        "check bad prop": lambda: pecli.check(rope, "nope"),
        "check length": lambda: pecli.check(rope, "all", length=-5),
        "check str scheme": lambda: pecli.check("rope", "all"),
        "compare empty": lambda: pecli.compare([]),
        "compare junk": lambda: pecli.compare([1, 2]),
        "plot kind": lambda: pecli.plot("nope", rope),
        "spectrum alibi": lambda: pecli.spectrum(pecli.build_scheme("alibi")),
        "model_plan junk": lambda: pecli.model_plan(42),
        "model_plan missing": lambda: pecli.model_plan("/nonexistent.json"),
        "model_plan gguf": lambda: pecli.model_plan(str(r.folder / "llama31.gguf")),
        "model_plan dir": lambda: pecli.model_plan(str(r.folder)),
        "model_plan nan": lambda: pecli.model_plan({**LLAMA31, "rope_theta": float("nan")}),
        "diff junk": lambda: pecli.diff(1, 2),
        "diff gguf": lambda: pecli.diff(str(r.folder / "llama.json"), str(r.folder / "llama31.gguf")),
        "verify no arrays": lambda: pecli.verify(rope),
        "verify junk": lambda: pecli.verify(rope, cos=[[1, 2]]),
        "verify 2^60": lambda: pecli.verify(rope, [2**60], cos=np.ones((1, 8)), sin=np.zeros((1, 8))),
        "extension target": lambda: pecli.extension_report(LLAMA31, "x"),
        "extension path": lambda: pecli.extension_report(str(r.folder / "llama.json"), 32768),
        "extension nan": lambda: pecli.extension_report(LLAMA31, float("nan")),
        "preset unknown": lambda: pecli.preset("nope"),
        "sweep junk": lambda: pecli.sweep("distinguishability", {"dim": "x"}),
        "model_scheme layer": lambda: pecli.model_scheme(LLAMA31, layer=999),
        "base bound": lambda: pecli.base_lower_bound(-1, 8),
    }
    from pecli.errors import PecliError

    for label, call in calls.items():
        try:
            call()
            held = True
        except (PecliError, ValueError, TypeError, KeyError, FileNotFoundError, OSError) as error:
            held = "numpy" not in type(error).__module__ and len(str(error).splitlines()) <= 2
            if not held:
                r.failures.append(f"[library] {label}: {type(error).__name__}: {str(error)[:200]}")
        except Exception as error:  # noqa: BLE001
            held = False
            r.failures.append(f"[library] {label}: {type(error).__name__}: {str(error)[:200]}")
        r.tally.setdefault("library", [0, 0])[0 if held else 1] += 1


def process_area(r: Runner) -> None:
    """The real command in a child: pipes closed early, /dev/full, Ctrl-C and SIGTERM mid-write, NO_COLOR,
    tables at 60, 80 and 200 columns."""
    import signal
    import subprocess
    import time

    pecli = [sys.executable, "-m", "pecli"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}

    def tally(held: bool, label: str, detail: str = "") -> None:
        r.tally.setdefault("process", [0, 0])[0 if held else 1] += 1
        if not held:
            r.failures.append(f"[process] {label}: {detail[:400]!r}")

    for args in (["wavelengths", "--hf-config", "llama.json"], ["encode", "-L", "4096", "--json"], ["compare", "-L", "256"],
                 ["check", "all", "-L", "256", "--json"], ["inspect", "config", "--hf-config", "gemma.json"],
                 ["extend", "--hf-config", "phi3.json", "--target", "262144"], ["--help"], ["encode", "--help"]):
        done = subprocess.run(" ".join(pecli + args) + " | head -c 20 >/dev/null; echo ${PIPESTATUS[0]}", shell=True,
                              executable="/bin/bash", capture_output=True, text=True, env=env, cwd=r.folder)
        code = done.stdout.strip()
        tally(code in ("0", "141") and "Traceback" not in done.stderr and not done.stderr.strip(), f"{args} | head", code + done.stderr)
        with open("/dev/full", "w") as full:
            done = subprocess.run(pecli + args, stdout=full, stderr=subprocess.PIPE, text=True, env=env, cwd=r.folder)
        tally(done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith("pecli: error:"),
              f"{args} > /dev/full", f"{done.returncode} {done.stderr}")
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        for args in (["encode", "-L", "3000000", "--dim", "256", "-o", "big.npy"],
                     ["encode", "--hf-config", "deepseek.json", "--logit-scale", "-L", "300000000", "-o", "big.npy", "--max-memory", "8G"],
                     ["plot", "heatmap", "-L", "4000", "--dim", "512", "-o", "big.png"]):
            before = set(os.listdir(r.folder))
            child = subprocess.Popen(pecli + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                                     cwd=r.folder)
            time.sleep(4)
            child.send_signal(sig)
            err = child.communicate(timeout=60)[1]
            left = set(os.listdir(r.folder)) - before
            held = (child.returncode == code and not left) or (child.returncode == 0 and left <= {"big.npy", "big.png"})
            tally(held and "Traceback" not in err, f"{sig.name} mid {args}", f"{child.returncode} left {left} {err}")
            for name in left:
                (r.folder / name).unlink()
    for args in (["compare", "-L", "64"], ["wavelengths", "--hf-config", "gemma.json"], ["check", "all", "-L", "64"]):
        done = subprocess.run(pecli + args, capture_output=True, text=True, env={**env, "NO_COLOR": "1", "FORCE_COLOR": "1"},
                              cwd=r.folder)
        tally("\x1b[" not in done.stdout + done.stderr, f"NO_COLOR {args}", done.stdout[:200])
    names = ("max_position_embeddings", "original_max_position_embeddings", "partial_rotary_factor", "rope_scaling",
             "query_pre_attn_scalar", "sliding_window", "mscale_all_dim", "rope_local_base_freq")
    commands = [["wavelengths", "--hf-config", "gemma.json"], ["extend", "--hf-config", "llama.json", "--target", "262144"],
                ["extend", "--hf-config", "deepseek.json", "--target", "655360"], ["compare", "-L", "64"],
                ["check", "all", "--scheme", "alibi", "-L", "64"], ["inspect", "config", "--hf-config", "deepseek.json"],
                ["inspect", "config", "--hf-config", "gemma.json"], ["inspect", "config", "--gguf", "phi3.gguf"],
                ["diff", "--hf-config", "phi3.json", "--gguf", "gemma3.gguf"], ["encode", "--hf-config", "phi3.json", "-L", "8"],
                ["sweep", "distinguishability", "--grid", "dim=8,16", "-L", "8", "--yes"], ["wavelengths", "--hf-config", "phi3.json"],
                ["check", "all", "--hf-config", "gemma.json", "-L", "64"], ["verify", "--scheme", "rope", "--dim", "8", "--cos",
                "cos.npy", "--sin", "sin.npy"], ["compare", "--hf-config", "gemma.json", "-L", "64"]]
    for columns in (60, 80, 200):  # on a terminal (script(1) gives the child a pty of that width)
        for args in commands:
            line = f"stty cols {columns} rows 50; COLUMNS={columns} NO_COLOR=1 " + " ".join(pecli + args)
            done = subprocess.run(["script", "-qec", line, "/dev/null"], capture_output=True, env=env, cwd=r.folder)
            text = "\n".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw.split("\r")[-1] if raw.strip("\r") else "")
                             for raw in done.stdout.decode("utf-8", "replace").replace("\r\n", "\n").split("\n"))
            lines = [x for x in text.splitlines() if not x.startswith(("pecli:", "note:", "warning:"))]  # stderr's one-liners
            wide = [x for x in lines if len(x.rstrip()) > columns]
            split = [name for name in names if name not in text and any(
                x.rstrip().endswith(name[:k]) for x in lines for k in range(6, len(name)))]
            folded = [f"{a.rstrip()[-12:]}|{b.strip()[:12]}" for a, b in zip(lines, lines[1:])
                      if re.search(r"\d\.\d*$", a.rstrip()) and re.match(r"^[\s│]*\d", b)]
            tally(done.returncode in (0, 1) and not wide and not split and not folded, f"COLUMNS={columns} {args}",
                  f"exit {done.returncode}; wide {wide[:1]} split {split} folded {folded[:2]}")
            cut = [x for x in lines if x.rstrip(" │").endswith("…")]
            if cut:
                r.notes.append(f"COLUMNS={columns} {' '.join(args)}: ellipsis in {cut[0]!r}")

def arrays_area(r: Runner) -> None:
    """Arrays that are not what they claim, through verify's inputs, permute's source, --positions and --apply."""
    import struct
    import zipfile

    f = r.folder
    good = np.load(f / "cos.npy")
    made = {
        "fortran.npy": np.asfortranarray(good), "f16.npy": good.astype(np.float16), "big.npy": good.astype(">f8"),
        "bool.npy": good > 0, "complex.npy": good.astype(complex), "nan.npy": np.full_like(good, np.nan),
        "inf.npy": np.full_like(good, np.inf), "scalar.npy": np.float64(1.0), "three.npy": good[None],
        "empty.npy": np.zeros((0, 8)), "int.npy": np.arange(16 * 8).reshape(16, 8), "wide.npy": np.ones((1, 10**6)),
        "struct.npy": np.zeros(16, dtype=[("a", "f8"), ("b", "f8")]), "str.npy": np.array(["a"] * 8),
        "positions_neg.npy": np.array([-1, 0, 1]), "positions_float.npy": np.array([0.5, 1.0]),
        "positions_huge.npy": np.array([2**62, 2**62 + 1], dtype=np.int64), "positions_u64.npy": np.array([2**64 - 1], dtype=np.uint64),
    }
    for name, array in made.items():
        np.save(f / name, array)
    np.save(f / "object.npy", np.array([object()] * 8), allow_pickle=True)
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 128), }"
    header += b" " * (118 - len(header)) + b"\n"
    (f / "claims.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * 64)
    (f / "trunc.npy").write_bytes((f / "cos.npy").read_bytes()[:100])
    (f / "badheader.npy").write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': os.sy}\n")
    with zipfile.ZipFile(f / "bomb.npz", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("cos.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * (50 << 20))
    with zipfile.ZipFile(f / "traverse.npz", "w") as z:
        z.writestr("../../cos.npy", (f / "cos.npy").read_bytes())
    (f / "zero.npy").symlink_to("/dev/zero")
    names = [*made, "object.npy", "claims.npy", "trunc.npy", "badheader.npy", "bomb.npz", "traverse.npz", "zero.npy"]
    for name in names:
        r("arrays", ["verify", "--scheme", "rope", "--dim", "8", "--cos", name, "--sin", "sin.npy"])
        r("arrays", ["verify", "--scheme", "rope", "--dim", "8", "--cos", "cos.npy", "--sin", "sin.npy", "--position-ids", name])
        r("arrays", ["verify", "--scheme", "alibi", "--heads", "8", "--bias", name])
        r("arrays", ["verify", "--scheme", "t5", "--buckets", name])
        r("arrays", ["permute", name, "--from", "interleaved", "--to", "half", "--heads", "2", "-o", "perm.npy"])
        r("arrays", ["encode", "--scheme", "rope", "--dim", "8", "--positions", name])
        r("arrays", ["encode", "--scheme", "rope", "--dim", "8", "-L", "16", "--apply", name, "-o", "applied.npy"])
        r("arrays", ["encode", "--scheme", "rope", "--dim", "8", "--inv-freq", name, "-L", "4"])
    for name in names:
        (f / name).unlink()


AREAS = {"issue43": issue43_area, "outputs": outputs_area, "gguf": gguf_area, "yaml": yaml_area,
         "config": config_keys_area, "library": library_area, "options": options_area,
         "process": process_area, "arrays": arrays_area}


def main(names: list[str]) -> int:
    os.environ.update({"NO_COLOR": "1", "COLUMNS": "80"})
    os.environ.pop("PECLI_DEBUG", None)
    folder = Path(tempfile.mkdtemp(prefix="pecli-round4-"))
    make_inputs(folder)
    r = Runner(folder)
    for name in names or list(AREAS):
        AREAS[name](r)
        print(name, r.tally, flush=True, file=sys.__stderr__)
    for line in r.failures:
        print(line)
    for line in r.notes:
        print("note:", line)
    print({area: {"held": h, "failed": f} for area, (h, f) in r.tally.items()})
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

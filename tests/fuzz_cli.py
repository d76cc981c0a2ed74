"""Fuzz the command line in-process: every run ends with exit 0, 1 or 2, and exit 2 says one line.

Argument vectors are drawn from the CLI's own option declarations (the click parameters of every
command, which are generated from the core's declarations), with values that are plausible, wrong
(types, signs, huge numbers, NaN/inf, empty), or files that are not what they claim (binary garbage,
UTF-16, deep nesting, alias bombs, .npz, empty, a FIFO), and model configs of several layer groups. Run by ``tests/test_fuzz.py`` in a child process
under a memory limit; ``python tests/fuzz_cli.py EXAMPLES`` runs it by hand (EXAMPLES: how many).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pecli.cli import COMMANDS, build_app, run

NUMBERS = ["0", "1", "2", "3", "4", "7", "8", "16", "64", "-1", "-3", "0.5", "1e6", "1e308", "nan", "inf", "-inf",
           str(2**63), str(2**62), "9" * 40, "", " ", "abc", "1,2,3", "0:8", "0:8:0", "3:1", "x=1", "null", "[1, 2]",
           "{a: 1}", "true"]


def make_files(folder: Path) -> list[str]:
    """Files that look like inputs but are not what they should be."""
    files = {
        "garbage.yaml": os.urandom(256),
        "utf16.yaml": "dim: 8\n".encode("utf-16"),
        "deep.yaml": ("a: " + "[" * 3000 + "]" * 3000 + "\n").encode(),
        "bomb.yaml": ("a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))).encode(),
        "list.yaml": b"- 1\n- 2\n",
        "types.yaml": b"dim: [1, 2]\nlength: {a: 1}\nscheme: 3\nbase: .nan\n",
        "dup.yaml": b"dim: 8\ndim: 9\n",
        "empty.npy": b"",
        "deep.json": ("[" * 100000 + "]" * 100000).encode(),
        "hf.json": b'{"model_type": "llama", "hidden_size": "4096", "num_attention_heads": [32]}',
        # model plans: several layer groups, an encoder-decoder, keys that contradict each other
        "gemma3.json": b'{"model_type": "gemma3_text", "head_dim": 16, "num_attention_heads": 2, "hidden_size": 32, '
                       b'"num_hidden_layers": 6, "rope_theta": 1e6, "rope_local_base_freq": 1e4, '
                       b'"rope_scaling": {"rope_type": "linear", "factor": 8}}',
        "t5.json": b'{"model_type": "t5", "d_model": 32, "num_heads": 2, "num_layers": 2, "num_decoder_layers": 3}',
        "layers.json": b'{"model_type": "qwen2", "hidden_size": 32, "num_attention_heads": 2, "num_hidden_layers": 3, '
                       b'"layer_types": ["full_attention"], "per_layer_config": {"9": {"use_rope": false}}}',
        # keys of the wrong kind (round four): a string base, a NaN length, a per-type block that is a list
        "kinds.json": b'{"model_type": "gemma3_text", "num_hidden_layers": 2, "rope_theta": "5e5", '
                      b'"max_position_embeddings": NaN, "rope_parameters": {"sliding_attention": [1]}, "_pecli_moved": 1}',
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    os.mkfifo(folder / "fifo.yaml")  # opening it would wait for a writer forever
    np.savez(folder / "x.npz", a=np.zeros((2, 2)))
    np.save(folder / "strings.npy", np.array(["a", "b"]))
    np.save(folder / "ok.npy", np.zeros((4, 8)))
    np.save(folder / "nan.npy", np.full((4, 8), np.nan))
    names = (*files, "x.npz", "strings.npy", "ok.npy", "nan.npy", "fifo.yaml")
    return [str(folder / name) for name in names] + ["/dev/null", "/nonexistent"]


#: Options left out: ``sweep --cluster`` connects to the address it is given (a drawn ``ab:12`` would look up a
#: host name and wait for it); its refusals are tested in tests/test_sweep.py.
NOT_FUZZED = {"cluster"}


def command_options(group) -> dict[str, list]:
    """Each command's click parameters: the options and arguments it declares."""
    return {name: [p for p in command.params if p.name not in NOT_FUZZED] for name in COMMANDS for command in [group.get_command(None, name)]}


@st.composite
def argv(draw, options: dict[str, list], files: list[str]) -> list[str]:
    name = draw(st.sampled_from(sorted(options)))
    values = st.one_of(st.sampled_from(NUMBERS), st.sampled_from(files), st.text(max_size=12))
    args = [name]
    for param in draw(st.lists(st.sampled_from(options[name]), max_size=6)):
        if param.param_type_name == "argument":
            args.append(draw(values))
        elif getattr(param, "is_flag", False) and not getattr(param, "secondary_opts", None):
            args.append(param.opts[0])
        elif getattr(param, "is_flag", False):
            args.append(draw(st.sampled_from([*param.opts, *param.secondary_opts])))
        elif param.name == "set":
            args += ["--set", draw(st.sampled_from(["dim", "length", "base", "scheme", "hf_config", "x", ""])) + "=" + draw(values)]
        else:
            args += [draw(st.sampled_from(param.opts)), draw(values)]
    if "--length" not in args and "-L" not in args:
        args += ["--length", "16"]  # keep runs small; the sizes drawn above still reach every guard
    return args


def check_contract(args: list[str], group) -> None:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run(args, command=group)
    text = err.getvalue()
    assert code in (0, 1, 2), f"pecli {' '.join(args)!r} exited {code}: {text}"
    assert "Traceback" not in text, f"pecli {' '.join(args)!r}: {text}"
    if code == 2:
        lines = text.splitlines()
        assert len(lines) == 1 and lines[0].startswith("pecli: error: "), f"pecli {' '.join(args)!r}: {text!r}"
        assert len(text) < 2000, f"pecli {' '.join(args)!r}: an error line of {len(text)} characters"


def main(examples: int) -> None:
    os.environ.update({"NO_COLOR": "1", "COLUMNS": "80"})
    os.environ.pop("PECLI_DEBUG", None)
    folder = Path(tempfile.mkdtemp(prefix="pecli-fuzz-"))
    os.chdir(folder)
    files = make_files(folder)
    group = typer.main.get_command(build_app())
    options = command_options(group)

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(argv(options, files))
    def fuzz(args: list[str]) -> None:
        check_contract(args, group)

    with one_blas_thread():  # the test suite runs a process per core: a BLAS pool here would fight them
        fuzz()


def one_blas_thread():
    """BLAS limited to one thread (threadpoolctl, from the [test] extra), or nothing to limit."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)

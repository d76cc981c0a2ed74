"""Run a corpus of ``pecli`` command lines and write each one's stdout, stderr and exit code to one file.

A refactoring that must not change what pecli says is checked by running the corpus on the code before
and after (``PYTHONPATH`` names the tree) and comparing the two files byte for byte::

    PYTHONPATH=/path/to/main python tools/output_corpus.py > before.txt
    PYTHONPATH=$PWD python tools/output_corpus.py > after.txt
    cmp before.txt after.txt

Every command runs in a fresh temporary folder holding copies of the fixtures it reads, named by relative
paths (``rope/llama3.json``: the messages and their line breaks do not depend on where the tree is); the
files it writes are listed by name and size. ``COLUMNS=100``, no colour. The corpus covers every command, its help, good and bad input, model
configs of many families (read from the test fixtures of the tree that runs), and the engines.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "models"
ROPE = FIXTURES / "rope"
OTHER = FIXTURES / "other"

#: Model configs read by several commands.
MODELS = ["llama3.json", "gemma3.json", "qwen2_vl.json", "deepseek_v3.json", "phi3.json", "gpt_neox.json",
          "cohere2.json", "llama4.json", "glm4.json", "qwen3.json", "mistral.json", "olmo2.json"]

COMMANDS = [
    "--help", "--version", "", "nosuch", "encode --help", "check --help", "compare --help", "wavelengths --help",
    "plot --help", "inspect --help", "permute --help", "verify --help", "diff --help", "extend --help", "sweep --help",
    "encode", "encode --scheme rope --length 8 --dim 8 --out x.npy", "encode --scheme sinusoidal --length 16 --out y.npz",
    "encode --scheme rope --length 8 --dim 7 --out x.npy", "encode --scheme alibi --length 4",
    "check all --scheme rope --length 64 --dim 16", "check relativity --scheme sinusoidal --length 32 --dim 16",
    "check all --scheme alibi --length 32 --json", "check uniqueness --scheme learned --length 16",
    "check nosuch --scheme rope", "check all --scheme rope --length 64 --dim 16 --set base=500",
    "compare --schemes rope,sinusoidal --length 32 --dim 16", "compare --schemes rope,alibi --length 32 --json",
    "wavelengths --scheme rope --dim 16", "wavelengths --scheme rope --dim 16 --json",
    "wavelengths --scheme rope --dim 16 --scaling yarn --factor 4 --original-max-position-embeddings 2048",
    "wavelengths --scheme rope --dim 16 --scaling llama3 --factor 8", "wavelengths --scheme t5",
    "plot --scheme rope --length 16 --dim 8 --out p.png --kind similarity", "plot --scheme rope --out p.txt",
    "sweep relativity --scheme rope --grid dim=8,16 --length 32", "sweep --scheme rope",
    "extend --help", "diff", "verify", "inspect", "permute",
]
for name in MODELS:
    path = ROPE / name
    if path.exists():
        COMMANDS += [f"wavelengths --hf-config {path}", f"wavelengths --hf-config {path} --json",
                     f"check relativity --hf-config {path} --length 128",
                     f"diff --hf-config {path} --hf-config {path}",
                     f"diff --hf-config {path} --runtime vllm --args '--max-model-len 65536'",
                     f"diff --hf-config {path} --runtime sglang --args '--context-length 65536'"]
for name in [name for name in MODELS if (ROPE / name).exists()][:3]:
    COMMANDS += [f"extend --hf-config {ROPE / name} --target 131072 --json"]
for path in sorted(OTHER.glob("*.json"))[:8]:
    COMMANDS += [f"wavelengths --hf-config {path}", f"check relativity --hf-config {path} --length 64"]
for path in sorted(ROPE.glob("*.json"))[:40]:
    COMMANDS += [f"wavelengths --hf-config {path} --json"]


def run(line: str) -> str:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("FORCE_COLOR", None)
    words = shlex.split(line)
    with tempfile.TemporaryDirectory() as folder:
        for i, word in enumerate(words):
            if word.startswith(str(FIXTURES)):
                relative = Path(word).relative_to(FIXTURES)
                (Path(folder) / relative).parent.mkdir(exist_ok=True)
                (Path(folder) / relative).write_bytes(Path(word).read_bytes())
                words[i] = str(relative)
        done = subprocess.run([sys.executable, "-m", "pecli", *words], cwd=folder, env=env, capture_output=True,
                              timeout=600)
        made = sorted(f"{p.name} {p.stat().st_size}" for p in Path(folder).iterdir() if p.is_file())
    text = f"$ pecli {shlex.join(words)}\nexit {done.returncode}\nfiles {made}\n"
    out, err = (s.decode("utf-8", "replace") for s in (done.stdout, done.stderr))
    return text + f"--- stdout\n{out}--- stderr\n{err}"


def main() -> None:
    for line in COMMANDS:
        sys.stdout.write(run(line))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Docs can't rot: every subcommand has help and a page on the site (docs/), with its --help as pecli prints
it; README and the pages show the real commands, files and tables."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
import yaml

from pecli.cli import COMMANDS, app

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
MKDOCS = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")

#: The two quick-start commands: each works on its own on a fresh machine (the issue; .ci/run runs the second).
QUICK_START = [
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e . && pecli encode',
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest -n auto',
]

#: The example commands of the foundation issue, documented on the page of `pecli encode`.
ENCODE_EXAMPLES = [
    "pecli encode --scheme rope --dim 128 --length 4096 --base 500000 --layout half --out rope.npz",
    "pecli encode --scheme sinusoidal --dim 512 --length 1000 --out pe.npy",
    "pecli encode --scheme alibi --heads 12 --length 64 --out alibi.npz --json | jq .",
    "pecli encode --scheme rope --dim 64 --length 37 --apply q.npy --out q_rot.npy",
    "pecli encode --config sample_configs/rope-llama.yaml --set base=1e6",
]


def command_names() -> list[str]:
    return list(COMMANDS)


def section(name: str) -> str:
    """The prose of the page of ``pecli NAME`` (docs/commands/NAME.md), without its generated options."""
    path = DOCS / "commands" / f"{name}.md"
    return path.read_text(encoding="utf-8").split("## Options\n")[0] if path.exists() else ""


def nav_pages(entries=None) -> list[str]:
    pages = []
    for entry in MKDOCS["nav"] if entries is None else entries:
        for value in entry.values():
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_there_are_commands():
    assert "encode" in command_names()


@pytest.mark.parametrize("name", command_names())
def test_command_has_a_page(name):
    text = section(name)
    assert text.startswith(f"# `pecli {name}`"), f"docs/commands/{name}.md is missing or has another title"
    assert len(text.strip()) > 100, f"the page of pecli {name} is nearly empty"
    assert f"commands/{name}.md" in nav_pages(), f"the page of pecli {name} is not in mkdocs.yml's nav"
    assert f"docs/commands/{name}.md" in README, f"README does not link the page of pecli {name}"


@pytest.mark.parametrize("name", command_names())
def test_command_page_shows_its_help(name, monkeypatch):
    """The page's options are `pecli NAME --help` itself, made by the site's hook when it builds: the help
    as pecli prints it to a pipe at the site's width (rendered once: the hook is handed that render)."""
    import importlib.util

    from typer.testing import CliRunner

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    result = CliRunner(env={"COLUMNS": str(hooks.HELP_COLUMNS), "NO_COLOR": "1", "TERM": "dumb"}).invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert f"Usage: pecli {name}" in result.stdout and "--help" in result.stdout
    asked = []
    monkeypatch.setattr(hooks, "command_help", lambda command: asked.append(command) or result.stdout)
    built = hooks.with_help(page(f"commands/{name}.md"))
    assert asked == [name], f"docs/commands/{name}.md must have one <!-- help: {name} --> marker"
    assert f"```text\n{result.stdout.rstrip()}\n```" in built


def test_the_hook_prints_the_help_as_pecli_does():
    import importlib.util

    from typer.testing import CliRunner

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    result = CliRunner(env={"COLUMNS": str(hooks.HELP_COLUMNS), "NO_COLOR": "1", "TERM": "dumb"}).invoke(app, ["diff", "--help"])
    assert hooks.command_help("diff") == result.stdout


@pytest.mark.parametrize("name", command_names())
def test_the_index_lists_the_command(name):
    assert f"| [`{name}`](commands/{name}.md) |" in page("index.md"), f"docs/index.md has no row for pecli {name}"


def test_every_page_is_in_the_nav_and_readme_is_short():
    pages = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")} | {"contributing.md"}
    assert pages == set(nav_pages())
    assert len(README.splitlines()) < 200


def test_quick_start_commands_verbatim():
    quick = re.search(r"^## Quick start\n(.*?)(?=^## )", README, flags=re.M | re.S)
    assert quick, "README has no ## Quick start section"
    blocks = re.findall(r"```(?:bash|sh|console)?\n(.*?)```", quick.group(1), flags=re.S)
    commands = [line.strip() for block in blocks for line in block.strip().splitlines() if line.strip()]
    assert commands == QUICK_START


def test_issue_examples_in_encode_section():
    text = section("encode")
    for command in ENCODE_EXAMPLES:
        assert command in text, command


def test_yaml_example_is_the_sample_file():
    # The conventions page shows sample_configs/rope-llama.yaml; it must say what the file says.
    match = re.search(r"```yaml\n# sample_configs/rope-llama\.yaml\n(.*?)```", page("conventions.md"), flags=re.S)
    assert match, "docs/conventions.md does not show sample_configs/rope-llama.yaml"
    shown = yaml.safe_load(match.group(1))
    actual = yaml.safe_load((REPO / "sample_configs" / "rope-llama.yaml").read_text(encoding="utf-8"))
    assert shown == actual


def test_schemes_page_lists_every_scheme():
    from pecli.schemes import SCHEMES

    for name in SCHEMES:
        assert f"| `{name}` |" in page("schemes.md"), name


def test_models_table_is_the_family_table():
    from pecli.models.families.docs_table import models_table

    text = page("models.md")
    start, end = text.index("<!-- models-table -->\n"), text.index("\n<!-- /models-table -->")
    assert text[start + len("<!-- models-table -->\n"):end] == models_table()


def test_inspect_config_example_is_what_pecli_prints(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    # Gemma 3 4B's config.json as published (sample_configs/hf): no rope_theta, head_dim or heads in its
    # text_config, which transformers reads as Gemma3TextConfig's defaults.
    (tmp_path / "gemma-3-4b.json").write_text((REPO / "sample_configs" / "hf" / "google--gemma-3-4b-it.json").read_text())
    monkeypatch.chdir(tmp_path)
    text = page("models.md")
    block = text[text.index("$ pecli inspect config --hf-config gemma-3-4b.json"):]
    expected = block[block.index("\n") + 1:block.index("```")]
    result = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, ["inspect", "config", "--hf-config", "gemma-3-4b.json"])
    assert result.exit_code == 0 and result.stdout == expected


# -- every example on every page runs as written ---------------------------------------------------------------
#: Pages whose examples another page of the same change is writing; their owners make their inputs.
EXAMPLES_ELSEWHERE = {"commands/verify.md", "commands/diff.md"}
#: Lines that reach outside this machine: the network (``--model``) or a Dask cluster (``--cluster``). The
#: page marks each with a comment naming what it needs; the test runs them only with PECLI_DOCS_NETWORK=1.
NEEDS_OUTSIDE = re.compile(r"(?<!HF_HUB_OFFLINE=1 )pecli .*(--(model|cluster) |--gguf (https?|hf)://)")


@dataclasses.dataclass
class Example:
    """One command line of a page: its words, the environment it sets, the exit codes it may end with."""

    line: str
    words: list[str]
    env: dict[str, str]
    codes: tuple[int, ...]


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of each fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S)]


def command_lines(language: str, body: str) -> list[tuple[str, str]]:
    """The (command, the line shown after it) pairs of a shell block: every line of a bash block that is
    not a comment; only the ``$ `` lines of a console block (the others are its output)."""
    lines = body.replace("\\\n", " ").splitlines()
    pairs = []
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if language == "bash" and line.strip() and not line.lstrip().startswith("#"):
            pairs.append((line.strip(), following))
        elif language in ("console", "") and line.startswith("$ "):
            pairs.append((line[2:].strip(), following))
    return pairs


def parse(line: str, following: str) -> Example | None:
    """The pecli or ``python examples/…`` command of ``line``, up to a pipe or ``;``; None otherwise (the
    quick start's install lines, ``echo $?``, which .ci/run and the exit-code tests cover)."""
    import shlex

    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = []
    for word in lexer:
        if word in ("|", ";", "&&", "||"):
            break
        words.append(word)
    env = {}
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    if not words or words[0] not in ("pecli", "python") or words[:2] == ["python", "-m"]:
        return None
    codes = (2,) if following.startswith("pecli: error:") else (0, 1)
    return Example(line, words, env, codes)


def page_examples(name: str) -> list[Example | tuple[str, str]]:
    """The examples of a page (README.md or docs/NAME), in order: shell commands, and Python blocks
    as ``("python", source)``."""
    text = README if name == "README.md" else page(name)
    examples = []
    for language, body in fenced_blocks(text):
        if language == "python":
            examples.append(("python", body))
        elif language in ("bash", "console", ""):
            for line, following in command_lines(language, body):
                example = parse(line, following)
                if example is not None:
                    examples.append(example)
    return examples


EXAMPLE_PAGES = ["README.md"] + sorted(
    str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md") if str(path.relative_to(DOCS)) not in EXAMPLES_ELSEWHERE)


#: How pecli says that an optional extra is not installed (pecli/extras.py and the --cluster, Parquet doors).
MISSING_EXTRA = re.compile(r"not installed: pip install 'pecli\[|package: pip install 'pecli\[")
#: The modules of the optional extras, which the test extra installs: a page's example that imports one
#: (examples/toy_checkpoints.py writes safetensors) is skipped where it is missing.
EXTRA_MODULES = {"safetensors", "huggingface_hub", "gguf", "fsspec", "aiohttp", "dask", "distributed", "pyarrow",
                 "pandas"}


def run_example(example: Example, monkeypatch) -> None:
    import contextlib
    import io
    import runpy
    import sys

    from pecli.cli import run

    for key, value in example.env.items():
        monkeypatch.setenv(key, value)
    out, err = io.StringIO(), io.StringIO()
    if example.words[0] == "python":
        monkeypatch.setattr(sys, "argv", example.words[1:])
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(REPO / example.words[1]), run_name="__main__")
        return
    # a file an example writes in /tmp (--out /tmp/FILE) goes to the test's folder, the current one: /tmp may
    # hold a file of that name another user or another run made
    words = [word.removeprefix("/tmp/") if before in ("--out", "-o") and word.startswith("/tmp/") else word
             for before, word in zip([None, *example.words], example.words)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(words[1:])
    if code == 2 and MISSING_EXTRA.search(err.getvalue()):  # pecli's own word for an extra not installed
        pytest.skip(f"{example.line}: {err.getvalue().strip()}")
    assert code in example.codes, f"{example.line}: exit {code}: {err.getvalue()}"
    if "--json" in example.words:
        json.loads(out.getvalue())


def test_the_index_shows_readmes_examples():
    """The site's first page and README show the same five examples (run once, as README's)."""
    assert [e.line for e in page_examples("index.md") if not isinstance(e, tuple)][-5:] == \
        [e.line for e in page_examples("README.md") if not isinstance(e, tuple)][-5:]


@pytest.mark.parametrize("name", EXAMPLE_PAGES)
def test_every_example_of_the_page_runs(name, tmp_path, monkeypatch, unrendered):
    """The page's examples, in order, in one folder with the checkout's ``sample_configs`` and ``examples``:
    a block that makes an input (``python examples/toy_checkpoints.py``) comes before those reading it.
    Figures are built but not rasterised (``unrendered``): tests/test_plot.py renders every kind."""
    for folder in ("sample_configs", "examples"):
        (tmp_path / folder).symlink_to(REPO / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    seen = {e.line for e in page_examples("README.md") if not isinstance(e, tuple)} if name == "index.md" else set()
    for example in page_examples(name):
        if not isinstance(example, tuple) and example.line in seen:
            continue
        try:
            if isinstance(example, tuple):
                exec(compile(example[1], f"{name} (python block)", "exec"), {"__name__": "__docs__"})
            elif NEEDS_OUTSIDE.search(example.line) and not os.environ.get("PECLI_DOCS_NETWORK"):
                assert re.search(r"#.*(network|Dask)", example.line), f"{name}: mark what {example.line!r} needs"
            else:
                run_example(example, monkeypatch)
        except ModuleNotFoundError as error:
            if (error.name or "").partition(".")[0] not in EXTRA_MODULES:
                raise
            pytest.skip(f"{name}: an example needs {error.name}, an optional extra's module, not installed")


# -- the Library page: no raw docstring markup -------------------------------------------------------------------
def _hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def test_roles_become_the_code_they_name():
    html = ("<p>As for :func:<code>pecli.analysis.run_checks</code> (:class:<code>~pecli.analysis.CheckOptions</code>)"
            " and :py:attr:<code>~a.b.c</code>; an example::</p>")
    assert _hooks().plain_roles(html) == ("<p>As for <code>pecli.analysis.run_checks</code> (<code>CheckOptions</code>)"
                                         " and <code>c</code>; an example:</p>")


def documented_docstrings() -> list[tuple[str, str]]:
    """(name, docstring) of every object the Library page renders (``::: NAME``) and of their members."""
    import importlib
    import inspect

    found = []
    for target in re.findall(r"^::: (\S+)$", page("library.md"), flags=re.M):
        module_name, _, attribute = target.rpartition(".")
        try:
            obj = importlib.import_module(target)
        except ImportError:
            obj = getattr(importlib.import_module(module_name), attribute)
        found.append((target, inspect.getdoc(obj) or ""))
        for member, value in vars(obj).items() if inspect.isclass(obj) or inspect.ismodule(obj) else ():
            if not member.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value)):
                found.append((f"{target}.{member}", inspect.getdoc(value) or ""))
    return found


def test_every_role_in_the_library_docstrings_is_one_the_site_turns_into_code():
    """mkdocstrings turns `` `x` `` into ``<code>x</code>`` and leaves the role before it: each role of
    a rendered docstring is one docs/hooks.py rewrites, so none reaches the built page (.ci/run checks
    the built site itself)."""
    hooks = _hooks()
    documented = documented_docstrings()
    assert len(documented) > 20
    for name, doc in documented:
        for role in re.finditer(r":[a-z:]+:`[^`]*`", doc):
            html = re.sub(r"`([^`]*)`", r"<code>\1</code>", role.group(0))
            assert not re.search(r":[a-z]+:", hooks.plain_roles(html)), f"{name}: {role.group(0)} stays raw"


# -- pages read off the site (a forge, an editor) ------------------------------------------------------------
def test_extend_methods_on_the_page_are_the_records():
    """extend.md holds its table of candidates in the Markdown itself (``python docs/hooks.py`` rewrites it)."""
    hooks = _hooks()
    text = page("commands/extend.md")
    start, end = text.index("<!-- extend-methods -->\n"), text.index("\n<!-- /extend-methods -->")
    assert text[start + len("<!-- extend-methods -->\n"):end] == hooks.extend_methods()
    assert hooks.with_methods(text) == text


@pytest.mark.parametrize("path", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(DOCS)))
def test_a_page_read_off_the_site_says_where_its_generated_parts_live(path):
    """What only the site fills in is named in words beside its marker: a command's options (its --help),
    the Library page's docstrings, CONTRIBUTING.md's place."""
    text = path.read_text(encoding="utf-8")
    for match in re.finditer(r"^<!-- help: ([a-z]+) -->$", text, flags=re.M):
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
        assert f"`pecli {match.group(1)} --help`" in before, path
    if re.search(r"^::: ", text, flags=re.M):
        assert "help(pecli.encode)" in text, path
    for match in re.finditer(r"\]\(contributing\.md\)", text):
        assert "CONTRIBUTING.md" in text[max(0, match.start() - 200): match.end() + 120], path


def test_readmes_examples_write_nothing_into_the_checkout():
    """A file an example writes goes outside the checkout (``/tmp``), so that trying README leaves no
    untracked ``rope.npz`` or ``dot.png`` behind."""
    for example in page_examples("README.md"):
        if isinstance(example, tuple):
            continue
        words = example.words
        for at, word in enumerate(words):
            if word in ("--out", "-o"):
                assert words[at + 1].startswith("/tmp/"), example.line

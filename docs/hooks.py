"""MkDocs hooks: the pages made from pecli's own declarations, so that the site cannot drift from them.

- ``<!-- help: NAME -->`` on a command page becomes ``pecli NAME --help`` as pecli prints it (plain,
  88 columns): the options come from the same declarations as the command line's.
- ``<!-- extend-methods -->`` … ``<!-- /extend-methods -->`` holds the table of ``pecli extend``'s
  candidates, one row per scaling record that says what extend may build from it
  (``pecli.schemes.scaling.registry.SCALINGS``): written into the page, so that it reads on a forge or in an
  editor too, and rewritten from the records when the site is built (``tests/test_docs.py`` fails when
  the page's copy is stale; ``python docs/hooks.py`` rewrites it).
- ``contributing.md`` is the repository's ``CONTRIBUTING.md``, added to the site as it is.
- The docstrings mkdocstrings renders on the Library page are numpydoc, whose cross-references are
  Sphinx roles (``:func:`pecli.encode```, ``:class:`~pecli.CheckReport```) that Markdown leaves as
  they are: each becomes the code it names (``~`` keeps the last name, as Sphinx shows it), and a
  reStructuredText literal-block marker (a paragraph ending ``::``) one colon.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HELP = re.compile(r"^<!-- help: ([a-z]+) -->$", flags=re.M)
METHODS = re.compile(r"<!-- extend-methods -->\n.*?<!-- /extend-methods -->", flags=re.S)
#: A Sphinx role around the code Markdown made of its target: ``:func:<code>~a.b</code>``.
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc|const|type|term|ref):<code>(~?)([^<]*)</code>")
#: A paragraph that ends with reStructuredText's ``::`` (a literal block follows).
LITERAL_MARKER = re.compile(r"(?<=[^:\s])::(?=</p>)")
#: The width of the help on the site.
HELP_COLUMNS = 88


def command_help(name: str) -> str:
    """``pecli NAME --help`` as plain text at :data:`HELP_COLUMNS` columns."""
    from pecli.cli import run

    saved = {key: os.environ.get(key) for key in ("COLUMNS", "NO_COLOR", "TERM")}
    os.environ.update({"COLUMNS": str(HELP_COLUMNS), "NO_COLOR": "1", "TERM": "dumb"})
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            code = run([name, "--help"])
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if code != 0:
        raise RuntimeError(f"pecli {name} --help exited {code}")
    return out.getvalue()


def with_help(markdown: str) -> str:
    """``markdown`` with each ``<!-- help: NAME -->`` replaced by that command's help in a text block."""
    return HELP.sub(lambda m: f"```text\n{command_help(m.group(1)).rstrip()}\n```", markdown)


def extend_methods() -> str:
    """The Markdown table of ``pecli extend``'s methods, from the scaling records, in their order."""
    from pecli.schemes.scaling.registry import extension_types

    rows = [f"| `{method}` | {record.extension.summary} | {record.extension.keys_text} |"
            for method, record in extension_types().items()]
    return "\n".join(["| method | the change | keys |", "|---|---|---|", *rows])


def plain_roles(html: str) -> str:
    """``html`` with each Sphinx role shown as the code it names, and ``::`` ending a paragraph as ``:``."""
    html = ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>", html)
    return LITERAL_MARKER.sub(":", html)


def on_page_content(html, page, config, files):
    return plain_roles(html)


def on_files(files, config):
    from mkdocs.structure.files import File

    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "contributing.md", content=contributing))
    return files


def with_methods(markdown: str) -> str:
    """``markdown`` with the region between the extend-methods markers holding :func:`extend_methods`."""
    return METHODS.sub(lambda m: f"<!-- extend-methods -->\n{extend_methods()}\n<!-- /extend-methods -->", markdown)


def on_page_markdown(markdown, page, config, files):
    return with_methods(with_help(markdown))


if __name__ == "__main__":  # rewrite the generated regions of the pages from the declarations
    import sys

    sys.path.insert(0, str(ROOT))
    extend_page = ROOT / "docs" / "commands" / "extend.md"
    extend_page.write_text(with_methods(extend_page.read_text(encoding="utf-8")), encoding="utf-8")

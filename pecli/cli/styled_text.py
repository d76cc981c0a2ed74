"""Text laid out as Rich lays it out, without Rich: styled runs, cell widths, word wrapping.

:class:`Styled` is one line as (text, style) runs, in Rich's style spelling ("bold cyan"), printed
plain or with ANSI codes. :func:`wrap` breaks and pads text as Rich's ``Text.wrap`` does for
left-justified text (``rich/_wrap.py``'s rule: a word that does not fit the rest of a line starts the
next; a word wider than a line is folded or cut with "…"), so that a page laid out here is Rich's page
character for character (``tests/test_help.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: ANSI select-graphic-rendition codes of the attributes and colours the styles above name.
SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}
ATTRIBUTES = ("bold", "dim")


# -- styled text -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Styled:
    """One line of text and the style of each of its characters ("" for none), as runs.

    Attributes
    ----------
    runs:
        (text, style) pairs; a style is Rich's spelling, space-separated ("bold cyan").
    """

    runs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, text: str, style: str = "") -> Styled:
        return cls(((text, style),) if text else ())

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.runs)

    def __add__(self, other: Styled) -> Styled:
        return Styled(self.runs + other.runs)

    def under(self, style: str) -> Styled:
        """This text with ``style`` beneath each run's own (a run's colour wins over ``style``'s)."""
        return Styled(tuple((text, combine(style, own)) for text, own in self.runs)) if style else self

    def ansi(self, colours: bool) -> str:
        """The text with its styles as ANSI codes (attributes only when ``colours`` is False)."""
        out = []
        for text, style in self.runs:
            codes = [SGR[word] for word in style.split() if word in SGR and (colours or word in ATTRIBUTES)]
            out.append(f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes else text)
        return "".join(out)


def combine(below: str, above: str) -> str:
    """The style of ``above`` laid over ``below``: attributes add up, ``above``'s colour wins."""
    words = below.split() + above.split()
    attributes = [word for word in ATTRIBUTES if word in words]
    colours = [word for word in words if word not in ATTRIBUTES]
    return " ".join(attributes + colours[-1:])


def highlight(text: str, patterns: Iterable[re.Pattern[str]], theme: Mapping[str, str], base: str = "") -> Styled:
    """``text`` in ``base`` with every named group of ``patterns`` styled by ``theme`` (a later match
    laid over an earlier one), as Rich's ``RegexHighlighter`` styles it."""
    styles = [base] * len(text)
    for pattern in patterns:
        for match in pattern.finditer(text):
            for name, value in match.groupdict().items():
                if value is not None and name in theme:
                    for index in range(match.start(name), match.end(name)):
                        styles[index] = combine(styles[index], theme[name])
    return styled_run(text, styles)


def styled_run(text: str, styles: list[str]) -> Styled:
    """``text`` whose i-th character has style ``styles[i]``, as runs."""
    runs: list[tuple[str, str]] = []
    for character, style in zip(text, styles):
        if runs and runs[-1][1] == style:
            runs[-1] = (runs[-1][0] + character, style)
        else:
            runs.append((character, style))
    return Styled(tuple(runs))


# -- measuring and wrapping as Rich does -------------------------------------------------------------
def cell_len(text: str) -> int:
    """Terminal cells ``text`` takes: two for East Asian wide characters, none for combining marks."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def set_cell_size(text: str, size: int) -> str:
    """``text`` cut or padded with spaces to ``size`` cells."""
    out, used = [], 0
    for character in text:
        width = cell_len(character)
        if used + width > size:
            break
        out.append(character)
        used += width
    return "".join(out) + " " * (size - used)


def chop(text: str, width: int) -> list[str]:
    """``text`` cut into pieces of at most ``width`` cells."""
    pieces, current, used = [], "", 0
    for character in text:
        size = cell_len(character)
        if used + size > width and current:
            pieces.append(current)
            current, used = "", 0
        current += character
        used += size
    return [*pieces, current] if current else pieces


WORD = re.compile(r"\s*\S+\s*")


def break_offsets(text: str, width: int, fold: bool) -> list[int]:
    """Where Rich breaks ``text`` to fit ``width`` cells: before a word that does not fit the rest of
    its line; a word wider than a line is folded across lines (``fold``) or left to be cut."""
    breaks: list[int] = []
    used = 0
    for match in WORD.finditer(text):
        start, word = match.start(), match.group(0)
        length = cell_len(word.rstrip())
        if width - used >= length:
            used += cell_len(word)
        elif length > width:
            if fold:
                pieces = chop(word, width)
                for index, piece in enumerate(pieces):
                    if start:
                        breaks.append(start)
                    if index == len(pieces) - 1:
                        used = cell_len(piece)
                    else:
                        start += len(piece)
            else:
                if start:
                    breaks.append(start)
                used = cell_len(word)
        elif used and start:
            breaks.append(start)
            used = cell_len(word)
    return breaks


def line_ranges(text: str, width: int, fold: bool) -> list[tuple[int, int]]:
    """(begin, end) of each line Rich makes of ``text`` (one paragraph) at ``width`` cells: broken at
    :func:`break_offsets`, a line's trailing spaces dropped only as far as it overflows."""
    offsets = [0, *break_offsets(text, width, fold), len(text)]
    ranges = []
    for begin, end in zip(offsets, offsets[1:]):
        excess = (end - begin) - width
        if excess > 0:
            trailing = (end - begin) - len(text[begin:end].rstrip())
            end -= min(trailing, excess)
        ranges.append((begin, end))
    return ranges


def wrap(text: str, width: int, *, fold: bool = True) -> list[str]:
    """``text`` (its lines) wrapped to ``width`` cells as Rich wraps a left-justified Text, each line
    padded to ``width``; a piece still too wide (a long word) is cut, with "…" unless ``fold``."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        for begin, end in line_ranges(paragraph, width, fold):
            line = paragraph[begin:end]
            size = cell_len(line)
            if size > width:
                line = set_cell_size(line, width) if fold else set_cell_size(line, width - 1) + "…"
            lines.append(line + " " * (width - size) if size < width else line)
    return lines

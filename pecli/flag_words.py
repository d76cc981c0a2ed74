"""An engine's command line as words and (flag, value) pairs: split once, as a shell splits it, for every engine's
flags (:meth:`pecli.engines.base.Engine.parse`, :func:`pecli.models.runtime_flags.parse_flags`)."""

from __future__ import annotations

import re
from typing import Callable, Sequence

from pecli.errors import ConfigError

#: The longest ``--args`` text and JSON flag value read (a config override is a few hundred characters): Linux's
#: MAX_ARG_STRLEN, past which no one word reaches a program.
MAX_FLAG_TEXT = 1 << 17


def split_words(args: str) -> list[str]:
    """An engine's command line split into words as a shell splits it (:func:`shell_words`); ConfigError where it
    is not a string, is longer than :data:`MAX_FLAG_TEXT` or cannot be split."""
    if not isinstance(args, str):
        raise ConfigError("args", "give the engine's flags as one string")
    if len(args) > MAX_FLAG_TEXT:
        raise ConfigError("args", f"is longer than {MAX_FLAG_TEXT >> 10} KiB; an engine's flags are a line")
    try:
        return shell_words(args)
    except ValueError as error:
        raise ConfigError("args", f"cannot be split as a shell splits it: {error}") from None


_BLANK = " \t\r\n"
_PLAIN = re.compile(r"[^ \t\r\n'\"\\]+")
_SINGLE = re.compile(r"'([^']*)'")
_DOUBLE = re.compile(r'"((?:[^"\\]|\\[\s\S])*)("?)')
_DOUBLE_ESCAPE = re.compile(r'\\(["\\])')


def shell_words(text: str) -> list[str]:
    """``shlex.split(text)``'s words and errors (POSIX: blanks space, tab, CR, LF; ``\\`` escapes any character
    outside quotes and only ``"`` and ``\\`` within double quotes; nothing within single quotes), in time linear in
    the text: ``shlex`` grows each word a character at a time, quadratic in a long word (a 360 KB JSON value).

    Raises
    ------
    ValueError
        ``No closing quotation`` or ``No escaped character``, as ``shlex`` says them.
    """
    words: list[str] = []
    parts: list[str] | None = None
    at, end = 0, len(text)
    while at < end:
        char = text[at]
        if char in _BLANK:
            if parts is not None:
                words.append("".join(parts))
                parts = None
            at += 1
            continue
        parts = [] if parts is None else parts
        if char == "'":
            found = _SINGLE.match(text, at)
            if found is None:
                raise ValueError("No closing quotation")
            parts.append(found.group(1))
        elif char == '"':
            found = _DOUBLE.match(text, at)
            if not found.group(2):
                raise ValueError("No escaped character" if found.end() < end else "No closing quotation")
            parts.append(_DOUBLE_ESCAPE.sub(r"\1", found.group(1)))
        elif char == "\\":
            if at + 1 == end:
                raise ValueError("No escaped character")
            parts.append(text[at + 1])
            at += 2
            continue
        else:
            found = _PLAIN.match(text, at)
            parts.append(found.group())
        at = found.end()
    if parts is not None:
        words.append("".join(parts))
    return words


def flag_pairs(words: Sequence[str], refusal: Callable[[str], str | None], *, equals: bool = True,
               spelling: Callable[[str], str] = lambda word: word) -> list[tuple[str, str]]:
    """The (flag, value) pairs of an engine's command line, its ``words`` as :func:`split_words` gives them
    (``--flag value`` and, with ``equals``, ``--flag=value`` alike); ``refusal(flag)`` is the message refusing
    a flag, None for one read; ``spelling(word)`` the flag an engine's parser looks up for a word."""
    pairs = []
    at = 0
    while at < len(words):
        word = spelling(words[at])
        at += 1
        flag, _, inline = word.partition("=") if equals else (word, "", "")
        refused = refusal(flag)
        if refused is not None:
            raise ConfigError("args", refused)
        if not inline and at == len(words):
            raise ConfigError("args", f"{flag} needs a value")
        if not inline:
            inline, at = words[at], at + 1
        pairs.append((flag, inline))
    return pairs


__all__ = ["flag_pairs", "shell_words", "split_words"]

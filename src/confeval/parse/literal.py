"""A tolerant reader of the list/dict literals that judges write (Python- or JSON-style).

Model output is untrusted text, so it is never evaluated: this is a small recursive-descent
reader that only builds lists, dicts, strings, numbers, booleans and None, with a nesting
limit and a size limit. Beyond strict JSON it accepts what judges actually write:

* Python literals: single-quoted strings, tuples, ``True``/``False``/``None``;
* typographic quotes (“ ” ‘ ’) as quote characters;
* trailing commas, missing commas between elements;
* percentages (``85%`` reads as 0.85, marked by the :class:`Percent` type);
* unescaped quotes inside a string (``"the "energy" term"``): a quote that is not followed by
  a delimiter is kept as text;
* LaTeX backslashes in strings (``"\\frac{a}{b}"``): only unambiguous escapes are decoded
  (quotes, backslash, slash, ``\\uXXXX``, and ``\\n``/``\\t``/``\\r`` not followed by a
  letter); every other backslash stays as written;
* bare words (``correct``, ``Reasoning Error``) as strings.

:func:`read_literal` raises :class:`LiteralError` with a reason; callers turn it into a
counted, flagged record.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._tokens import MAX_REPLY_CHARS

__all__ = ["LiteralError", "Percent", "read_list_prefix", "read_list_prefix_span",
           "read_literal"]

MAX_DEPTH = 32
MAX_CHARS = MAX_REPLY_CHARS
_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u201d": "\u201d",
           "\u2019": "\u2019"}
_CLOSERS = {"\u201d": ('"', "\u201d", "\u201c"), "\u2019": ("'", "\u2019", "\u2018"),
            '"': ('"', "\u201d", "\u201c"), "'": ("'", "\u2019", "\u2018")}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SPECIAL = re.compile("[\\\\\"'\u201c\u201d\u2018\u2019]")
_WORDS = {"true": True, "false": False, "none": None, "null": None}


class LiteralError(ValueError):
    """The text is not a readable literal; the message says where and why, ``position`` is
    the character at which reading stopped."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


class Percent(float):
    """A number that was written with a percent sign (its value is already divided by 100)."""


class _Reader:
    """Reads ``text[start:end]`` in place (no copies of the rest: linear time)."""

    def __init__(self, text: str, start: int = 0, end: int | None = None) -> None:
        self.s, self.i = text, start
        self.n = len(text) if end is None else min(end, len(text))

    def fail(self, why: str):
        raise LiteralError(f"{why} at character {self.i}", self.i)

    def space(self) -> None:
        while self.i < self.n and (self.s[self.i].isspace() or self.s[self.i] == ","):
            self.i += 1

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            self.fail("nested too deeply")
        self.space()
        if self.i >= self.n:
            self.fail("unexpected end")
        ch = self.s[self.i]
        if ch in "[(":
            return self.sequence("]" if ch == "[" else ")", depth)
        if ch == "{":
            return self.mapping(depth)
        if ch in _QUOTES:
            return self.string()
        match = _NUMBER.match(self.s, self.i)
        if match and (match.end() == self.n or not self.s[match.end()].isalpha()):
            self.i = match.end()
            text = match.group()
            # float() of 400 digits is inf, never an error; int() of it would overflow
            number = float(text)
            if self.i < self.n and self.s[self.i] == "%":
                self.i += 1
                return Percent(number / 100)
            if re.fullmatch(r"[-+]?\d+", text) and math.isfinite(number):
                return int(number)
            return number
        return self.bare()

    def sequence(self, close: str, depth: int) -> list:
        self.i += 1
        items = []
        while True:
            self.space()
            if self.i >= self.n:
                self.fail(f"unclosed '{'[' if close == ']' else '('}'")
            if self.s[self.i] == close:
                self.i += 1
                return items
            if self.s[self.i] in "])}":
                self.fail(f"unexpected '{self.s[self.i]}'")
            items.append(self.value(depth + 1))

    def mapping(self, depth: int) -> dict:
        self.i += 1
        out: dict = {}
        while True:
            self.space()
            if self.i >= self.n:
                self.fail("unclosed '{'")
            if self.s[self.i] == "}":
                self.i += 1
                return out
            key = self.value(depth + 1)
            self.space()
            if self.i >= self.n or self.s[self.i] != ":":
                self.fail("expected ':' after a key")
            self.i += 1
            out[str(key)] = self.value(depth + 1)

    def string(self) -> str:
        opener = self.s[self.i]
        closers = _CLOSERS.get(_QUOTES[opener], (_QUOTES[opener],))
        self.i += 1
        chars: list[str] = []
        while self.i < self.n:
            # copy the run of ordinary characters up to the next quote or backslash at once
            special = _SPECIAL.search(self.s, self.i, self.n)
            stop = special.start() if special else self.n
            if stop > self.i:
                chars.append(self.s[self.i:stop])
                self.i = stop
                continue
            ch = self.s[self.i]
            if ch == "\\" and self.i + 1 < self.n:
                escaped = self._escape()
                if escaped is not None:
                    chars.append(escaped)
                    continue
            if ch in closers:
                # a real closing quote is followed by a delimiter; otherwise it is text
                j = self.i + 1
                while j < self.n and self.s[j] in " \t":
                    j += 1
                if j == self.n or self.s[j] in ",]}):\n\r":
                    self.i += 1
                    return "".join(chars)
            chars.append(ch)
            self.i += 1
        self.fail("unclosed string")

    def _escape(self) -> str | None:
        """The character of an escape at ``self.i`` (advancing past it), or None to keep the
        backslash as text. LaTeX is common in steps, so only unambiguous escapes count:
        \\" \\' \\\\ \\/, \\uXXXX (four hex digits), and \\n \\t \\r when no letter follows
        (\\nabla, \\theta, \\frac, \\beta stay as written)."""
        nxt = self.s[self.i + 1]
        if nxt in "\"'\\/":
            self.i += 2
            return nxt
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.s[self.i + 2:self.i + 6]):
            self.i += 6
            return chr(int(self.s[self.i - 4:self.i], 16))
        after = self.s[self.i + 2:self.i + 3]
        if nxt in "ntr" and not after.isalpha():
            self.i += 2
            return {"n": "\n", "t": "\t", "r": "\r"}[nxt]
        return None

    def bare(self) -> Any:
        start = self.i
        while self.i < self.n and self.s[self.i] not in ",]}):\n":
            self.i += 1
        word = self.s[start:self.i].strip()
        if not word:
            self.fail(f"unexpected '{self.s[self.i] if self.i < self.n else ''}'")
        return _WORDS.get(word.lower(), word)


def read_literal(text: str, start: int = 0, end: int | None = None) -> Any:
    """Read one literal from ``text[start:end]`` (leading whitespace allowed), in time and
    memory linear in the text's length.

    Examples
    --------
    >>> read_literal("[['Step 1: x = 2', 1, 0.9, ''], ['Step 2', 0, 15%, 'Reasoning Error'],]")
    [['Step 1: x = 2', 1, 0.9, ''], ['Step 2', 0, 0.15, 'Reasoning Error']]
    >>> read_literal('{"p": .8, "ok": True}')
    {'p': 0.8, 'ok': True}
    """
    if not isinstance(text, str):
        raise LiteralError("not text", start)
    if (len(text) if end is None else end) - start > MAX_CHARS:
        raise LiteralError(f"longer than {MAX_CHARS} characters", start)
    return _Reader(text, start, end).value(0)


def read_list_prefix(text: str, start: int = 0, end: int | None = None) -> list:
    """The complete elements of a list literal that may be cut off (a reply truncated by a
    token limit): elements are read one by one until the first that cannot be read.

    Examples
    --------
    >>> read_list_prefix("[[1, 0.9], [0, 0.2], [1, 0.")
    [[1, 0.9], [0, 0.2]]
    """
    return read_list_prefix_span(text, start, end)[0]


def read_list_prefix_span(text: str, start: int = 0, end: int | None = None
                          ) -> tuple[list, int]:
    """:func:`read_list_prefix` and the character at which reading stopped."""
    if not isinstance(text, str) or (len(text) if end is None else end) - start > MAX_CHARS:
        raise LiteralError("not text, or too long", start)
    reader = _Reader(text, start, end)
    reader.space()
    if reader.i >= reader.n or text[reader.i] not in "[(":
        raise LiteralError("not a list", reader.i)
    reader.i += 1
    items: list = []
    while True:
        reader.space()
        if reader.i >= reader.n or text[reader.i] in "])":
            return items, reader.i
        try:
            items.append(reader.value(1))
        except LiteralError as exc:
            return items, exc.position if exc.position is not None else reader.i

"""Reading an error diagnosis out of a model's reply (MMErroR): an option letter, an error-type
name, or an error-presence decision — never a letter picked out of running prose.

Protocols: ``etc`` (letters A-D), ``epd5`` (A-E, E = no error) and ``presence`` (P = error
present, N = no error; also yes/no, "error present"/"no error" and present/absent). Letters map
to type keys through ``letters`` (default: MMErroR's fixed order A = VPE, B = RE, C = QCE,
D = KDE, E = no error), so permuted option orders parse with their own mapping.

Rules, in order; the first that gives an answer wins and is recorded (``rule``):

0. Hidden reasoning goes whole: everything up to the last ``</think>`` is dropped (an unclosed
   ``<think>`` with no ``</think>`` makes the reply ``unterminated_reasoning``);
   ``<|begin_of_box|>``/``<|end_of_box|>`` markers are removed, their content kept.
1. ``whole`` — the whole reply is one option in any wrapping: ``B``, ``b``, ``(B)``, ``[B]``,
   ``**B**``, `` `B` ``, ``$B$``, ``B.``, ``B)``, ``\\boxed{B}``, ``\\boxed{\\text{B}}``; or a
   letter with a type name (``B) Reasoning Error``, ``B. B_Reasoning_Error``; a name that
   contradicts its letter is ``letter_name_conflict``); or a type name alone.
2. ``marker`` — the *last* explicit answer marker (``final answer``, ``answer``, ``the answer
   is``, ``output``, ``option``, ``choice``, ``\\boxed{}``) followed by an option (a letter in
   brackets whatever follows, ``Answer: (B) since step 3 is wrong``; a bare letter followed by
   punctuation, the end of the line or a reason — ``because``, ``since``, ``as``, ``due``,
   ``given`` —, never by another word) or a name. Earlier markers
   with another answer flag ``revised_answer``.
3. ``last_line`` — the last non-empty line is an option as in rule 1.
4. ``leading_letter`` — the reply starts with an upper-case option letter and ``.``/``)``/``:``
   (``B: step 2 adds wrongly``).
5. ``single_name`` — exactly one error type is named anywhere (names and aliases from
   :mod:`confeval.taxonomy`; two or more is ``ambiguous_names``).

Presence decisions are read by rules 1-3 only (the whole reply, a marker, the last line):
"no error" inside a sentence ("No errors found in perception, but step 3 is wrong") is not a
decision. Failures: ``empty``, ``reply_too_long`` (over ``MAX_REPLY_CHARS``, counted),
``unterminated_reasoning``, ``out_of_options`` (a letter that was not offered, e.g. E in ETC),
``letter_name_conflict``, ``ambiguous_names``, ``no_answer``.

Every pattern is a regular expression without nested quantifiers, applied once or per line, so
the time is linear in the reply's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..taxonomy import MMERROR_AUTHOR_LABELS, MMERROR_LETTER_ORDER, error_types
from ._tokens import MAX_REPLY_CHARS

__all__ = ["DIAGNOSIS_PROTOCOLS", "DiagnosisParse", "default_letters", "parse_diagnosis"]

DIAGNOSIS_PROTOCOLS = ("etc", "epd5", "presence")
_N_LETTERS = {"etc": 4, "epd5": 5}
PRESENT, ABSENT = "present", "absent"


@dataclass(frozen=True)
class DiagnosisParse:
    """The answer (a type key, ``present``/``absent``, or ``None``), the rule that fired or the
    reason it failed, flags (``revised_answer``) and the letter read, if any."""

    value: str | None
    rule: str | None = None
    failure: str | None = None
    flags: tuple[str, ...] = field(default=())
    letter: str | None = None


def default_letters(protocol: str) -> dict[str, str]:
    """Letter -> type key of a protocol in MMErroR's fixed order (P/N for ``presence``)."""
    if protocol == "presence":
        return {"P": PRESENT, "N": ABSENT}
    if protocol not in _N_LETTERS:
        raise ValueError(f"protocol must be one of {', '.join(DIAGNOSIS_PROTOCOLS)}, "
                         f"got {protocol!r}")
    return dict(zip("ABCDE", MMERROR_LETTER_ORDER[:_N_LETTERS[protocol]]))


# ---------------------------------------------------------------- names of the error types
def _name_table() -> dict[str, str]:
    table = {}
    for key, t in error_types("mmerror").items():
        for spelling in (t.name, *t.spellings, MMERROR_AUTHOR_LABELS[key][2:]):
            table[spelling.lower().replace("_", " ")] = key
    table.update({"vpe": "vpe", "qce": "qce", "kde": "kde", "kae": "kde", "noerror": "no_error",
                  "no errors": "no_error"})
    table.pop("none", None)  # "none" is an answer only as the whole reply (see _WHOLE_NAMES)
    return table


_NAMES = _name_table()
_WHOLE_NAMES = {**_NAMES, "re": "re", "none": "no_error"}
_NAME_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Ea-e]_)?(" + "|".join(
        re.escape(n).replace(r"\ ", r"[\s_]+")
        for n in sorted(_NAMES, key=len, reverse=True)) + r")(?![A-Za-z0-9])", re.IGNORECASE)

_PRESENCE_WORDS = {"p": PRESENT, "n": ABSENT, "yes": PRESENT, "no": ABSENT,
                   "present": PRESENT, "absent": ABSENT, "error present": PRESENT,
                   "error": PRESENT, "no error": ABSENT, "no errors": ABSENT,
                   "error is present": PRESENT, "there is an error": PRESENT,
                   "there is no error": ABSENT, "none": ABSENT}

# ---------------------------------------------------------------- patterns
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_BOX_MARKERS = re.compile(r"<\|(?:begin|end)_of_box\|>")
_WRAP = r"[\s*_`~$(\[{]*"
_UNWRAP = r"[\s*_`~$)\]}.!?:,;]*"
_UNWRAP_CHARS = " \t\r\n*_`~$)]}.!?:,;"
# No two adjacent parts may match the same character: a pattern whose parts compete (e.g.
# "\s*" before a class holding spaces) backtracks quadratically on a long run of them.
_BOXED = r"(?:\\boxed\{\s*(?:\\(?:text|mathbf|mathrm|textbf)\{\s*)?)?"
_LETTER_WHOLE = re.compile(_WRAP + _BOXED + r"([A-Za-z])" + _UNWRAP)
_LETTER_PREFIX = re.compile(_WRAP + r"([A-Z])[\s*_`)\].:\-–]+")
_MARKER = re.compile(r"(?i)\b(?:final\s+answer|the\s+answer\s+is|answer|output|option|choice"
                     r"|\\boxed)\s*(?:is\s*)?[:\-–=]?\s*")
# After a marker, a letter is an answer when bracketed ("(B) since step 3 is wrong": the
# brackets close it whatever follows), when punctuation or the line's end follows, or when a
# reason does ("B because the total is off"); never when another word does ("A careful look").
_MARKER_LETTER = re.compile(
    r"[*_`~$\s]*(?:[(\[{][*_`~$]*([A-Za-z])[*_`~$]*[)\]}]"
    r"|([A-Za-z])[)\]}*_`~$]*(?=\s*(?:$|[.,;:!?\-–\n])|\s+(?:because|since|as|due|given)\b))")
_TAIL = 120
_LEADING = re.compile(r"[*_`~(\s]*([A-Z])[*_`~]*\s*[.):]\s*\S")


def _strip_hidden(text: str) -> str | None:
    close = text.rfind(_THINK_CLOSE)
    if close >= 0:
        text = text[close + len(_THINK_CLOSE):]
    elif _THINK_OPEN in text:
        return None
    return _BOX_MARKERS.sub("", text)


def _clean_words(text: str) -> str:
    return re.sub(r"[\s_]+", " ", re.sub(r"[^A-Za-z_\s]+", " ", text)).strip().lower()


class _Reader:
    """Rules 1-5 for one reply and one letter table."""

    def __init__(self, protocol: str, letters: dict[str, str]) -> None:
        self.protocol = protocol
        self.letters = {k.upper(): v for k, v in letters.items()}
        self.presence = protocol == "presence"

    def letter(self, letter: str, rule: str) -> DiagnosisParse:
        value = self.letters.get(letter.upper())
        if value is None:
            return DiagnosisParse(None, failure="out_of_options", letter=letter.upper())
        return DiagnosisParse(value, rule, letter=letter.upper())

    def name(self, text: str) -> str | None:
        words = _clean_words(text)
        if self.presence:
            return _PRESENCE_WORDS.get(words)
        key = _WHOLE_NAMES.get(words)
        if key is None and re.fullmatch(r"[a-e] .+", words):  # the authors' "B_Reasoning_Error"
            key = _WHOLE_NAMES.get(words[2:])
        if key is None and text.strip() == "RE":
            key = "re"
        return key if key in self.letters.values() or key is None else "__off_menu__"

    def option(self, text: str, rule: str) -> DiagnosisParse | None:
        """Rule 1 on ``text``: a wrapped letter, a letter with a name, or a name."""
        text = text.strip()
        m = _LETTER_WHOLE.fullmatch(text)
        if m:
            return self.letter(m.group(1), rule)
        if not self.presence:
            m = _LETTER_PREFIX.match(text)
            rest = text[m.end():].rstrip(_UNWRAP_CHARS) if m else ""
            if m and rest and m.group(1) in "ABCDEFGH":
                named = self.name(rest)
                if named is not None:
                    read = self.letter(m.group(1), rule)
                    if read.value is not None and named != read.value:
                        return DiagnosisParse(None, failure="letter_name_conflict",
                                              letter=read.letter)
                    return read
        named = self.name(text)
        if named == "__off_menu__":
            return DiagnosisParse(None, failure="out_of_options")
        if named is not None:
            return DiagnosisParse(named, rule)
        return None

    def marker(self, text: str) -> DiagnosisParse | None:
        answers = []
        matches = list(_MARKER.finditer(text))
        for k, m in enumerate(matches):
            # An answer after a marker is short: its window is bounded (and ends where the next
            # marker starts), so that many markers without a line break cost linear time with
            # a small constant, each character read once.
            stop = min(len(text), m.end() + _TAIL)
            if k + 1 < len(matches):
                stop = max(m.end(), min(stop, matches[k + 1].start()))
            end = text.find("\n", m.end(), stop)
            tail = text[m.end(): stop if end < 0 else end]
            got = None
            lm = _MARKER_LETTER.match(tail)
            if lm:
                got = self.letter(lm.group(1) or lm.group(2), "marker")
            else:
                got = self.option(tail, "marker")
                if got is None and not self.presence:
                    found = {mm.group(1) for mm in _NAME_RE.finditer(tail)}
                    keys = {_NAMES[_clean_words(f)] for f in found}
                    if len(keys) == 1:
                        got = DiagnosisParse(keys.pop(), "marker")
            if got is not None:
                answers.append(got)
        if not answers:
            return None
        last = answers[-1]
        if any(a.value != last.value for a in answers[:-1]):
            return DiagnosisParse(last.value, last.rule, last.failure, ("revised_answer",),
                                  last.letter)
        return last

    def read(self, text: str) -> DiagnosisParse:
        for step in (lambda: self.option(text, "whole"), lambda: self.marker(text),
                     lambda: self.option(_last_line(text), "last_line")):
            got = step()
            if got is not None:
                return got
        if self.presence:
            return DiagnosisParse(None, failure="no_answer")
        m = _LEADING.match(text)
        if m:
            return self.letter(m.group(1), "leading_letter")
        keys = {_NAMES[_clean_words(m.group(1))] for m in _NAME_RE.finditer(text)}
        keys &= set(self.letters.values())
        if len(keys) == 1:
            return DiagnosisParse(keys.pop(), "single_name")
        return DiagnosisParse(None, failure="ambiguous_names" if keys else "no_answer")


def _last_line(text: str) -> str:
    stripped = text.rstrip()
    return stripped[stripped.rfind("\n") + 1:]


def parse_diagnosis(reply: str | None, protocol: str = "etc",
                    letters: dict[str, str] | None = None) -> DiagnosisParse:
    """The diagnosis in ``reply`` under ``protocol`` (module docstring); ``letters`` maps the
    offered letters to type keys (default: :func:`default_letters`).

    Examples
    --------
    >>> parse_diagnosis("<think>maybe D</think>The answer is **B**.")
    DiagnosisParse(value='re', rule='marker', failure=None, flags=(), letter='B')
    >>> parse_diagnosis("A careful look shows step 2 is wrong.").failure
    'no_answer'
    >>> parse_diagnosis("E", "etc").failure
    'out_of_options'
    >>> parse_diagnosis("No", "presence").value
    'absent'
    """
    table = default_letters(protocol) if letters is None else dict(letters)
    if protocol not in DIAGNOSIS_PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(DIAGNOSIS_PROTOCOLS)}")
    text = "" if reply is None else str(reply)
    if len(text) > MAX_REPLY_CHARS:
        return DiagnosisParse(None, failure="reply_too_long")
    visible = _strip_hidden(text)
    if visible is None:
        return DiagnosisParse(None, failure="unterminated_reasoning")
    if not visible.strip():
        return DiagnosisParse(None, failure="empty")
    return _Reader(protocol, table).read(visible)

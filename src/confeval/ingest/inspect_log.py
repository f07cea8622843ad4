"""Inspect evaluation logs (``.eval``, ``.json``), read with ``inspect_ai.log.read_eval_log``.

Why the library: an ``.eval`` log is a zip archive of zstd-compressed JSON members, which the
standard library cannot read; Inspect's own reader also knows every log version. It is an
optional extra (``pip install 'confeval[ingest]'``), imported only when a log is read.

Per sample (an id sampled in several epochs gives one sample per epoch): ``id``, ``epoch``,
``target`` (for ``choice()``, the gold letter), ``choices``, each scorer's ``value`` turned into
a number by Inspect's own rules (``value_to_float``: C = 1, I = 0, P = 0.5, N = 0, numbers as
they are) and its ``answer``; and from the output's log-probabilities the option letters at the
first generated token that is one (or whose top alternatives list one), read by the same reader
the OpenAI backend uses (:func:`confeval.parse.option_tokens.extract_from_tokens`): a small
model's reply and its log-prob tokens need not line up, so the letter is found among the tokens
themselves. A sample with no option letter there, without log-probabilities, or whose scorer gave
no value, is an excluded row under its reason (``inspect_*``); one with a log-probability that
is none (above 0, NaN, +-inf) under ``impossible_logprob``. A sample id logged twice in one
epoch is one sample (:func:`confeval.ingest.read_records` keeps the first).

An ``.eval`` archive is untrusted: before Inspect reads it, every member is decompressed in
chunks and counted, without being kept (:func:`confeval._untrusted.check_archive`), and one
that expands past the caps (512 MB a member, 200 times the archive's size in all; both set by
environment variables) is one error naming the file, the member and the cap, never a read of
the whole (a 168 KB archive once expanded to 940 MB in memory).
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._numeric import as_logprob
from .._untrusted import check_archive

__all__ = ["InspectSample", "looks_like_log", "read_log"]


@dataclass
class InspectSample:
    """One sample of one epoch: its id, gold letter, option letters, the scorer's value as a
    number, and the letters' log-probabilities at the answer position (None: not read)."""

    doc_id: str
    epoch: int
    target: str
    letters: list[str]
    correct: float | None
    letter_logprobs: dict[str, float] | None
    n_missing: int = 0
    missing: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


def looks_like_log(path: Path) -> bool:
    """An ``.eval`` file (a zip archive), or a ``.json`` whose start names Inspect's fields."""
    name = path.name.lower()
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if name.endswith(".eval"):
        return head[:2] == b"PK"
    return name.endswith(".json") and b'"eval"' in head and b'"version"' in head


def _import_reader():
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise ValueError("reading Inspect logs needs inspect-ai: pip install "
                         "'confeval[ingest]'") from None
    return read_eval_log, value_to_float()


def _tokens(output) -> list | str | None:
    """The output's generated tokens with their top alternatives (None: no log-probabilities;
    ``impossible_logprob`` where one is no log-probability)."""
    from ..backends.base import TokenLogprob

    choices = getattr(output, "choices", None) or []
    logprobs = getattr(choices[0], "logprobs", None) if choices else None
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    tokens = []
    for t in content:
        if t.logprob is None:
            continue
        logprob = as_logprob(float(t.logprob))
        top = [(str(a.token), as_logprob(float(a.logprob))) for a in (t.top_logprobs or ())]
        if logprob is None or any(lp is None for _, lp in top):
            return "impossible_logprob"
        tokens.append(TokenLogprob(str(t.token), logprob, tuple(top)))
    return tokens


def _sample(sample, to_float, scorer: str | None) -> tuple[InspectSample | None, str]:
    from ..parse.option_tokens import extract_from_tokens

    n = len(sample.choices or [])
    if n < 2:
        return None, "inspect_no_choices"
    letters = list(string.ascii_uppercase[:n])
    target = sample.target if isinstance(sample.target, str) else \
        (sample.target[0] if sample.target else "")
    if target not in letters:
        return None, "inspect_target_not_a_choice"
    scores = sample.scores or {}
    score = scores.get(scorer) if scorer else next(iter(scores.values()), None)
    correct = None
    if score is not None:
        try:
            correct = float(to_float(score.value))
        except (TypeError, ValueError):
            correct = None
    if correct is None or not math.isfinite(correct):
        return None, "inspect_no_score"
    tokens = _tokens(sample.output)
    if tokens is None:
        return None, "inspect_no_logprobs"
    if isinstance(tokens, str):
        return None, tokens
    read = extract_from_tokens(tokens, letters)
    if read["raw"] is None:
        return None, "inspect_no_letter_in_top_logprobs"
    return InspectSample(str(sample.id), int(sample.epoch or 1), target, letters, correct,
                         read["raw"], read["n_missing"], tuple(read["missing"]),
                         {"answer": getattr(score, "answer", None)}), ""


def read_log(path: str | Path, scorer: str | None = None) -> tuple[list, list[str], str | None]:
    """(samples or None per sample, the reason of each unusable one, the model) of a log."""
    read_eval_log, to_float = _import_reader()
    path = Path(path)
    if path.name.lower().endswith(".eval"):
        check_archive(path)   # every member within the caps before Inspect reads it whole
    try:
        log = read_eval_log(str(path))
    except Exception as exc:   # a truncated zip, a foreign JSON: Inspect says which
        raise ValueError(f"{path}: not a readable Inspect log ({type(exc).__name__}: "
                         f"{str(exc)[:200]})") from None
    samples, reasons = [], []
    for sample in log.samples or []:
        got, reason = _sample(sample, to_float, scorer)
        samples.append(got)
        reasons.append(reason)
    model = getattr(getattr(log, "eval", None), "model", None)
    return samples, reasons, (str(model) if model else None)

"""Inspect evaluation logs (``.eval``, ``.json``), read with ``inspect_ai.log.read_eval_log``.

Why the library: an ``.eval`` log is a zip archive of zstd-compressed JSON members, which the
standard library cannot read; Inspect's own reader also knows every log version. It is an
optional extra (``pip install 'confeval[ingest]'``), imported only when a log is read.

One :class:`InspectSample` per sample, epoch and **scorer** (a log scored by ``includes()`` and
``choice()`` holds two verdicts per sample, which may disagree: each scorer is read on its own,
never pooled; :func:`confeval.ingest.read_records` keeps one, ``--scorer NAME``). Per sample:
``id``, ``epoch``, the scorer's name, ``target`` (for ``choice()``, the gold letter), the
scorer's ``value`` turned into a number by Inspect's own rules (``value_to_float``: C = 1,
I = 0, P = 0.5, N = 0, numbers as they are, so a partial score counts as such; a dict value's
``correct`` key) and its ``answer``, and the reply.

Confidences, from what the log holds:

* multiple choice (``choices``): the option letters' log-probabilities at the first generated
  token that is one (or whose top alternatives list one), read by the reader the OpenAI backend
  uses (:func:`confeval.parse.option_tokens.extract_from_tokens`); the letter is the scorer's
  answer when it names one, else the most likely letter (``letter_imputed``);
* every log with log-probabilities: the probability of the scorer's answer from the tokens that
  spell it — the sequence probability, its length-normalised form and the first answer token's
  (:mod:`confeval.parse.answer_tokens`; a reply without the answer's text has none);
* a confidence stated in the reply ("Confidence: 80%", :func:`confeval.parse.
  parse_stated_confidence`, read only after such a word);
* a confidence the scorer attached (a dict value's ``confidence``, or
  ``metadata["confidence"]``: what the ``confeval/confidence`` scorer writes);
* across epochs: how often the other epochs of the sample gave the same answer.

Unusable samples are excluded rows under their reason: ``inspect_no_score`` (the sample holds
no score of that scorer, or no scores at all), ``inspect_unscored`` (the value is NaN:
``Score.unscored()``, a grader whose reply held no grade; Inspect's metrics skip it too),
``inspect_score_not_a_number`` (a list, or a dict without ``correct``),
``inspect_target_not_a_choice``; a log-probability that is none (above 0, NaN, +-inf) makes
the sample ``impossible_logprob``. A sample id logged twice in one epoch is one sample
(:func:`confeval.ingest.read_records` keeps the first). A log whose format version is newer
than :data:`KNOWN_VERSION`, or that Inspect cannot read (a truncated ``.eval``), is one error
naming the file; so is a log in which a JSON object names a key twice (the file, the member
and the key: Inspect keeps one of the two values, another reader may keep the other).

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
from .._untrusted import (
    DuplicateKeyError,
    check_archive,
    decompression_errors,
    loads_unique,
    member_chunks,
)

__all__ = ["KNOWN_VERSION", "InspectSample", "looks_like_log", "read_log"]

KNOWN_VERSION = 2
"""The newest Inspect log format version this reader knows (Inspect 0.3 writes 2)."""

ANSWER_POOLINGS = {"p_answer": "sequence", "p_answer_norm": "normalised",
                   "p_answer_first": "first"}
"""The answer-token confidences of a sample, by column, with their pooling
(:mod:`confeval.parse.answer_tokens`)."""


@dataclass
class InspectSample:
    """One sample of one epoch under one scorer: its id, the scorer, its gold (``target``),
    the scorer's value as a number (``correct``) and answer, the reply, and what the log holds
    for a confidence: the option letters' log-probabilities at the answer position (multiple
    choice; None: not read) and ``confidences`` by column (``p_answer``, ``p_answer_norm``,
    ``p_answer_first``, ``stated_confidence``, ``scorer_confidence``, ``epoch_agreement``)."""

    doc_id: str
    epoch: int
    target: str
    letters: list[str]
    correct: float | None
    letter_logprobs: dict[str, float] | None
    n_missing: int = 0
    missing: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    scorer: str = ""
    answer: str | None = None
    reply: str = ""
    confidences: dict[str, float] = field(default_factory=dict)
    letter: str | None = None
    letter_imputed: bool = False

    @property
    def answer_key(self) -> str:
        """What the sample answered, to compare epochs: the letter (multiple choice), else the
        scorer's answer (else the reply), stripped and in lower case."""
        text = self.letter if self.letters else (self.answer or self.reply)
        return (text or "").strip().lower()


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


def _verdict(score, to_float) -> float | str:
    """The scorer's value as a number by Inspect's rules (a dict value: its ``correct``), or
    the reason it is none."""
    value = score.value
    if isinstance(value, dict):
        if "correct" not in value:
            return "inspect_score_not_a_number"
        value = value["correct"]
    if isinstance(value, (list, tuple, dict)):
        return "inspect_score_not_a_number"
    if value is None:
        return "inspect_unscored"
    try:
        number = float(to_float(value))
    except (TypeError, ValueError):
        return "inspect_score_not_a_number"
    return number if math.isfinite(number) else "inspect_unscored"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _scorer_confidence(score) -> float | None:
    """A confidence the scorer attached: a dict value's ``confidence``, else
    ``metadata["confidence"]``."""
    value = score.value
    if isinstance(value, dict) and "confidence" in value:
        return _number(value["confidence"])
    return _number((score.metadata or {}).get("confidence"))


def _generation_confidences(tokens: list | None, answer: str | None, reply: str
                            ) -> dict[str, float]:
    from ..parse import parse_stated_confidence
    from ..parse.answer_tokens import answer_tokens, pooled_probability

    found: dict[str, float] = {}
    if tokens:
        chosen = answer_tokens(tokens, answer)   # no answer: none (as the scorer extension)
        if not isinstance(chosen, str):
            import numpy as np

            lps = np.array([t.logprob for t in chosen], dtype=np.float64)
            for column, pooling in ANSWER_POOLINGS.items():
                found[column] = pooled_probability(lps, pooling)
    stated = parse_stated_confidence(reply)
    if stated.value is not None:
        found["stated_confidence"] = stated.value
    return found


def _target(sample) -> str:
    target = sample.target
    return target if isinstance(target, str) else (str(target[0]) if target else "")


def _sample(sample, name: str, score, to_float, tokens) -> tuple[InspectSample | None, str]:
    """One sample's reading under the scorer ``name`` (``tokens``: its output's, read once)."""
    from ..parse.option_tokens import extract_from_tokens
    from .layout import answered_letter

    if score is None:
        return None, "inspect_no_score"
    correct = _verdict(score, to_float)
    if isinstance(correct, str):
        return None, correct
    if isinstance(tokens, str):
        return None, tokens
    n = len(sample.choices or [])
    letters = list(string.ascii_uppercase[:n]) if n >= 2 else []
    target = _target(sample)
    answer = score.answer if isinstance(score.answer, str) else None
    reply = getattr(sample.output, "completion", "") or ""
    got = InspectSample(str(sample.id), int(sample.epoch or 1), target, letters, correct, None,
                        extra={"answer": answer}, scorer=name, answer=answer, reply=reply)
    if letters:
        if target not in letters:
            return None, "inspect_target_not_a_choice"
        read = extract_from_tokens(tokens, letters) if tokens else None
        if read is not None and read["raw"] is not None:
            got.letter_logprobs, got.n_missing = read["raw"], read["n_missing"]
            got.missing = tuple(read["missing"])
            got.letter, got.letter_imputed = answered_letter(got.letter_logprobs, letters,
                                                             answer)
        got.extra["logprobs"] = "none" if tokens is None else \
            "no_letter" if got.letter_logprobs is None else "read"
    else:
        got.confidences.update(_generation_confidences(tokens, answer, reply))
    attached = _scorer_confidence(score)
    if attached is not None:
        got.confidences["scorer_confidence"] = attached
    return got, ""


def _epoch_agreement(samples: list) -> None:
    """Each sample's ``epoch_agreement``: the share of the other epochs of its id (under its
    scorer) whose answer is its own; none with one epoch."""
    answers: dict[tuple, list] = {}
    for s in samples:
        if s is not None:
            answers.setdefault((s.doc_id, s.scorer), []).append(s)
    for group in answers.values():
        if len(group) < 2:
            continue
        for s in group:
            others = [o for o in group if o is not s]
            s.confidences["epoch_agreement"] = \
                sum(o.answer_key == s.answer_key for o in others) / len(others)


def _declared_version(path: Path) -> Any:
    """The format version a log declares, read before Inspect reads it (None: not found):
    an ``.eval``'s ``header.json`` (or ``_journal/start.json``), a ``.json`` log's first
    ``"version"`` key within its first 4 KB."""
    import json
    import re
    import zipfile

    try:
        if path.name.lower().endswith(".eval"):
            with zipfile.ZipFile(path) as archive:   # within the caps: checked before
                names = set(archive.namelist())
                member = next((m for m in ("header.json", "_journal/start.json")
                               if m in names), None)
                return json.loads(archive.read(member)).get("version") if member else None
        with path.open("rb") as f:
            found = re.search(rb'"version"\s*:\s*(-?\d+)', f.read(4096))
        return int(found.group(1)) if found else None
    # NotImplementedError: a member compressed in a way zipfile cannot read (zstd);
    # Inspect's own read, and its version check after it, then say what is wrong
    except (OSError, ValueError, zipfile.BadZipFile, NotImplementedError, AttributeError,
            KeyError, RuntimeError):
        return None


def _check_version(path: Path, version: Any) -> None:
    """A log of a format version this reader does not know is one error naming it."""
    if version is None:
        return
    if isinstance(version, bool) or not isinstance(version, int) or version > KNOWN_VERSION:
        raise ValueError(f"{path}: an Inspect log of format version {version!r}, which this "
                         f"confeval does not know (it reads up to {KNOWN_VERSION}): update "
                         "confeval and inspect-ai")


def _check_unique_keys(path: Path) -> None:
    """Every JSON document of a log (an ``.eval``'s members, a ``.json`` log whole) read
    with :func:`confeval._untrusted.loads_unique`: an object naming a key twice is one
    ``ValueError`` naming the file, the member and the key. Inspect's reader keeps one of
    the two values silently, and which one another reader keeps is its own choice. Anything
    else wrong (damaged data, no JSON) is left to Inspect's reader, which names it; the
    archive is within the decompression caps (checked before)."""
    if not path.name.lower().endswith(".eval"):
        _unique_keys_of(path, path.read_bytes(), "")
        return
    import zipfile

    with path.open("rb") as handle:
        try:
            members = zipfile.ZipFile(handle).infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return
        for info in members:
            if not info.filename.lower().endswith(".json"):
                continue
            try:
                data = b"".join(member_chunks(handle, info))
            except (*decompression_errors(), ImportError):   # damaged: Inspect names it
                continue
            _unique_keys_of(path, data, f"member {info.filename!r}: ")


def _unique_keys_of(path: Path, data: bytes, where: str) -> None:
    try:
        loads_unique(data)
    except DuplicateKeyError as exc:
        raise ValueError(f"{path}: {where}{exc}; not a log Inspect wrote, or edited "
                         "since") from None
    except (ValueError, RecursionError):   # no JSON: Inspect's reader says what is wrong
        return


def _scorer_names(log) -> list[str]:
    """The log's scorers in its order: its results', else those its samples hold."""
    names = [str(r.name) for r in (getattr(getattr(log, "results", None), "scores", None)
                                   or [])]
    for sample in log.samples or []:
        names.extend(str(k) for k in (sample.scores or {}) if str(k) not in names)
    return list(dict.fromkeys(names))


def read_log(path: str | Path, scorer: str | None = None, *, with_scorers: bool = False
             ) -> tuple:
    """(samples or None per sample, epoch and scorer, the reason of each unusable one, the
    model) of a log; ``scorer`` keeps only that scorer's. A sample without scores is one
    unusable entry (``inspect_no_score``) that belongs to no scorer. ``with_scorers``: each
    entry's scorer too (None for a sample without scores), as a fourth element."""
    read_eval_log, to_float = _import_reader()
    path = Path(path)
    if path.name.lower().endswith(".eval"):
        check_archive(path)   # every member within the caps before Inspect reads it whole
    _check_version(path, _declared_version(path))
    _check_unique_keys(path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:   # a truncated zip, a foreign JSON: Inspect says which
        raise ValueError(f"{path}: not a readable Inspect log ({type(exc).__name__}: "
                         f"{str(exc)[:200]})") from None
    _check_version(path, getattr(log, "version", None))
    names = [scorer] if scorer else _scorer_names(log)
    samples, reasons, scorers = [], [], []
    for sample in log.samples or []:
        scores = sample.scores or {}
        if not scores:
            samples.append(None)
            reasons.append("inspect_no_score")
            scorers.append(None)
            continue
        tokens = _tokens(sample.output)
        for name in names:
            got, reason = _sample(sample, name, scores.get(name), to_float, tokens)
            samples.append(got)
            reasons.append(reason)
            scorers.append(name)
    _epoch_agreement(samples)
    model = getattr(getattr(log, "eval", None), "model", None)
    model = str(model) if model else None
    return (samples, reasons, model, scorers) if with_scorers else (samples, reasons, model)

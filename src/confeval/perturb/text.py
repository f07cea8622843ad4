"""Lexical (synonym) and syntactic rewrites of reasoning steps by a model, validated.

For each step a model (any backend) is asked — in our own words — for five rewrites under
ConfProBench's constraints; the reply is read safely (:func:`confeval.parse.read_literal`,
never evaluated), every candidate is checked by
:func:`confeval.perturb.validate.validate_rewrite`, and one valid candidate is chosen with
the seeded generator. When none is valid the request is repeated (a fresh sample) up to
``retries`` times; a step that still has no valid rewrite keeps its original text and is
recorded as a failure with the reasons. Syntactic candidates must name which of the six
transformations they applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..backends import Backend, GenerateParams
from ..parse.literal import LiteralError, read_literal
from .validate import SYNTACTIC_TRANSFORMATIONS, validate_rewrite

__all__ = ["Rewrite", "rewrite_messages", "rewrite_step"]

_COMMON = """Rules:
- Never change a number, unit, variable, formula or LaTeX expression: copy them exactly.
- Keep every derivation and intermediate result; drop nothing, add nothing.
- Keep the meaning, and keep the length within three words of the original.
- Write natural, grammatical English."""

_LEXICAL = """Rewrite the sentence below five times, each time replacing everyday (non-technical) \
words with synonyms: at least one word per version, as many as sound natural, a different \
choice each time. Leave technical terms, symbols, list markers and formatting as they are; \
keep the sentence structure.
{rules}
Reply with JSON only: {{"rewrites": ["version 1", "version 2", "version 3", "version 4", \
"version 5"]}}

Sentence: {step}"""

_SYNTACTIC = """Rewrite the sentence below five times, each time changing its syntax with \
exactly one of these transformations (name it): {names}.
{rules}
Reply with JSON only: {{"rewrites": [{{"transformation": "voice", "text": "..."}}, ... five \
entries]}}

Sentence: {step}"""


@dataclass
class Rewrite:
    """The outcome for one step."""

    text: str                       # the chosen rewrite, or the original when it failed
    ok: bool
    transformation: str | None = None
    attempts: int = 0
    rejected: dict[str, int] = field(default_factory=dict)  # reason -> count


def rewrite_messages(step: str, kind: str) -> list[dict]:
    """Chat messages asking a model for a lexical or syntactic rewrite of one step."""
    if kind == "lexical":
        prompt = _LEXICAL.format(rules=_COMMON, step=step)
    elif kind == "syntactic":
        names = "; ".join(f"{k} ({v})" for k, v in SYNTACTIC_TRANSFORMATIONS.items())
        prompt = _SYNTACTIC.format(rules=_COMMON, step=step, names=names)
    else:
        raise ValueError("kind must be 'lexical' or 'syntactic'")
    return [{"role": "user", "content": prompt}]


def _candidates(reply: str, kind: str) -> list[tuple[str, str | None]]:
    """(text, transformation) pairs from a reply; [] when unreadable."""
    start = min((i for i in (reply.find("{"), reply.find("[")) if i >= 0), default=-1)
    if start < 0:
        return []
    try:
        value = read_literal(reply[start:])
    except LiteralError:
        return []
    if isinstance(value, dict):
        value = next((v for v in value.values() if isinstance(v, list)), [])
    out = []
    for entry in value if isinstance(value, list) else []:
        if isinstance(entry, str):
            out.append((entry, None))
        elif isinstance(entry, dict):
            low = {str(k).lower(): v for k, v in entry.items()}
            text = low.get("text") or low.get("sentence") or low.get("rewrite")
            name = low.get("transformation") or low.get("type")
            if isinstance(text, str):
                out.append((text, None if name is None else
                            re.sub(r"[^a-z_]+", "_", str(name).lower()).strip("_")))
    return out


async def rewrite_step(backend: Backend, step: str, kind: str, rng: np.random.Generator, *,
                       retries: int = 3, max_word_diff: int = 3,
                       temperature: float = 0.7) -> Rewrite:
    """Ask for five rewrites of ``step``, keep the valid ones, pick one (seeded)."""
    result = Rewrite(step, False)
    for attempt in range(retries + 1):
        params = GenerateParams(max_tokens=600, temperature=temperature,
                                seed=int(rng.integers(2**31)))
        reply = (await backend.generate(rewrite_messages(step, kind), params))[0].text
        result.attempts = attempt + 1
        candidates = _candidates(reply or "", kind)
        if not candidates:
            result.rejected["unreadable_reply"] = result.rejected.get("unreadable_reply", 0) + 1
        valid = []
        for text, name in candidates:
            problems = validate_rewrite(step, text, kind=kind, max_word_diff=max_word_diff)
            if kind == "syntactic" and name not in SYNTACTIC_TRANSFORMATIONS:
                problems.append("unknown_transformation")
            for p in problems:
                result.rejected[p] = result.rejected.get(p, 0) + 1
            if not problems:
                valid.append((text, name))
        if valid:
            text, name = valid[int(rng.integers(len(valid)))]
            result.text, result.ok, result.transformation = text, True, name
            return result
    return result

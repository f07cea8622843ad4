"""Asking a model a multiple-choice question and reading its option-letter distribution.

Two ways to get P(option), chosen by what the backend can do (see
:func:`confeval.suites.base.read_method`):

``score`` (exact; ``hf:`` and ``local`` backends)
    The log-probability of each option letter as the assistant's whole reply.
``top_logprobs`` (any OpenAI-compatible server)
    Generate greedily with ``top_logprobs=k`` and read the letters among the top-k
    alternatives with :func:`confeval.parse.option_tokens.extract_from_tokens`.

Either way the letter log-probabilities are renormalised over the options, and the mass that
fell outside the letters (1 - sum of their raw probabilities) is recorded as ``mass_outside``.

Datasets (:func:`load_mc_items`, the one loader of the ``sets`` and ``measures`` suites):
``builtin:arith-mc``, or a JSONL/CSV/Parquet file in any of these layouts

- generic: ``question``, ``answer`` (the gold letter) and either ``options`` (a list) or one
  column per option letter ``A``, ``B``, ... (empty trailing cells mean fewer options);
- CommonsenseQA, Hugging Face layout: ``question``, ``choices: {label: [...], text: [...]}``,
  ``answerKey``;
- CommonsenseQA, original layout: ``question: {stem, choices: [{label, text}, ...]}``,
  ``answerKey``.

``item_id`` (or ``id``) names an item (its row number otherwise); other columns (e.g.
``category``) are carried into the items. Options are shown to the model as ``A``, ``B``, ...
in their order; a dataset whose labels are other strings has its gold answer mapped to the
letter at the same position. Rows that cannot be asked are counted in ``items.excluded``
before any model call, never sent: ``missing_question``, ``missing_answer``,
``fewer_than_2_options``, ``empty_option`` (a null or blank option text before the last
option), ``duplicate_option_labels``, ``too_many_options`` (more than 26),
``answer_not_an_option`` (compared exactly: ``b`` is not ``B``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..backends import Backend, GenerateParams
from ..parse._tokens import DEFAULT_FLOOR
from ..parse.option_tokens import extract_from_tokens
from ..records import RecordSet
from ..tasks import load_builtin
from ..tasks.multiple_choice import check_mc_layout, letter_columns, letters_for, mc_item
from .base import Items, read_method

__all__ = ["build_messages", "letters_for", "load_mc_items", "option_distribution",
           "valid_logprobs"]

IDK = "I don't know"
NOTA = "None of the above"


def valid_logprobs(values) -> bool:
    """Log-probabilities a model may have given: finite (or -inf, probability 0) and not
    above 0 (a little float slack allowed). A NaN or a positive value from a server is not
    a distribution: the record is unparseable (``invalid_logprobs``), never scored."""
    arr = np.asarray(list(values), dtype=np.float64)
    return bool(arr.size) and not np.isnan(arr).any() and not (arr > 1e-6).any() and \
        bool(np.isfinite(arr).any())


def build_messages(question: str, options: Sequence[str], *, idk: bool = False,
                   nota: bool = False, system: str | None = None) -> tuple[list[dict], list[str]]:
    """Chat messages asking for the letter of the right option, and the letters offered.

    ``idk``/``nota`` append "I don't know" / "None of the above" as extra options (as in the
    uncertainty benchmarks' prompts), so a model has an honest way out.
    """
    opts = list(options) + ([IDK] if idk else []) + ([NOTA] if nota else [])
    letters = letters_for(len(opts))
    listing = "\n".join(f"{letter}. {text}" for letter, text in zip(letters, opts))
    user = (f"{question.strip()}\n\n{listing}\n\n"
            f"Reply with the letter of the correct option ({', '.join(letters)}) and nothing "
            "else.")
    messages = [{"role": "system", "content": system or
                 "You answer multiple-choice questions with a single option letter."},
                {"role": "user", "content": user}]
    return messages, letters


def _summarise(raw: Mapping[str, float], letters: Sequence[str]) -> dict[str, Any]:
    lp = np.array([raw[L] for L in letters], dtype=np.float64)
    total = logsumexp(lp)
    norm = lp - total
    return {"logprobs": dict(zip(letters, norm.tolist())),
            "mass_outside": float(max(0.0, 1.0 - math.exp(min(total, 0.0))))}


async def option_distribution(backend: Backend, messages: Sequence[dict],
                              letters: Sequence[str], *, method: str = "auto", top_k: int = 20,
                              floor: float = DEFAULT_FLOOR) -> dict[str, Any]:
    """Ask once and return the renormalised option distribution (see module docstring).

    Returns ``method, logprobs (letter -> log-prob, renormalised), mass_outside, text,
    n_missing, status ("ok" or "unparseable"), reason``.
    """
    method = read_method(backend, method)
    if method == "score":
        raw = dict(zip(letters, await backend.score(messages, list(letters))))
        if not valid_logprobs(raw.values()):
            return {"method": method, "logprobs": None, "mass_outside": None, "text": None,
                    "n_missing": 0, "status": "unparseable", "reason": "invalid_logprobs"}
        return {"method": method, **_summarise(raw, letters), "text": None, "n_missing": 0,
                "status": "ok", "reason": None}
    params = GenerateParams(max_tokens=8, temperature=0.0, logprobs=True, top_logprobs=top_k)
    gen = (await backend.generate(messages, params))[0]
    found = extract_from_tokens(gen.tokens or (), letters, floor)
    if found["raw"] is not None and not valid_logprobs(found["raw"].values()):
        found = {**found, "raw": None, "reason": "invalid_logprobs"}
    if found["raw"] is None:
        return {"method": method, "logprobs": None, "mass_outside": None, "text": gen.text,
                "n_missing": found["n_missing"], "status": "unparseable",
                "reason": found["reason"]}
    return {"method": method, **_summarise(found["raw"], letters), "text": gen.text,
            "n_missing": found["n_missing"], "status": "ok", "reason": None}


def load_mc_items(data: str, n: int | None = None, seed: int = 0) -> Items:
    """Multiple-choice items ``{item_id, question, options, letters, answer, ...}`` from
    ``builtin:arith-mc`` or a file in one of the layouts of the module docstring; ``answer``
    is the gold letter among ``letters`` (``A``, ``B``, ... one per option). The first ``n``
    askable items are kept; rows that cannot be asked are counted in ``items.excluded``."""
    if data.startswith("builtin:"):
        return Items({**it, "letters": letters_for(len(it["options"]))}
                     for it in load_builtin(data.split(":", 1)[1], n or 200, seed))
    frame = RecordSet.read(Path(data)).frame
    letter_cols = letter_columns(frame.columns)
    check_mc_layout(data, frame, letter_cols)
    items, excluded = Items(), {}
    for row in frame.to_dict(orient="records"):
        item = mc_item(row, letter_cols)
        if isinstance(item, str):
            excluded[item] = excluded.get(item, 0) + 1
            continue
        items.append(item)
        if n and len(items) == n:
            break
    items.excluded = excluded
    return items

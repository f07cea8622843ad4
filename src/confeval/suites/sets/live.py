"""The multiple-choice suite's live path: ask each question, record the option distribution.

Input data (``--data``): see :mod:`confeval.suites.sets.inputs`.

Each record holds ``logprob_A, logprob_B, ...`` (the renormalised option log-probabilities,
``null`` beyond the item's options), ``pred``, ``correct``, ``confidence`` (top
probability), ``mass_outside`` (probability mass the model put outside the option letters),
``method`` (``score`` or ``top_logprobs``), ``n_missing`` (letters absent from the top-k),
``status`` and ``reason``. These records are the input format of ``confeval sets score``
(``--logit-cols 'logprob_*' --input logprobs``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...backends import Backend
from ...evaluate import score_confidence_records
from ...records import RUN_RECORDS, RecordSet
from .._multiple_choice import build_messages, load_mc_items, option_distribution
from ..base import LiveSuite, distribution_needs
from .options import SetsOptions
from .scoring import score_sets_records

__all__ = ["LIVE", "SetsLive", "SetsOptions"]


class SetsLive(LiveSuite):
    """Ask each multiple-choice question once and record the option distribution; score the
    top-option confidence and conformal sets over the options."""

    name = "sets"
    default_data = "builtin:arith-mc"
    Options = SetsOptions
    record_layout: ClassVar[dict[str, Any]] = {
        "label_col": "answer", "logit_cols": "logprob_*", "input": "logprobs",
        "group_col": None}

    def needs(self, backend: Backend, options: SetsOptions) -> list[str]:
        return distribution_needs(backend, options.method)

    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        return load_mc_items(data, n, seed)

    async def run_item(self, item: dict, backend: Backend, options: SetsOptions) -> dict:
        messages, letters = build_messages(item["question"], item["options"],
                                           idk=options.idk, nota=options.nota)
        dist = await option_distribution(backend, messages, letters, method=options.method,
                                         top_k=options.top_k)
        record = {k: v for k, v in item.items() if k not in ("options", "letters")}
        record.update(n_options=len(letters), method=dist["method"], status=dist["status"],
                      reason=dist["reason"], text=dist["text"], n_missing=dist["n_missing"],
                      mass_outside=dist["mass_outside"])
        if dist["logprobs"] is None:
            record.update(pred=None, correct=None, confidence=None)
            return record
        lp = dist["logprobs"]
        pred = max(letters, key=lambda L: lp[L])
        for L in letters:
            record[f"logprob_{L}"] = lp[L]
        record.update(pred=pred, correct=int(pred == str(item["answer"]).strip()),
                      confidence=float(np.exp(lp[pred])))
        return record

    def score(self, records: list[dict], options: SetsOptions, model_name: str) -> dict:
        """The run's sections, each computed by the path that scores a record file: the
        top-option confidence (``confeval score RUN_DIR -c confidence -y correct``) and the
        conformal sets (``confeval sets score RUN_DIR``)."""
        name = model_name
        confidence: dict[str, Any] = {
            "kind": "confidence", "title": "Multiple choice: top-option probability",
            "description": "Confidence = probability of the chosen option letter, "
                           "renormalised over the options; correct = it is the gold letter.",
            "name_header": "model", "results": {}}
        sets: dict[str, Any] = {
            "kind": "sets", "title": "Multiple choice: conformal prediction sets",
            "description": "Split conformal (50/50 calibration/test) on the recorded option "
                           "probabilities; exact finite-sample quantile.",
            "name_header": "model", "results": {}}
        notes = []
        for section, score in ((confidence, self._confidence), (sets, score_sets_records)):
            try:
                with np.errstate(all="ignore"):
                    section["results"][name] = score(
                        RecordSet.from_records(records, source=RUN_RECORDS), options)
            except ValueError as exc:  # too few usable records for this section
                notes.append(str(exc))
        metrics = {"title": f"confeval run sets — {name}", "simulated": False,
                   "n_records": len(records), "sections": [confidence, sets]}
        if notes:
            metrics["warnings"] = notes
        return metrics

    @staticmethod
    def _confidence(rs: RecordSet, options: SetsOptions) -> dict:
        return score_confidence_records(rs, "confidence", "correct",
                                        n_resamples=options.bootstrap, seed=options.seed)


LIVE = SetsLive()

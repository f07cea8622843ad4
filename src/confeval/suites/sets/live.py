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

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import index_in
from ...backends import Backend
from ...evaluate import evaluate_confidence
from .._multiple_choice import build_messages, option_distribution
from ..base import LiveSuite, SuiteOptions, distribution_needs
from .inputs import LETTERS, load_mc_items

__all__ = ["SUITE", "SetsOptions", "SetsSuite"]


@dataclasses.dataclass(frozen=True)
class SetsOptions(SuiteOptions):
    """Options of a live sets run: the shared ones (:class:`~confeval.suites.base.SuiteOptions`),
    ``alpha`` of the conformal sets, and ``idk``/``nota`` extra options offered to the model."""

    alpha: float = 0.1
    idk: bool = False
    nota: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.alpha < 1:
            raise ValueError(f"--alpha must be in (0, 1), got {self.alpha}")


class SetsSuite(LiveSuite):
    """Ask each multiple-choice question once and record the option distribution; score the
    top-option confidence and conformal sets over the options."""

    name = "sets"
    default_data = "builtin:arith-mc"
    Options = SetsOptions

    def needs(self, backend: Backend, options: SetsOptions) -> list[str]:
        return distribution_needs(backend, options.method)

    def load_items(self, data: str, n: int | None, seed: int) -> list[dict]:
        return load_mc_items(data, n, seed)

    async def run_item(self, item: dict, backend: Backend, options: SetsOptions) -> dict:
        messages, letters = build_messages(item["question"], item["options"],
                                           idk=options.idk, nota=options.nota)
        dist = await option_distribution(backend, messages, letters, method=options.method,
                                         top_k=options.top_k)
        record = {k: v for k, v in item.items() if k not in ("options",)}
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
        ok = [r for r in records if r.get("status") == "ok"]
        excluded = {}
        if len(ok) < len(records):
            excluded["unparseable"] = len(records) - len(ok)
        section: dict[str, Any] = {
            "kind": "confidence", "title": "Multiple choice: top-option probability",
            "description": "Confidence = probability of the chosen option letter, "
                           "renormalised over the options; correct = it is the gold letter.",
            "name_header": "model", "results": {}}
        name = model_name
        if len(ok) >= 2:
            res = evaluate_confidence([r["confidence"] for r in ok], [r["correct"] for r in ok],
                                      n_resamples=options.bootstrap, seed=options.seed)
            outside = [r["mass_outside"] for r in ok if r.get("mass_outside") is not None]
            res["mean_mass_outside"] = float(np.mean(outside)) if outside else None
            section["results"][name] = {"n_read": len(records), "n_used": len(ok),
                                        "excluded": excluded, **res}
        sections = [section]
        if len(ok) >= 4:
            sections.append(self._sets_section(ok, name, options))
        return {"title": f"confeval run sets — {name}", "simulated": False,
                "n_records": len(records), "excluded": excluded, "sections": sections}

    @staticmethod
    def _sets_section(ok: list[dict], name: str, options: SetsOptions) -> dict:
        """Conformal sets from the recorded option log-probabilities (exact protocol)."""
        from .scoring import score_sets

        frame = pd.DataFrame(ok)
        letters = list(LETTERS[:int(frame["n_options"].max())])
        logp = frame.reindex(columns=[f"logprob_{L}" for L in letters]).to_numpy(np.float64)
        probs = np.exp(np.nan_to_num(logp, nan=-np.inf))
        probs /= probs.sum(axis=1, keepdims=True)
        labels = index_in(np.array(letters), frame["answer"].astype(str).str.strip().to_numpy())
        with np.errstate(all="ignore"):
            result = score_sets(probs, labels, alpha=options.alpha, split_seed=options.seed + 42)
        result.update(n_used=len(ok), excluded={})
        return {"kind": "sets", "title": "Multiple choice: conformal prediction sets",
                "description": "Split conformal (50/50 calibration/test) on the recorded "
                               "option probabilities; exact finite-sample quantile.",
                "name_header": "model", "results": {name: result}}


SUITE = SetsSuite()

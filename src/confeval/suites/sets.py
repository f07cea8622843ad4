"""The multiple-choice suite's live path: ask each question, record the option distribution.

Input data (``--data``): ``builtin:arith-mc`` or a JSONL/CSV/Parquet file with ``item_id``
(optional; row number otherwise), ``question``, ``answer`` (gold letter) and either an
``options`` list (JSONL) or one column per option letter ``A``, ``B``, ... (empty cells mean
fewer options). Other columns (e.g. ``category``) are carried into the records.

Each record holds ``logprob_A, logprob_B, ...`` (the renormalised option log-probabilities,
``null`` beyond the item's options), ``pred``, ``correct``, ``confidence`` (top
probability), ``mass_outside`` (probability mass the model put outside the option letters),
``method`` (``score`` or ``top_logprobs``), ``n_missing`` (letters absent from the top-k),
``status`` and ``reason``. These records are the input format of ``confeval sets score``
(``--logit-cols 'logprob_*' --input logprobs``).
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import index_in
from ..backends import Backend
from ..evaluate import evaluate_confidence
from ..records import RecordsError, RecordSet
from ..tasks import load_builtin
from .base import LiveSuite, register_suite
from .multiple_choice import build_messages, option_distribution

__all__ = ["SetsSuite", "load_mc_items"]

LETTERS = string.ascii_uppercase


def load_mc_items(data: str, n: int | None = None, seed: int = 0) -> list[dict]:
    """Multiple-choice items from ``builtin:arith-mc`` or a file (see module docstring)."""
    if data.startswith("builtin:"):
        return load_builtin(data.split(":", 1)[1], n or 200, seed)
    rs = RecordSet.read(Path(data))
    frame = rs.frame
    for col in ("question", "answer"):
        if col not in frame.columns:
            raise RecordsError(f"{data}: column {col!r} not found; multiple-choice data needs "
                               "question, answer and options (a list) or columns A, B, ...")
    letter_cols = [c for c in LETTERS if c in frame.columns]
    if "options" not in frame.columns and not letter_cols:
        raise RecordsError(f"{data}: no options: give an 'options' list or columns A, B, ...")
    items = []
    for row in frame.to_dict(orient="records"):
        if "options" in frame.columns:
            opts = row["options"]
            if isinstance(opts, str):
                opts = json.loads(opts)
        else:
            opts = [row[c] for c in letter_cols if isinstance(row[c], str) and row[c].strip()]
        item = {k2: v for k2, v in row.items() if k2 not in letter_cols and k2 != "_row"}
        item["options"] = [str(o) for o in opts]
        item["item_id"] = str(row.get("item_id", f"row-{row['_row']}"))
        items.append(item)
    return items[:n] if n else items


class SetsSuite(LiveSuite):
    name = "sets"
    default_data = "builtin:arith-mc"

    def needs(self, backend: Backend, options: Mapping[str, Any]) -> list[str]:
        method = options.get("method", "auto")
        if method == "score" or (method == "auto" and "score" in backend.capabilities):
            return ["score"]
        return ["generate", "logprobs"]

    def load_items(self, data: str, n: int | None, seed: int) -> list[dict]:
        return load_mc_items(data, n, seed)

    async def run_item(self, item: dict, backend: Backend,
                       options: Mapping[str, Any]) -> dict:
        messages, letters = build_messages(item["question"], item["options"],
                                           idk=options.get("idk", False),
                                           nota=options.get("nota", False))
        dist = await option_distribution(backend, messages, letters,
                                         method=options.get("method", "auto"),
                                         top_k=options.get("top_k", 20))
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

    def score(self, records: list[dict], options: Mapping[str, Any]) -> dict:
        ok = [r for r in records if r.get("status") == "ok"]
        excluded = {}
        if len(ok) < len(records):
            excluded["unparseable"] = len(records) - len(ok)
        section: dict[str, Any] = {
            "kind": "confidence", "title": "Multiple choice: top-option probability",
            "description": "Confidence = probability of the chosen option letter, "
                           "renormalised over the options; correct = it is the gold letter.",
            "name_header": "model", "results": {}}
        name = options.get("model_name", "model")
        if len(ok) >= 2:
            res = evaluate_confidence([r["confidence"] for r in ok], [r["correct"] for r in ok],
                                      n_resamples=options.get("bootstrap", 1000),
                                      seed=options.get("seed", 0))
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
    def _sets_section(ok: list[dict], name: str, options: Mapping[str, Any]) -> dict:
        """Conformal sets from the recorded option log-probabilities (exact protocol)."""
        from .sets_scoring import score_sets

        frame = pd.DataFrame(ok)
        letters = list(LETTERS[:int(frame["n_options"].max())])
        logp = frame.reindex(columns=[f"logprob_{L}" for L in letters]).to_numpy(np.float64)
        probs = np.exp(np.nan_to_num(logp, nan=-np.inf))
        probs /= probs.sum(axis=1, keepdims=True)
        labels = index_in(np.array(letters), frame["answer"].astype(str).str.strip().to_numpy())
        with np.errstate(all="ignore"):
            result = score_sets(probs, labels, alpha=options.get("alpha", 0.1),
                                split_seed=options.get("seed", 0) + 42)
        result.update(n_used=len(ok), excluded={})
        return {"kind": "sets", "title": "Multiple choice: conformal prediction sets",
                "description": "Split conformal (50/50 calibration/test) on the recorded "
                               "option probabilities; exact finite-sample quantile.",
                "name_header": "model", "results": {name: result}}


register_suite(SetsSuite())

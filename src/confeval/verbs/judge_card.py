"""``confeval judge card``: one page that says what a judge can be trusted for, each aspect
with the number behind it and its interval — computed by the commands that own each number,
never again here:

* **ranking**: Spearman's rho and Kendall's tau-b of the judge's scores with the human scores
  (the ``agreement`` suite's scoring on the labelled rows: its points and its Spearman
  interval; Kendall's interval from the same seeded percentile bootstrap over items, the same
  resamples);
* **scoring**: the coverage and width of one conformal interval method (``--interval-method``,
  default ``ordinal_aps``) over ``--interval-seeds`` 50/50 calibration/test splits (the
  ``intervals`` suite's scoring, ``confeval intervals score``);
* **accept**: the certified threshold on the judge's confidence and its answer rate
  (``confeval guarantee --suite agreement``: accept a score within ``--tolerance`` of the
  human's, the confidence the judge's probability of a score that close to its own; LTT at
  ``--target`` and ``--delta``, every labelled row calibrating);
* **mean**: the corrected mean (``confeval judge mean``: PPI++ where some rows have no human
  score, or ``--labels N`` human scores kept of a fully labelled file, seeded, to show what
  PPI++ would give with so few; the humans' own (classical) mean otherwise, with a note);
* **reruns**, **position**, **length**: ``confeval judge reruns`` of ``--reruns`` files,
  ``judge position`` of a ``--pairs`` file and ``judge length`` of FILE with ``--answer-col``
  or ``--length-col``, read as those commands read them — else "not measured", with why.

Each aspect is ``{"measured": true, ...its numbers...}`` or ``{"measured": false, "why":
...}``; the verdicts (:func:`confeval.report.verdicts.card_lines`) are computed from these
numbers by the report, the terminal and ``--json`` alike. The result, ``{"cards": {NAME:
CARD}}`` under ``--json``::

    {"source", "judge_col", "human_col", "scale", "items": {"n_read", "n_judged",
     "n_labelled", "excluded"}, "aspects": {"ranking" | "scoring" | "accept" | "mean" |
     "reruns" | "position" | "length": {...}}, "verdicts": {ASPECT: SENTENCE}}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..suites._seeds import format_seeds, parse_seed_tuple
from ..suites.options import MAX_BOOTSTRAP, Options, build, option, to_json

__all__ = ["ASPECTS", "COMMAND", "JudgeCardOptions", "judge_card_file", "judge_card_metrics",
           "judge_card_run_config", "judge_card_section", "judge_cards", "rerun_judge_card"]

COMMAND = "judge card"
"""The command's name in a run folder's ``run.json`` (``confeval rerun`` repeats it)."""

ASPECTS = ("ranking", "scoring", "accept", "mean", "reruns", "position", "length")
"""The card's aspects, in the order it shows them."""

_SCORE = ("score",)


def _seeds(text: Any) -> tuple[int, ...]:
    seeds = parse_seed_tuple(text) if isinstance(text, str) else tuple(text)
    if not seeds:
        raise ValueError("--interval-seeds names no seed")
    return seeds


@dataclasses.dataclass(frozen=True)
class JudgeCardOptions(Options):
    """Options of ``confeval judge card``."""

    judge_col: str = option(dataclasses.MISSING, "Column with the judge's score of every "
                            "item.", stages=_SCORE)
    human_col: str = option(dataclasses.MISSING, "Column with the human score; an empty cell "
                            "marks an item no human scored.", stages=_SCORE)
    logprob_cols: str | None = option(None, "The judge's log-probabilities of each score, "
                                      "lowest first (comma list or glob, e.g. 's2_lp*'): "
                                      "needed for the intervals and for accept/abstain.",
                                      stages=_SCORE)
    min_score: int = option(1, "Lowest score of the scale; scores off it are excluded and "
                            "counted.", stages=_SCORE)
    max_score: int = option(5, "Highest score of the scale.", stages=_SCORE)
    alpha: float = option(0.1, "Miscoverage of the corrected mean's interval and of the "
                          "conformal intervals (level 1 - alpha).", stages=_SCORE)
    bootstrap: int = option(1000, "Bootstrap resamples of the 95% intervals of Spearman and "
                            "Kendall (and of the rerun, position and length tests).",
                            stages=_SCORE, minimum=0, maximum=MAX_BOOTSTRAP)
    seed: int = option(0, "Seed of every bootstrap and of --labels' draw.", stages=_SCORE)
    labels: int | None = option(None, "Keep the human scores of this many random labelled "
                                "items (seeded) for the corrected mean and hide the others: "
                                "what PPI++ would give with so few labels, beside the mean of "
                                "them all.", stages=_SCORE, minimum=2)
    interval_method: str = option("ordinal_aps", "The conformal interval method of the "
                                  "scoring aspect (the intervals suite's: ordinal_aps, naive, "
                                  "lvd, cqr, ...).", stages=_SCORE)
    interval_seeds: tuple[int, ...] = option(tuple(range(1, 11)), "The intervals' 50/50 "
                                             "calibration/test splits, e.g. 1-10.",
                                             stages=_SCORE, parse=_seeds, show=format_seeds)
    tolerance: float = option(1.0, "Accept/abstain: a score within this distance of the "
                              "human's counts as right.", stages=_SCORE, minimum=0)
    target: float = option(0.2, "Accept/abstain: the share of accepted scores more than "
                           "--tolerance from the human's that is promised, in (0, 1).",
                           stages=_SCORE)
    delta: float = option(0.1, "Accept/abstain: the probability the promise may fail.",
                          stages=_SCORE)
    starts: int = option(1, "Accept/abstain: Learn then Test walks from this many starting "
                         "thresholds, each at delta / starts (choose before looking).",
                         stages=_SCORE, minimum=1)
    reruns: tuple[str, ...] = option((), "The judge's reruns on the same items, read as "
                                     "`judge reruns` reads them: a file (with "
                                     "--rerun-score-cols, or --rerun-col), or one file per "
                                     "rerun (repeat); several judges: one file each, in "
                                     "their order.", stages=_SCORE, multiple=True)
    rerun_score_cols: str | None = option(None, "--reruns: one column per rerun (comma list "
                                          "or glob).", stages=_SCORE)
    rerun_score_col: str | None = option(None, "--reruns: the score column (with "
                                         "--rerun-col, or in each of one file per rerun).",
                                         stages=_SCORE)
    rerun_col: str | None = option(None, "--reruns: the column numbering the reruns.",
                                   stages=_SCORE)
    rerun_id_col: str | None = option(None, "--reruns: the column naming each item.",
                                      stages=_SCORE)
    pairs: tuple[str, ...] = option((), "A pairwise file of the judge, read as `judge "
                                    "position` reads it (its verdict with each answer shown "
                                    "first); several judges: one file each, in their order.",
                                    stages=_SCORE, multiple=True)
    ab_col: str = option("verdict_ab", "--pairs: the verdict with answer A shown first.",
                         stages=_SCORE)
    ba_col: str = option("verdict_ba", "--pairs: the verdict with answer B shown first.",
                         stages=_SCORE)
    answer_col: str | None = option(None, "Length bias: FILE's column with the judged "
                                    "answer's text (its length is counted).", stages=_SCORE)
    length_col: str | None = option(None, "Length bias: FILE's column with the answer's "
                                    "length as a number.", stages=_SCORE)
    length_unit: str = option("words", "words | chars: how --answer-col is counted.",
                              stages=_SCORE)

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..conformal.names import INTERVAL_METHOD_NAMES

        object.__setattr__(self, "interval_seeds", _seeds(self.interval_seeds))
        object.__setattr__(self, "reruns", tuple(self.reruns))
        object.__setattr__(self, "pairs", tuple(self.pairs))
        for name in ("alpha", "target", "delta"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise ValueError(f"--{name} must be in (0, 1), got {value:g}")
        if not self.min_score < self.max_score:
            raise ValueError(f"--max-score {self.max_score} must be above --min-score "
                             f"{self.min_score}")
        if self.judge_col == self.human_col:
            raise ValueError(f"--judge-col and --human-col are both {self.judge_col!r}: name "
                             "two columns")
        if self.interval_method not in INTERVAL_METHOD_NAMES:
            raise ValueError(f"--interval-method {self.interval_method!r}: one of "
                             f"{', '.join(INTERVAL_METHOD_NAMES)}")
        if self.answer_col and self.length_col:
            raise ValueError("length bias: --answer-col (a text) or --length-col (a number), "
                             "not both")
        if self.length_unit not in ("words", "chars"):
            raise ValueError(f"--length-unit must be words or chars, got {self.length_unit!r}")


# ------------------------------------------------------------------ the aspects
def _not_measured(why: str) -> dict:
    return {"measured": False, "why": why}


def _measured(fn: Callable[[], dict]) -> dict:
    """``fn()``'s numbers, or "not measured" with the reason the data cannot give them (a
    :class:`ValueError` of the command that computes them: one labelled item, no usable
    row, ...)."""
    try:
        return {"measured": True, **fn()}
    except ValueError as exc:
        return _not_measured(str(exc))


def _used(rs, column: str) -> np.ndarray:
    """The numbers of ``column`` on the rows ``rs`` still uses (after a suite's reader)."""
    import pandas as pd

    return pd.to_numeric(rs.frame.loc[rs.mask, column], errors="coerce").to_numpy(np.float64)


def _ranking(path: Path, options: JudgeCardOptions) -> dict:
    """The agreement suite's scoring of the labelled rows; Kendall's interval by the same
    bootstrap as its Spearman interval (same seed: the same resamples)."""
    from ..metrics import bootstrap_ci, kendall
    from ..suites import SUITES
    from .score import load

    suite = SUITES["agreement"]
    opts = build(suite.Options, {"pred_col": options.judge_col, "gt_col": options.human_col,
                                 "min_score": options.min_score,
                                 "max_score": options.max_score,
                                 "bootstrap": options.bootstrap, "seed": options.seed},
                 what="the agreement suite")
    rs = load(suite, path, opts)
    res = suite.score(rs, opts)
    pred, truth = _used(rs, options.judge_col), _used(rs, options.human_col)
    if pred.size != res["n"]:   # the suite's reader and its scoring saw the same rows
        raise RuntimeError(f"{path}: {pred.size} rows read for {res['n']} scored")
    ci = res.get("ci") or {}
    out = {"n": res["n"], "excluded": res["excluded"],
           "spearman": {"estimate": res["spearman"], **_bounds(ci.get("spearman"))},
           "kendall": {"estimate": res["kendall"], "low": None, "high": None},
           "interval": None if not options.bootstrap else
           f"95% percentile bootstrap over items, {options.bootstrap:,} resamples, seed "
           f"{options.seed} (the same resamples for both)",
           "pearson": res["pearson"], "mae": res["mae"], "bias": res["bias"],
           "within1": res["within1"], "accuracy": res["accuracy"]}
    if options.bootstrap:
        got = bootstrap_ci(kendall, pred, truth, n_resamples=options.bootstrap,
                           seed=options.seed)
        out["kendall"].update(low=got.low, high=got.high)
    return out


def _bounds(ci: Mapping[str, Any] | None) -> dict:
    return {"low": (ci or {}).get("low"), "high": (ci or {}).get("high")}


def _scoring(path: Path, options: JudgeCardOptions) -> dict:
    """The intervals suite's scoring with one method over the seeds."""
    from ..suites import SUITES
    from .score import load

    if not options.logprob_cols:
        raise ValueError("the intervals need the judge's score-token log-probabilities: "
                         "--logprob-cols")
    suite = SUITES["intervals"]
    opts = build(suite.Options, {"logprob_cols": options.logprob_cols,
                                 "label_col": options.human_col,
                                 "pred_col": options.judge_col,
                                 "min_score": options.min_score,
                                 "max_score": options.max_score,
                                 "methods": (options.interval_method,),
                                 "seeds": options.interval_seeds, "alpha": options.alpha},
                 what="the intervals suite")
    res = suite.score(load(suite, path, opts), opts)
    method = res["methods"][options.interval_method]
    span = float(options.max_score - options.min_score)
    bands = (method.get("diagnostics") or {}).get("informativeness_adj") or {}
    uninformative = (bands.get("uninformative") or {}).get("share")
    return {"method": options.interval_method, "alpha": res["alpha"],
            "target": 1 - res["alpha"], "seeds": res["seeds"],
            "cal_fraction": res["cal_fraction"], "n": res["n"],
            "n_test": round(res["n"] * (1 - res["cal_fraction"])),
            "excluded": res["excluded"], "coverage": method["coverage_raw"],
            "width": method["width_raw"], "coverage_adj": method["coverage_adj"],
            "width_adj": method["width_adj"], "scale_range": span,
            "width_share": method["width_raw"]["mean"] / span,
            "uninformative_share": None if uninformative is None else uninformative["mean"]}


def _accept(path: Path, options: JudgeCardOptions) -> dict:
    """``confeval guarantee --suite agreement`` on every labelled row."""
    from .guarantee import GuaranteeOptions, certify_input

    if not options.logprob_cols:
        raise ValueError("the judge's confidence is its probability of a score within "
                         "--tolerance of its own: --logprob-cols")
    guarantee = GuaranteeOptions(target=options.target, delta=options.delta,
                                 starts=options.starts, suite="agreement")
    res = certify_input(path, guarantee, {
        "pred_col": options.judge_col, "gt_col": options.human_col,
        "logprob_cols": options.logprob_cols, "min_score": options.min_score,
        "max_score": options.max_score, "tolerance": options.tolerance}).result
    answered = (res.get("calibration") or {}).get("answered") if res["threshold"] is not None \
        else 0
    return {"tolerance": options.tolerance, "target": res["target"], "delta": res["delta"],
            "method": res["method"], "fwer": res["fwer"], "starts": res["starts"],
            "threshold": res["threshold"], "bound": res["bound"],
            "best_achievable_bound": res["best_achievable_bound"],
            "n_calibration": res["n_calibration"], "answered": answered,
            "answer_rate": answered / res["n_calibration"] if res["n_calibration"] else None,
            "excluded": res.get("excluded") or {}, "guarantee": res["guarantee"]}


def _mean(path: Path, options: JudgeCardOptions) -> dict:
    """``confeval judge mean`` (with ``--keep-labels`` for ``--labels``), or, every judged
    item labelled, the humans' own mean."""
    from ..judge import classical_mean
    from ..records import RecordSet
    from .judge import JudgeMeanOptions, judge_mean_records, read_judge_and_human

    mean_options = JudgeMeanOptions(judge_col=options.judge_col, human_col=options.human_col,
                                    alpha=options.alpha, min_score=float(options.min_score),
                                    max_score=float(options.max_score),
                                    keep_labels=options.labels, seed=options.seed)
    rs = RecordSet.read(path)
    judge, human = read_judge_and_human(rs, mean_options)
    labelled = ~np.isnan(human)
    if options.labels is None and labelled.all() and labelled.size >= 2:
        c = classical_mean(human, options.alpha).to_dict()
        return {"method": "classical", **{k: c[k] for k in ("estimate", "low", "high",
                                                            "width", "lambda", "level")},
                "judge_mean": float(judge.mean()), "n_labelled": int(labelled.size),
                "n_unlabelled": 0, "excluded": rs.excluded, "classical": c,
                "note": "every judged item has a human score: the humans' own mean is the "
                        "answer, and the judge adds nothing to it (--labels N: what N labels "
                        "and PPI++ would give)"}
    res = judge_mean_records(RecordSet.read(path), mean_options)
    best = res["methods"]["ppi++"]
    out = {"method": "ppi++", **{k: best[k] for k in ("estimate", "low", "high", "width",
                                                      "lambda", "level")},
           "judge_mean": res["judge_mean"], "n_labelled": res["n_labelled"],
           "n_unlabelled": res["n_unlabelled"], "excluded": res["excluded"],
           "classical": res["methods"]["classical"], "ppi": res["methods"]["ppi"]}
    if best.get("note"):
        out["note"] = best["note"]
    if "kept_labels" in res:
        out["labels_drawn"] = res["kept_labels"]
    return out


def _reruns(paths: Sequence[str], options: JudgeCardOptions) -> dict:
    from .judge_tests import JudgeRerunsOptions, judge_reruns_records

    rerun_options = JudgeRerunsOptions(
        score_cols=options.rerun_score_cols, score_col=options.rerun_score_col,
        rerun_col=options.rerun_col, id_col=options.rerun_id_col,
        min_score=float(options.min_score), max_score=float(options.max_score),
        bootstrap=options.bootstrap, seed=options.seed)
    res = judge_reruns_records(list(paths), rerun_options)
    res.pop("items", None)   # the per-item table: `confeval judge reruns` shows it
    return {"measured": True, "files": list(paths), **res}


def _position(path: str, options: JudgeCardOptions) -> dict:
    from ..records import RecordSet
    from .judge_tests import JudgePositionOptions, judge_position_records

    position_options = JudgePositionOptions(ab_col=options.ab_col, ba_col=options.ba_col,
                                            bootstrap=options.bootstrap, seed=options.seed)
    return {"measured": True, "file": str(path),
            **judge_position_records(RecordSet.read(path), position_options)}


def _length(path: Path, options: JudgeCardOptions) -> dict:
    """``confeval judge length`` of FILE's rows with a judge and a human score on the scale."""
    import pandas as pd

    from ..records import RecordSet
    from .judge_tests import JudgeLengthOptions, judge_length_records

    length_options = JudgeLengthOptions(
        judge_col=options.judge_col, human_col=options.human_col,
        answer_col=options.answer_col, length_col=options.length_col,
        length_unit=options.length_unit, bootstrap=options.bootstrap, seed=options.seed)
    rs = RecordSet.read(path)
    for column, what in ((options.judge_col, "judge"), (options.human_col, "human")):
        values = pd.to_numeric(rs.frame[rs.columns([column])[0]], errors="coerce")
        with np.errstate(invalid="ignore"):
            off = ((values < options.min_score) | (values > options.max_score)).to_numpy()
        rs.exclude(off, f"{what}_score_off_scale")
    return judge_length_records(rs, length_options)


def _items(path: Path, options: JudgeCardOptions) -> dict:
    """The rows with a judge score on the scale, and how many of them a human scored (as
    ``judge mean`` reads them)."""
    from ..records import RecordSet
    from .judge import JudgeMeanOptions, read_judge_and_human

    rs = RecordSet.read(path)
    for column in (options.judge_col, options.human_col):
        rs.columns([column], what="column")   # a column not there: one error naming it
    _, human = read_judge_and_human(rs, JudgeMeanOptions(
        judge_col=options.judge_col, human_col=options.human_col,
        min_score=float(options.min_score), max_score=float(options.max_score)))
    return {"n_read": len(rs.frame), "n_judged": int(human.size),
            "n_labelled": int((~np.isnan(human)).sum()), "excluded": rs.excluded}


_ADVICE = {"reruns": "give the judge's reruns on the same items: --reruns FILE",
           "position": "give a pairwise file with both orders: --pairs FILE",
           "length": "give the answers' text or length: --answer-col or --length-col"}


def judge_card_file(path: str | Path, options: JudgeCardOptions, *,
                    reruns: Sequence[str] = (), pairs: str | None = None) -> dict:
    """The card of the judge whose scores ``path`` holds (the module docstring's ``CARD``);
    ``reruns``: its rerun files, ``pairs``: its pairwise file (else not measured)."""
    from ..report.verdicts import card_verdicts

    path = Path(path)
    items = _items(path, options)
    aspects = {
        "ranking": _measured(lambda: _ranking(path, options)),
        "scoring": _measured(lambda: _scoring(path, options)),
        "accept": _measured(lambda: _accept(path, options)),
        "mean": _measured(lambda: _mean(path, options)),
        # what the user gave is read as its own command reads it: a bad file is an error
        "reruns": _reruns(reruns, options) if reruns else _not_measured(_ADVICE["reruns"]),
        "position": _position(pairs, options) if pairs else
        _not_measured(_ADVICE["position"]),
        "length": {"measured": True, **_length(path, options)}
        if options.answer_col or options.length_col else _not_measured(_ADVICE["length"])}
    card = {"source": str(path), "judge_col": options.judge_col,
            "human_col": options.human_col, "scale": [options.min_score, options.max_score],
            "items": items, "aspects": aspects}
    card["verdicts"] = card_verdicts(card)
    return card


def _per_judge(given: Sequence[str], n: int, flag: str) -> list[list[str]]:
    """The files of ``flag`` for each of ``n`` judges: all of them for one judge, else one
    each, in the judges' order."""
    if not given:
        return [[] for _ in range(n)]
    if n == 1:
        return [list(given)]
    if len(given) != n:
        raise ValueError(f"{flag}: {len(given)} file(s) for {n} judges; give one per judge, "
                         "in the judges' order (one judge's reruns as one file per rerun: "
                         "one card at a time)")
    return [[g] for g in given]


def judge_cards(inputs: Sequence[tuple[str, str | Path]], options: JudgeCardOptions
                ) -> dict[str, dict]:
    """Every judge's card (``inputs``: (name, path) pairs), by name."""
    reruns = _per_judge(options.reruns, len(inputs), "--reruns")
    pairs = _per_judge(options.pairs, len(inputs), "--pairs")
    if len(inputs) == 1 and len(pairs[0]) > 1:
        raise ValueError(f"--pairs: {len(pairs[0])} files for one judge; give one")
    return {name: judge_card_file(path, options, reruns=r, pairs=p[0] if p else None)
            for (name, path), r, p in zip(inputs, reruns, pairs)}


# ------------------------------------------------------------------ folders
def judge_card_section(results: Mapping[str, dict]) -> dict:
    """The report section of the cards (by judge name)."""
    return {"kind": "judge_card", "title": "Judge trust card: what this judge can be trusted "
                                           "for", "name_header": "judge",
            "results": dict(results)}


def judge_card_metrics(results: Mapping[str, dict]) -> dict:
    """The ``metrics.json`` of a ``judge card`` folder."""
    return {"title": f"confeval {COMMAND}", "simulated": False,
            "sections": [judge_card_section(results)]}


def judge_card_run_config(inputs: Sequence[tuple[str, str | Path]],
                          options: JudgeCardOptions) -> dict:
    """The ``run.json`` config: the working directory, every judge's file (name, path,
    SHA-256), the rerun and pairwise files' SHA-256 and every option — what ``confeval
    rerun`` needs to repeat it."""
    import os

    from ..runs import file_sha256

    return {"command": COMMAND, "cwd": os.getcwd(),
            "inputs": [{"name": name, "path": str(path), "sha256": file_sha256(path)}
                       for name, path in inputs],
            "option_files": {str(p): file_sha256(p) for p in (*options.reruns,
                                                              *options.pairs)},
            "options": to_json(options)}


def rerun_judge_card(config: Mapping[str, Any]) -> dict:
    """The metrics of a ``judge card`` folder computed again from its ``run.json`` (every
    file checked to be the one it was)."""
    from .score import check_unchanged

    options = build(JudgeCardOptions, config.get("options") or {},
                    what=f"confeval {COMMAND}")
    for path, sha in (config.get("option_files") or {}).items():
        check_unchanged(config, path, sha)
    inputs = [(e["name"], check_unchanged(config, e["path"], e.get("sha256")))
              for e in config.get("inputs") or []]
    return judge_card_metrics(judge_cards(inputs, options))

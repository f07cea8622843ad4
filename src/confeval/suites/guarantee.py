"""``confeval guarantee``: a certified threshold on one input's confidence — answer when the
confidence is at least t, with the selective error at most ``--target`` with probability at
least ``1 - --delta`` (``--method ltt``, :func:`confeval.guarantee.ltt_threshold`; ``sgr``,
:func:`~confeval.guarantee.sgr_threshold`), or the expected joint error (answered and wrong)
at most ``--target`` (``crc``, :func:`~confeval.guarantee.crc_threshold`).

Each suite's natural decision (``--suite``, default: a run folder's suite, else ``score``):
answer on a confidence column (``score``), answer the top option (``sets``), accept a judge's
score within ``--tolerance`` of the human's (``agreement``/``intervals``, confidence
:func:`judge_confidence`), accept a step verdict (``steps``), accept a diagnosed error type
(``diagnose``). The input is read as that suite's scoring reads it (confeval's own columns, or
another tool's file through :mod:`confeval.ingest`). The whole input calibrates, unless
``--split-seed`` asks for a 50/50 calibration/test split (``train_test_split``, as the
conformal suites split), in which case the threshold's risk and answer rate on the test half
are reported too.
``--seeds 1-100`` repeats the split over those seeds and reports how often the test half's
risk exceeds the target. That share estimates more than the guarantee's failure rate: a
threshold whose true risk is just under the target still shows a test-half risk above it on
about half of the splits (the test half is a sample too), so a share above ``delta`` is not by
itself a broken promise; the per-split values let one see by how much.

:func:`policy` is what ``--out`` writes as ``policy.json`` (the threshold, what it applies to,
the promise in words); :func:`apply_policy` marks new records answer / abstain by it — they
need the confidence only, not the correctness.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .options import IngestOptions, option

__all__ = ["DECISIONS", "GUARANTEE_METHODS", "GuaranteeOptions", "guarantee_file"]

_SCORE = ("score",)
GUARANTEE_METHODS = ("ltt", "crc", "sgr")
"""Learn then Test, conformal risk control, selection with guaranteed risk."""
DECISIONS = ("score", "sets", "measures", "agreement", "intervals", "steps", "diagnose")
"""Suites whose natural decision ``confeval guarantee`` certifies (``agreement`` and
``intervals`` name the same one: accept the judge's score)."""
JUDGE = ("agreement", "intervals")
RISKS = ("error", "accuracy", "loss")
"""What ``--target`` bounds among the answered items: the error, the accuracy (its complement,
as a floor) or a user-defined 0/1 loss column."""
POLICY_VERSION = 1


@dataclasses.dataclass(frozen=True)
class GuaranteeOptions(IngestOptions):
    """Options of ``confeval guarantee``."""

    target: float = option(dataclasses.MISSING, "The selective error promised (errors among "
                           "the answered items), in (0, 1).", stages=_SCORE)
    confidence_col: str | None = option(None, "Column with the confidence (higher = more "
                                        "confident; any scale).", stages=_SCORE, short="-c")
    correct_col: str | None = option(None, "Column with correctness (0/1 or [0, 1]).",
                                     stages=_SCORE, short="-y")
    risk: str = option("error", "What --target bounds among the answered: error (the share "
                       "wrong; judges: more than --tolerance from the human), accuracy "
                       "(--target is the share right promised, e.g. 0.9: the error at most 1 "
                       "minus it) or loss (score suite: -y names a 0/1 column where 1 marks a "
                       "bad answer, e.g. unsafe or unfaithful: its share).", stages=_SCORE)
    delta: float = option(0.1, "The probability the promise may fail (over the calibration "
                          "draw).", stages=_SCORE)
    method: str = option("ltt", "ltt (Learn then Test: selective error, high probability), "
                         "sgr (Geifman & El-Yaniv: the same promise, a binary search) or crc "
                         "(conformal risk control: the expected share answered and wrong).",
                         stages=_SCORE)
    fwer: str = option("fixed-sequence", "fixed-sequence, bonferroni or holm.", stages=_SCORE)
    starts: int = option(1, "ltt fixed-sequence: walk from this many starting thresholds, each "
                         "at delta / starts (more help when the most confident items are not "
                         "the most reliable; choose before looking).", stages=_SCORE,
                         minimum=1)
    batch: str | None = option(None, "ltt: promise the selective error of a new batch of this "
                               "many items (or 'test': the test half, as --seeds checks it) "
                               "instead of the population's: with probability 1 - delta over "
                               "calibration and batch. Fewer answers; no batch can break it "
                               "more often than delta.", stages=_SCORE)
    split_seed: int | None = option(None, "Split 50/50 into calibration and test with this "
                                    "seed (default: all items calibrate).", stages=_SCORE)
    seeds: str | None = option(None, "Also repeat the 50/50 split over these seeds (e.g. "
                               "1-100): the share of splits whose test-half risk exceeds the "
                               "target, and the mean answer rate.", stages=_SCORE)
    suite: str | None = option(None, "Whose decision (default: a run folder's suite, else "
                               "score): score (a confidence and a correctness "
                        "column), sets (answer the top option: its probability and whether "
                        "it is the gold one, from option logits as sets score reads them), "
                        "measures (answer the option the measure -c, default sl, ranks first "
                        "in each question; right when -y, default correct, is 1) or "
                        "agreement / intervals (accept a judge's score: correct when within "
                        "--tolerance of the human's; confidence the judge's probability of a "
                        "score that close to its own), steps (accept a step verdict: "
                        "confidence max(p, 1 - p) of -c, default p_correct, against the -y "
                        "label) or diagnose (accept the diagnosed error type: -c, default "
                        "confidence; -p pred_type against -g gold_type).", stages=_SCORE)
    tolerance: float = option(1.0, "Judges: a score within this distance of the human's "
                              "counts as right (0: exact).", stages=_SCORE)
    pred_col: str | None = option(None, "Judges: column with the judge's score.",
                                  stages=_SCORE, short="-p")
    gt_col: str | None = option(None, "Judges: column with the human's score.",
                                stages=_SCORE, short="-g")
    logprob_cols: str | None = option(None, "Judges: score-token log-probability columns, "
                                      "lowest score first (e.g. 's2_lp*').", stages=_SCORE)
    prob_cols: str | None = option(None, "Judges: score probability columns instead.",
                                   stages=_SCORE)
    min_score: int = option(1, "Judges: lowest score of the scale.", stages=_SCORE)
    max_score: int | None = option(None, "Judges: highest score (default: one per "
                                   "probability column).", stages=_SCORE)

    def __post_init__(self) -> None:
        from ..guarantee import FWER_METHODS

        if not 0 < self.target < 1:
            raise ValueError(f"--target must be in (0, 1), got {self.target}")
        if not 0 < self.delta < 1:
            raise ValueError(f"--delta must be in (0, 1), got {self.delta}")
        if self.method not in GUARANTEE_METHODS:
            raise ValueError(f"--method {self.method!r}: so far {', '.join(GUARANTEE_METHODS)}")
        if self.fwer not in FWER_METHODS:
            raise ValueError(f"--fwer {self.fwer!r}: choose from {', '.join(FWER_METHODS)}")
        if self.risk not in RISKS:
            raise ValueError(f"--risk {self.risk!r}: choose from {', '.join(RISKS)}")
        if self.risk == "loss" and self.suite not in (None, "score"):
            raise ValueError(f"--risk loss reads a 0/1 column of the records (score suite); "
                             f"the {self.suite} suite's decision has its own error")
        if self.suite is not None and self.suite not in DECISIONS:
            raise ValueError(f"--suite {self.suite!r}: so far {', '.join(DECISIONS)}")
        if not self.tolerance >= 0:
            raise ValueError(f"--tolerance must be >= 0, got {self.tolerance}")
        from ._seeds import parse_seeds

        parse_seeds(self.seeds)
        if self.batch is not None:
            if self.method != "ltt":
                raise ValueError(f"--batch promises a batch's error with --method ltt; "
                                 f"{self.method} promises the population's")
            if self.batch == "test":
                if self.split_seed is None and not self.seeds:
                    raise ValueError("--batch test is the test half's size: it needs "
                                     "--split-seed or --seeds")
            elif not self.batch.isdigit() or int(self.batch) < 1:
                raise ValueError(f"--batch must be a number of items or 'test', got "
                                 f"{self.batch!r}")

    def batch_size(self, n_test: int) -> int | None:
        """The batch promised on (None: the population), given the test half's size."""
        if self.batch is None:
            return None
        return n_test if self.batch == "test" else int(self.batch)


def certify(conf: np.ndarray, correct: np.ndarray, options: GuaranteeOptions,
            groups: np.ndarray | None = None, batch: int | None = None) -> dict:
    """The method's certified threshold on (conf, correct), as a dict; with ``groups`` (the
    cluster of each item) clusters are the independent draws (LTT only); with ``batch`` the
    promise is on a new batch of that many items (LTT only)."""
    from ..guarantee import crc_threshold, ltt_threshold, sgr_threshold

    if groups is not None and options.method != "ltt":
        raise ValueError(f"--method {options.method} treats every item as an independent "
                         "draw, and the steps of one chain are not: --method ltt tests the "
                         "chains as the draws")
    if options.method == "crc":
        return crc_threshold(conf, correct, target=options.target).to_dict()
    if options.method == "sgr":
        return sgr_threshold(conf, correct, target=options.target,
                             delta=options.delta).to_dict()
    return {**ltt_threshold(conf, correct, target=options.target, delta=options.delta,
                            fwer=options.fwer, starts=options.starts, groups=groups,
                            batch=batch).to_dict(),
            "risk_controlled": "selective"}


def test_risk(conf: np.ndarray, correct: np.ndarray, threshold: float | None,
              risk_kind: str) -> dict:
    """The threshold on held-out items: answer rate and the risk the method controls
    (selective: errors among the answered, None when none is; joint: answered and wrong among
    all). No threshold answers nothing."""
    answered = conf >= threshold if threshold is not None else np.zeros(conf.size, bool)
    wrong = 1.0 - correct
    if risk_kind == "joint":
        risk = float((wrong * answered).mean())
    else:
        risk = float(wrong[answered].mean()) if answered.any() else None
    return {"n": int(conf.size), "coverage": float(answered.mean()), "risk": risk}


def _split(n: int, seed: int, groups: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """50/50 calibration and test indices; with groups, whole clusters go to one side."""
    if groups is None:
        from sklearn.model_selection import train_test_split

        return train_test_split(np.arange(n), train_size=0.5, random_state=seed)
    from sklearn.model_selection import GroupShuffleSplit

    cal, test = next(GroupShuffleSplit(n_splits=1, train_size=0.5, random_state=seed)
                     .split(np.zeros(n), groups=groups))
    return cal, test


def _at(groups: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if groups is None else groups[rows]


def guarantee_file(path: str | Path, options: GuaranteeOptions) -> dict:
    """The certified threshold of one input, in the command's JSON contract:
    ``{"threshold", "answer_if", "bound", "method", "fwer", "target", "delta",
    "n_calibration", "calibration", "test", "best_achievable_bound", "guarantee", ...}``, and
    ``"splits"`` under ``--seeds``."""
    options = resolve_suite(path, options)
    if options.risk == "loss" and options.suite != "score":
        raise ValueError(f"{path}: --risk loss reads a 0/1 column of the records; a "
                         f"{options.suite} run folder's decision has its own error")
    stated = options.target
    if options.risk == "accuracy":   # an accuracy floor is an error ceiling: certify that
        options = dataclasses.replace(options, target=1.0 - options.target)
    rs, conf, correct, groups = _decisions(path, options)
    if options.risk == "loss":       # -y marks the bad answers: correctness is its complement
        if not np.isin(correct, (0.0, 1.0)).all():
            raise ValueError(f"{path}: --risk loss needs a 0/1 column (1: a bad answer) in "
                             f"-y {options.correct_col or 'correct'}")
        correct = 1.0 - correct
    cal = test = np.arange(conf.size)
    if options.split_seed is not None:
        cal, test = _split(conf.size, options.split_seed, groups)
    # --batch test without a split: the size a 50/50 test half has (as under --seeds)
    res = certify(conf[cal], correct[cal], options, _at(groups, cal), options.batch_size(
        test.size if options.split_seed is not None else conf.size - conf.size // 2))
    out = {**res, "method": options.method,
           "fwer": options.fwer if options.method == "ltt" else None,
           "starts": options.starts if options.method == "ltt" else None,
           "target": options.target, "delta": None if options.method == "crc" else options.delta,
           "n_calibration": int(cal.size), "test": None,
           **({"n_clusters": int(np.unique(groups[cal]).size)} if groups is not None else {}),
           **{k: v for k, v in rs.summary().items() if k in ("n_read", "n_used", "excluded")}}
    if options.split_seed is not None:
        out["split_seed"] = options.split_seed
        if res["threshold"] is not None:
            out["test"] = test_risk(conf[test], correct[test], res["threshold"],
                                    res["risk_controlled"])
    models = rs.frame.loc[rs.mask, "model"].dropna().unique() \
        if "model" in rs.frame.columns else []
    if len(models) == 1:
        out["model"] = str(models[0])
    out["curve"] = certified_curve(conf[cal], correct[cal], options, res["risk_controlled"],
                                   groups=_at(groups, cal), batch=res.get("batch"))
    if options.seeds:
        out["splits"] = over_splits(conf, correct, options, groups)
    out["risk_measure"] = options.risk
    if options.risk == "accuracy":
        out["accuracy_target"] = stated
    out["decision"] = _decision(options)
    out["guarantee"] = _sentence(out)
    return out


_RUN_DEFAULTS = {"intervals": {"pred_col": "parsed_score", "gt_col": "gt_score",
                               "logprob_cols": "score_lp*"}}
"""The columns a suite's live run writes, where the decision needs them named."""


def resolve_suite(path: str | Path, options: GuaranteeOptions) -> GuaranteeOptions:
    """``options`` with the suite decided: as given, else the suite of a run folder's
    ``run.json`` (with the columns its records hold), else ``score``."""
    if options.suite is not None:
        return options
    from ..runs import RunFolder

    folder = Path(path)
    if not (folder.is_dir() and (folder / RunFolder.RUN).is_file()):
        return dataclasses.replace(options, suite="score")
    config = RunFolder(folder, create=False).read_run().get("config") or {}
    suite = config.get("suite") or str(config.get("command", "")).split(" ")[0]
    if suite not in DECISIONS:
        raise ValueError(f"{path}: a {suite or 'foreign'} run folder has no natural decision "
                         f"to certify; name one with --suite ({', '.join(DECISIONS)}) and "
                         "its columns")
    defaults = {k: v for k, v in _RUN_DEFAULTS.get(suite, {}).items()
                if getattr(options, k) is None}
    return dataclasses.replace(options, suite=suite, **defaults)


def _decision(options: GuaranteeOptions) -> dict:
    """What is answered and what counts as an error, in words (for the sentence)."""
    if options.suite in JUDGE:
        return {"act": "Accept the judge's score", "item": "accepted scores",
                "error": f"more than {options.tolerance:g} from the human's"}
    if options.suite == "measures":
        return {"act": f"Answer the option {options.confidence_col or 'sl'} ranks first",
                "item": "answered questions", "error": "wrong"}
    if options.suite == "steps":
        return {"act": "Accept the step verdict", "item": "accepted verdicts", "error": "wrong"}
    if options.suite == "diagnose":
        return {"act": "Accept the diagnosed error type", "item": "accepted diagnoses",
                "error": "wrong"}
    act = "Answer the top option" if options.suite == "sets" else "Answer"
    if options.risk == "loss":
        return {"act": act, "item": "answered items",
                "error": f"marked bad ({options.correct_col or 'correct'} = 1)"}
    return {"act": act, "item": "answered items", "error": "wrong"}


def certified_curve(conf: np.ndarray, correct: np.ndarray, options: GuaranteeOptions,
                    risk_kind: str, points: int = 200, groups: np.ndarray | None = None,
                    batch: int | None = None) -> dict:
    """The calibration set's risk-coverage curve for the report: at up to ``points`` distinct
    confidences (evenly in rank), the answer rate, the risk the method controls, and that
    threshold's own upper bound (each threshold alone, no correction for having looked at
    all of them: the method's certified threshold is where its corrected test passes) —
    Hoeffding–Bentkus at delta for ltt, the batch bound for ltt with a ``batch``
    (:func:`confeval.guarantee.batch.batch_bound`, to 1e-5), the exact binomial bound at delta
    for sgr, the conformal bound (n L + 1) / (n + 1) for crc."""
    from ..guarantee import binomial_upper, selective_risk, upper_bound

    distinct = np.unique(conf)[::-1]
    if distinct.size > points:
        distinct = distinct[np.unique(np.round(np.linspace(0, distinct.size - 1, points)
                                               ).astype(int))]
    risk, answered = selective_risk(conf, correct, distinct)
    errors = np.nan_to_num(risk) * answered
    if groups is not None:
        from ..guarantee.clustered import cluster_counts, clustered_bound

        bound = clustered_bound(*cluster_counts(conf, 1.0 - correct, groups, distinct),
                                options.delta)
    elif risk_kind == "joint":
        n = conf.size
        risk = errors / n
        bound = (n * risk + 1) / (n + 1)
    elif batch is not None:
        from ..guarantee.batch import batch_bound, box, split_delta

        d_cal, d_batch = split_delta(options.delta)
        bound = batch_bound(*box(np.round(errors), answered, conf.size, d_cal), batch,
                            d_batch, tol=1e-5)
    elif options.method == "sgr":
        bound = binomial_upper(np.round(errors), answered, options.delta)
    else:
        binary = bool(np.isin(correct, (0.0, 1.0)).all())
        bound = upper_bound(errors, answered, options.delta, binary=binary)
    return {"threshold": distinct.tolist(), "coverage": (answered / conf.size).tolist(),
            "risk": [None if not np.isfinite(r) else float(r) for r in risk],
            "bound": np.asarray(bound, dtype=np.float64).tolist()}


def over_splits(conf: np.ndarray, correct: np.ndarray, options: GuaranteeOptions,
                groups: np.ndarray | None = None) -> dict:
    """The method repeated over ``--seeds`` 50/50 splits: per split the threshold and the
    test half's risk and answer rate; the share of splits whose test risk exceeds the target
    (a split certifying nothing answers nothing and exceeds nothing), with its binomial
    standard error."""
    from ._seeds import parse_seeds

    seeds = parse_seeds(options.seeds) or []
    per_split = []
    for seed in seeds:
        cal, test = _split(conf.size, seed, groups)
        res = certify(conf[cal], correct[cal], options, _at(groups, cal),
                      options.batch_size(test.size))
        held = test_risk(conf[test], correct[test], res["threshold"], res["risk_controlled"])
        per_split.append({"seed": seed, "threshold": res["threshold"],
                          "risk": held["risk"], "coverage": held["coverage"]})
    exceeded = [s["risk"] is not None and s["risk"] > options.target for s in per_split]
    share = float(np.mean(exceeded))
    certified = [s for s in per_split if s["threshold"] is not None]
    return {"n_splits": len(seeds), "n_certified": len(certified),
            "share_exceeding_target": share,
            "share_se": float(np.sqrt(share * (1 - share) / len(seeds))),
            "mean_coverage": float(np.mean([s["coverage"] for s in per_split])),
            "mean_risk": (float(np.mean([s["risk"] for s in per_split
                                         if s["risk"] is not None]))
                          if any(s["risk"] is not None for s in per_split) else None),
            "per_split": per_split}


def _decisions(path: str | Path, options: GuaranteeOptions):
    """(records, confidence, correctness, the cluster of each item or None) of the suite's
    natural decision on one input."""
    if options.suite in JUDGE:
        judge = _read_judge(path, options, with_truth=True)
        conf = judge_confidence(judge.probs, judge.pred, judge.scale, options.tolerance)
        correct = (np.abs(judge.pred - judge.truth) <= options.tolerance).astype(np.float64)
        return judge.records, conf, correct, None
    if options.suite == "steps":
        return _step_decisions(path, options)
    if options.suite == "diagnose":
        return _diagnosis_decisions(path, options)
    if options.suite == "measures":
        return _measure_decisions(path, options)
    if options.suite == "sets":
        from ..ingest import read_input
        from .sets.inputs import read_sets_records

        rs = read_input(path, "sets", options)
        data = read_sets_records(rs)
        conf = data.probs.max(axis=1).astype(np.float64)
        correct = (data.probs.argmax(axis=1) == data.labels).astype(np.float64)
        return rs, conf, correct, None
    from ..evaluate import read_confidence_records
    from .generic import ConfidenceOptions, read_confidence_input

    read_as = ConfidenceOptions(confidence_col=options.confidence_col,
                                correct_col=options.correct_col,
                                from_format=options.from_format, normalise=options.normalise,
                                data_file=options.data_file)
    rs, conf_col, correct_col = read_confidence_input(path, read_as)
    conf, correct = read_confidence_records(rs, conf_col, correct_col, any_confidence=True)
    return rs, conf, correct, None


def _measure_decisions(path: str | Path, options: GuaranteeOptions):
    """MCQA-Eval's decision: per question, answer the option the measure ``-c`` (a measures
    record column, default ``sl``; higher = more confident) ranks first, with that value as
    the confidence; right when it is the gold option (``-y``, default ``correct``). Rows are
    read as ``measures score`` reads them (its exclusions counted). Tied first places go to
    the first of the tied rows, in the file's order (as ``numpy.argmax``)."""
    from ..ingest import read_input
    from .measures.inputs import read_measure_records
    from .measures.scoring import measure_rows

    rs = read_input(path, "measures", options, load=measure_rows)
    data = read_measure_records(rs, measure_cols=options.confidence_col or "sl",
                                correct_col=options.correct_col or "correct")
    value = data.values[:, 0]
    first = _first_ranked(value, data.questions)
    return rs, value[first], data.correct[first], None


def _first_ranked(value: np.ndarray, questions: np.ndarray) -> np.ndarray:
    """The row index of each question's highest value (ties: the first row in file order)."""
    # each question's rows together, the most confident first; stable: ties keep file order
    group = np.unique(questions, return_inverse=True)[1]
    order = np.lexsort((-value, group))
    return order[np.r_[True, group[order][1:] != group[order][:-1]]]


def _step_decisions(path: str | Path, options: GuaranteeOptions):
    """Accept a step verdict (correct if ``p_correct >= 0.5``): confidence ``max(p, 1 - p)``,
    right when the verdict is the step's label (ConfProBench's step confidence,
    :func:`confeval.metrics.steps.step_confidence`). Original chains only: perturbed variants
    probe robustness and would count a step several times (excluded as ``perturbed_variant``).
    The steps of one chain are not independent: the chain (``item_id``) is the cluster, so
    splits keep a chain on one side and LTT tests chains (:mod:`confeval.guarantee.clustered`)."""
    from ..metrics.steps import step_confidence
    from ..records import RecordSet
    from .steps.inputs import ORIGINAL, step_frame

    rs = RecordSet.read(Path(path))
    frame = step_frame(rs, p_col=options.confidence_col or "p_correct",
                       label_col=options.correct_col or "label")
    perturbed = np.zeros(len(rs.frame), bool)
    perturbed[rs.frame.index.get_indexer(frame.index[frame["variant"] != ORIGINAL])] = True
    rs.exclude(perturbed, "perturbed_variant")
    frame = frame[frame["variant"] == ORIGINAL]
    verdict, conf = step_confidence(frame["p_correct"].to_numpy())
    return (rs, conf, (verdict == frame["label"].to_numpy()).astype(np.float64),
            frame["item_id"].to_numpy())


def _diagnosis_decisions(path: str | Path, options: GuaranteeOptions):
    """Accept the diagnosed error type: the confidence column (a live run's ``confidence``,
    the model's probability of the type it named), right when the type is the gold one. An
    unparseable diagnosis has no confidence and is excluded as such."""
    from ..records import RecordSet
    from .diagnose.inputs import read_diagnosis_records

    rs = RecordSet.read(Path(path))
    conf = rs.numeric([options.confidence_col or "confidence"], what="confidence")[:, 0]
    read = read_diagnosis_records(rs, gold_col=options.gt_col or "gold_type",
                                  pred_col=options.pred_col or "pred_type")
    unparsed = np.zeros(len(rs.frame), bool)
    unparsed[np.flatnonzero(rs.mask)[read.pred == None]] = True  # noqa: E711
    rs.exclude(unparsed, "unparseable_diagnosis")
    parsed = read.pred != None  # noqa: E711
    return (rs, conf[rs.mask], (read.pred[parsed] == read.gold[parsed]).astype(np.float64),
            None)


def judge_confidence(probs: np.ndarray, pred: np.ndarray, scale: np.ndarray,
                     tolerance: float) -> np.ndarray:
    """The judge's own probability that the right score lies within ``tolerance`` of the score
    it gave: the mass of its (renormalised) score distribution on ``|s - pred| <= tolerance``.
    The confidence that matches the decision: a judge sure of 4 but torn between 3, 4 and 5
    is confident at tolerance 1 and not at 0."""
    near = np.abs(scale[None, :] - pred[:, None]) <= tolerance + 1e-9   # scores are integers
    return (probs * near).sum(axis=1)


def _read_judge(path: str | Path, options: GuaranteeOptions, *, with_truth: bool):
    from .generic import AgreementOptions, read_judge_scores

    read_as = AgreementOptions(pred_col=options.pred_col, gt_col=options.gt_col,
                               logprob_cols=options.logprob_cols, prob_cols=options.prob_cols,
                               min_score=options.min_score, max_score=options.max_score,
                               from_format=options.from_format, data_file=options.data_file,
                               bootstrap=0)
    judge = read_judge_scores(path, read_as, with_truth=with_truth)
    if judge.probs is None:
        raise ValueError(f"{path}: a judge's confidence needs its score probabilities: "
                         "--logprob-cols or --prob-cols")
    return judge


def _sentence(result: dict) -> str:
    """The guarantee in words (or why there is none)."""
    joint = result.get("risk_controlled") == "joint"
    d = result.get("decision") or {"act": "Answer", "item": "answered items", "error": "wrong"}
    if result["threshold"] is None:
        n = f"n = {result['n_calibration']}" + (
            f" ({result['n_clusters']} chains)" if result.get("n_clusters") else "")
        at = n if joint else f"{n} and delta = {result['delta']:g}" + (
            f", on a batch of {result['batch']}" if result.get("batch") else "")
        what = "expected share of all items answered and " + d["error"] if joint else \
            f"share of {d['item']} {d['error']}"
        return (f"No threshold is certified: at {at}, the best {what} this data can certify "
                f"is {result['best_achievable_bound']:.3f} (target {result['target']:g}).")
    answered = (f"{result['calibration']['answered']} of {result['n_calibration']} "
                "calibration items answered" + (f", {result['n_clusters']} chains"
                                                if result.get("n_clusters") else ""))
    if joint:
        return (f"{d['act']} when the confidence is at least {result['threshold']:.6g}: on "
                f"average over calibration draws, at most {result['target']:g} of new items "
                f"are answered and {d['error']} (conformal bound {result['bound']:.4f}; "
                f"{answered}).")
    if result.get("risk_measure") == "accuracy":
        share = (f"at least {result['accuracy_target']:g} of {d['item']} are right (error "
                 f"bound {result['bound']:.4f}")
    else:
        share = (f"at most {result['target']:g} of {d['item']} are {d['error']} (certified "
                 f"bound {result['bound']:.4f}")
    if result.get("batch"):
        return (f"{d['act']} when the confidence is at least {result['threshold']:.6g}: with "
                f"probability at least {1 - result['delta']:g} over the calibration draw and "
                f"a new batch of {result['batch']} items, "
                + share.replace(f"of {d['item']}", f"of the batch's {d['item']}", 1)
                .replace("(certified bound", "(batch bound", 1) + f"; {answered}).")
    return (f"{d['act']} when the confidence is at least {result['threshold']:.6g}: with "
            f"probability at least {1 - result['delta']:g} over the calibration draw, {share}; "
            f"{answered}).")


def policy(result: dict, path: str | Path, options: GuaranteeOptions) -> dict:
    """``policy.json``: the threshold and what it applies to (suite, confidence column, model,
    the calibration file's SHA-256), the promise (risk, target, delta, method) and the
    sentence — what a service loads to answer or abstain (:func:`apply_policy`)."""
    import hashlib

    from .. import __version__
    from .._validation import record_file

    options = resolve_suite(path, options)
    data = record_file(path)   # a run folder's records
    digest = hashlib.sha256()
    with data.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    applies_to = _applies_to(options)
    return {"policy_version": POLICY_VERSION, "threshold": result["threshold"],
            "answer_if": "confidence >= threshold", "applies_to": {
                **applies_to, "model": result.get("model"), "from_format": options.from_format,
                "normalise": options.normalise},
            "risk": result["risk_controlled"], "target": result["target"],
            "delta": result["delta"], "method": result["method"], "fwer": result["fwer"],
            "starts": result["starts"], "batch": result.get("batch"),
            "risk_measure": result.get("risk_measure", "error"),
            "bound": result["bound"], "n_calibration": result["n_calibration"],
            "split_seed": result.get("split_seed"),
            "calibration_data": {"file": str(Path(path).name if data == Path(path) else
                                             Path(Path(path).name) / data.name),
                                 "sha256": digest.hexdigest()},
            "guarantee": result["guarantee"], "confeval_version": __version__}


def _applies_to(options: GuaranteeOptions) -> dict:
    """Which confidence the threshold is on, with what is needed to compute it again."""
    if options.suite == "sets":
        return {"suite": "sets", "confidence": "top option probability (float32 softmax of "
                "the logit_* columns)"}
    if options.suite in JUDGE:
        return {"suite": options.suite, "confidence": "the judge's probability of a score "
                f"within {options.tolerance:g} of its own", "tolerance": options.tolerance,
                "pred_col": options.pred_col, "logprob_cols": options.logprob_cols,
                "prob_cols": options.prob_cols, "min_score": options.min_score,
                "max_score": options.max_score}
    if options.suite == "measures":
        column = options.confidence_col or "sl"
        return {"suite": "measures", "confidence": f"{column} of the option it ranks first "
                "in each question", "measure_col": column}
    if options.suite == "steps":
        return {"suite": "steps", "confidence": "max(p, 1 - p) of the step's probability of "
                "being correct", "p_col": options.confidence_col or "p_correct"}
    return {"suite": options.suite, "confidence": options.confidence_col or "confidence"}


def read_policy(path: str | Path) -> dict:
    """A ``policy.json``, checked: a :class:`ValueError` naming the file when it is no
    policy."""
    import json

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a policy file (no JSON: {exc})") from None
    if not (isinstance(doc, dict) and doc.get("policy_version") == POLICY_VERSION
            and isinstance(doc.get("applies_to"), dict)
            and doc["applies_to"].get("suite") in DECISIONS):
        raise ValueError(f"{path}: not a confeval policy (written by `confeval guarantee "
                         "--out`)")
    t = doc.get("threshold")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))):
        raise ValueError(f"{path}: the threshold {t!r} is no number")
    return doc


def apply_policy(policy_path: str | Path, records: str | Path):
    """(the records with a ``decision`` column — ``answer``, ``abstain``, or ``excluded``
    where the confidence cannot be read, with its reason in ``excluded_reason`` — and the
    counts). Only the confidence is read; a policy certifying nothing abstains on all."""
    from ..ingest import read_input
    from ..records import ROW_COLUMN

    doc = read_policy(policy_path)
    target = doc["applies_to"]
    options = GuaranteeOptions(target=0.5, from_format=target.get("from_format") or "auto",
                               normalise=target.get("normalise") or "none",
                               suite=target["suite"])
    if target["suite"] in JUDGE:
        rs, conf = _judge_confidence_of(records, target, options)
    elif target["suite"] == "sets":
        rs = read_input(records, "sets", options)
        conf = _top_probability(rs)
    elif target["suite"] == "measures":
        rs, conf = _first_ranked_options(records, target["measure_col"], options)
    elif target["suite"] == "steps":
        rs = _own_records(records)
        p = rs.numeric([target.get("p_col") or "p_correct"], what="p_correct", lo=0.0,
                       hi=1.0)[:, 0]
        conf = np.maximum(p, 1.0 - p)
    else:
        rs = read_input(records, "score", options) if target["suite"] == "score" else \
            _own_records(records)
        column = target["confidence"]
        conf = rs.numeric([column], what="confidence")[:, 0]
    threshold = doc["threshold"]
    answer = np.zeros(len(rs.frame), bool) if threshold is None else \
        rs.mask & (np.nan_to_num(conf, nan=-np.inf) >= threshold)
    frame = rs.frame.drop(columns=[ROW_COLUMN]).copy()
    frame["confidence_used"] = np.where(rs.mask, conf, np.nan)
    decision = np.where(answer, "answer", "abstain")
    if target["suite"] == "measures":   # one option per question is decided on
        decision = np.where(np.isnan(conf), "not_chosen", decision)
    frame["decision"] = np.where(~rs.mask, "excluded", decision)
    frame["excluded_reason"] = rs.row_reasons()
    counts = {"n_read": rs.n_read, "answer": int(answer.sum()),
              "abstain": int((rs.mask & ~answer & ~np.isnan(conf)).sum()),
              "excluded": rs.excluded,
              "threshold": threshold}
    return frame, counts


def _first_ranked_options(records: str | Path, column: str, options: GuaranteeOptions):
    """(option rows, the measure of each question's first-ranked option on its row, NaN on the
    others and on excluded rows) for new measures records: the measure only, no gold."""
    from ..ingest import read_input
    from .measures.scoring import measure_rows

    rs = read_input(records, "measures", options, load=measure_rows)
    value = rs.numeric([column], what="measure", allow_inf=True)[:, 0]
    questions = rs.groups("question_id", what="question")
    conf = np.full(len(rs.frame), np.nan)
    usable = np.flatnonzero(rs.mask)
    if usable.size:
        first = usable[_first_ranked(value[usable], questions[usable])]
        conf[first] = value[first]
    return rs, conf


def _own_records(path: str | Path):
    from ..records import RecordSet

    return RecordSet.read(Path(path))


def _judge_confidence_of(records: str | Path, target: dict, options: GuaranteeOptions):
    """(records, the judge confidence of each row, NaN where excluded) for new items: the
    judge's scores and probabilities only, no human score."""
    keys = ("tolerance", "pred_col", "logprob_cols", "prob_cols", "min_score", "max_score")
    options = dataclasses.replace(options, **{k: target[k] for k in keys if k in target})
    judge = _read_judge(records, options, with_truth=False)
    conf = np.full(len(judge.records.frame), np.nan)
    conf[judge.records.mask] = judge_confidence(judge.probs, judge.pred, judge.scale,
                                                options.tolerance)
    return judge.records, conf


def _top_probability(rs) -> np.ndarray:
    """The top option's probability of each row (NaN where excluded), exactly as the sets
    decision computes it at calibration (float32 softmax of the ``logit_*`` columns), without
    needing the answer."""
    from ..conformal import to_probabilities

    cols = rs.columns("logit_*", what="option column")
    values = rs.numeric(cols, what="option_value", allow_missing=True, allow_inf=True)
    rs.exclude(np.isposinf(values).any(axis=1) & rs.mask, "non_finite_option_value")
    values = np.where(rs.mask[:, None], values, np.nan)
    rs.exclude((np.isfinite(values).sum(axis=1) < 2) & rs.mask, "fewer_than_2_options")
    conf = np.full(len(rs.frame), np.nan)
    keep = rs.mask
    if keep.any():
        probs = to_probabilities(values[keep], "logits", np.dtype("float32"))
        conf[keep] = probs.max(axis=1).astype(np.float64)
    return conf

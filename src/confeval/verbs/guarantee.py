"""``confeval guarantee``: a certified threshold on one input's confidence — answer when the
confidence is at least t, with the selective error at most ``--target`` with probability at
least ``1 - --delta`` (``--method ltt``, :func:`confeval.guarantee.ltt_threshold`; ``sgr``,
:func:`~confeval.guarantee.sgr_threshold`), or the expected joint error (answered and wrong)
at most ``--target`` (``crc``, :func:`~confeval.guarantee.crc_threshold`) — written once
against the suite object.

What is answered and what the confidence is belong to the suite: its
:class:`~confeval.suites.base.Decision` (answer on a confidence column for ``score``, the top
option for ``sets``, accept a judge's score within ``--tolerance`` of the human's for
``agreement``/``intervals``, a step verdict for ``steps``, a diagnosed error type for
``diagnose``, the option a measure ranks first for ``measures``). Which suite: ``--suite``,
else the suite whose run folder the input is, else ``score``. The input is read by the suite's
one loader with the suite's own options (a run folder's from its ``run.json``, overridden only
by those given), exactly as ``confeval SUITE score`` reads it. The whole input calibrates,
unless ``--split-seed`` asks for a 50/50 calibration/test split (``train_test_split``, as the
conformal suites split), in which case the threshold's risk and answer rate on the test half
are reported too. ``--seeds 1-100`` repeats the split over those seeds and reports how often
the test half's risk exceeds the target. That share estimates more than the guarantee's failure
rate: a threshold whose true risk is just under the target still shows a test-half risk above
it on about half of the splits (the test half is a sample too), so a share above ``delta`` is
not by itself a broken promise; the per-split values let one see by how much.

:func:`policy` is what ``--out`` writes as ``policy.json`` (the threshold, what it applies to
— the suite, its options and the decision's choice —, the promise in words, a summary of the
calibration confidences for the validity checks, and a digest of all of it); :func:`read_policy`
checks one in full; :mod:`confeval.verbs.apply` applies it to new records and checks that its
promise still applies.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..suites import SUITES
from ..suites.base import Suite
from ..suites.options import Options, build, option, options_and_choice, to_json
from ._sealed import check_summary, digest, field_error, load_document
from .score import load

__all__ = ["GUARANTEE_METHODS", "POLICY_VERSION", "RISKS", "Certified", "GuaranteeOptions",
           "certifiable", "certify", "certify_input", "guarantee_file",
           "guarantee_inputs", "guarantee_metrics", "guarantee_run_config", "policy",
           "policy_files", "policy_options", "ranked_finite", "read_policy", "rerun_guarantee",
           "sentence", "test_risk", "validity_summary"]

_SCORE = ("score",)

MAX_BATCH = 10_000
"""The largest --batch: the batch bound sums over the batch's answered counts, O(target m) a
threshold and bisection step (5 s at m = 1,000, 45 s at 10,000 on a 2-core machine,
2026-11-27); 30,000 took over 100 s."""
GUARANTEE_METHODS = ("ltt", "crc", "sgr")
"""Learn then Test, conformal risk control, selection with guaranteed risk."""
RISKS = ("error", "accuracy", "loss")
"""What ``--target`` bounds among the answered items: the error, the accuracy (its complement,
as a floor) or a user-defined 0/1 loss column."""
POLICY_VERSION = 2


def certifiable() -> dict[str, Suite]:
    """The suites whose decision ``confeval guarantee`` certifies, by name."""
    return {name: suite for name, suite in SUITES.items() if suite.certifies}


@dataclasses.dataclass(frozen=True)
class GuaranteeOptions(Options):
    """Options of ``confeval guarantee`` itself; the suite's options and its decision's are
    given beside them."""

    target: float = option(dataclasses.MISSING, "The selective error promised (errors among "
                           "the answered items), in (0, 1).", stages=_SCORE)
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
                               "score): score (a confidence and a correctness column), sets "
                               "(answer the top option), measures (answer the option the "
                               "measure -c, default sl, ranks first in each question), "
                               "agreement / intervals (accept a judge's score within "
                               "--tolerance of the human's; confidence the judge's probability "
                               "of a score that close to its own), steps (accept a step "
                               "verdict: confidence max(p, 1 - p)) or diagnose (accept the "
                               "diagnosed error type: -c, default confidence). The suite's own "
                               "options say where its records hold what.", stages=_SCORE)

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..guarantee import FWER_METHODS
        from ..suites._seeds import parse_seeds

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
        if self.suite is not None and self.suite not in certifiable():
            raise ValueError(f"--suite {self.suite!r}: so far {', '.join(certifiable())}")
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
            elif int(self.batch) > MAX_BATCH:
                raise ValueError(f"--batch {self.batch}: at most {MAX_BATCH:,} items (the "
                                 "batch bound's cost grows with the batch: ~45 s at 10,000 "
                                 "on two cores)")

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




def resolve_suite(path: str | Path, options: GuaranteeOptions) -> Suite:
    """The suite whose decision is certified: as given, else the suite whose run folder
    ``path`` is, else ``score``."""
    from .compare import folder_suite

    name = options.suite or folder_suite(path) or "score"
    if name not in certifiable():
        raise ValueError(f"{path}: a {name} run folder has no natural decision to certify; "
                         f"name one with --suite ({', '.join(certifiable())}) and its columns")
    return SUITES[name]


def decision_options(suite: Suite, path: str | Path | None, values: Mapping[str, Any],
                     explicit: frozenset[str] | set[str] = frozenset()) -> tuple[Any, Any]:
    """(the suite's options, the decision's choice) from the values given beside the
    guarantee's own: the suite's options as ``confeval SUITE score`` takes them (a run
    folder's own, overridden only by ``explicit``), the rest the decision's; a value that is
    neither is one error naming its flag."""
    return options_and_choice(suite.Options, suite.choice, path, values, explicit,
                              suite=suite.name, whose=f"the {suite.name} suite's decision")


@dataclasses.dataclass
class Certified:
    """One input certified: the result (the command's JSON contract), the suite, its options
    and the decision's choice (what ``policy.json`` records to decide on new records)."""

    result: dict
    suite: Suite
    options: Any
    choice: Any
    calibration_confidence: np.ndarray | None = None
    """The confidences the threshold was certified on (what the policy's validity summary
    keeps)."""


def guarantee_file(path: str | Path, options: GuaranteeOptions,
                   values: Mapping[str, Any] | None = None,
                   explicit: frozenset[str] | set[str] = frozenset()) -> dict:
    """The certified threshold of one input, in the command's JSON contract:
    ``{"threshold", "answer_if", "bound", "method", "fwer", "target", "delta",
    "n_calibration", "calibration", "test", "best_achievable_bound", "guarantee", ...}``, and
    ``"splits"`` under ``--seeds``. ``values``: the suite's and the decision's options given
    (``explicit``: those set on the command line, over a run folder's own)."""
    return certify_input(path, options, values or {}, explicit).result


def certify_input(path: str | Path, options: GuaranteeOptions, values: Mapping[str, Any],
                  explicit: frozenset[str] | set[str] = frozenset()) -> Certified:
    """:func:`guarantee_file`, keeping the suite, its options and the decision's choice."""
    suite = resolve_suite(path, options)
    decision = suite.decision()
    if options.risk == "loss" and decision.loss is None:
        raise ValueError(f"{path}: --risk loss reads a 0/1 column of the records; the "
                         f"{suite.name} suite's decision has its own error")
    suite_options, choice = decision_options(suite, path, values, explicit)
    stated = options.target
    if options.risk == "accuracy":   # an accuracy floor is an error ceiling: certify that
        options = dataclasses.replace(options, target=1.0 - options.target)
    decided = decision.calibrate(load(suite, path, suite_options), suite_options, choice)
    rs, conf, correct, groups = decided.records, decided.confidence, decided.correct, \
        decided.clusters
    words = dict(decision.words(suite_options, choice))
    if options.risk == "loss":       # the column marks the bad answers: correctness flipped
        column = decision.loss(suite_options, choice)
        if not np.isin(correct, (0.0, 1.0)).all():
            raise ValueError(f"{path}: --risk loss needs a 0/1 column (1: a bad answer) in "
                             f"{column}")
        correct = 1.0 - correct
        words["error"] = f"marked bad ({column} = 1)"
    cal = test = np.arange(conf.size)
    if options.split_seed is not None:
        cal, test = _split(conf.size, options.split_seed, groups)
    # --batch test without a split: the size a 50/50 test half has (as under --seeds)
    res = certify(conf[cal], correct[cal], options, _at(groups, cal), options.batch_size(
        test.size if options.split_seed is not None else conf.size - conf.size // 2))
    out = {**res, "suite": suite.name, "method": options.method,
           "fwer": options.fwer if options.method == "ltt" else None,
           "starts": options.starts if options.method == "ltt" else None,
           "target": options.target, "delta": None if options.method == "crc" else options.delta,
           "n_calibration": int(cal.size), "test": None,
           **({"n_clusters": int(np.unique(groups[cal]).size)} if groups is not None else {}),
           **{k: v for k, v in rs.summary().items()
              if k in ("n_read", "n_used", "excluded", "warnings")}}
    if conf[cal].size:
        out["confidence_range"] = [float(np.min(conf[cal])), float(np.max(conf[cal]))]
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
    out["decision"] = words
    out["guarantee"] = sentence(out)
    return Certified(out, suite, suite_options, choice, conf[cal])


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
    from ..suites._seeds import parse_seeds

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




def _why_none(result: dict, what: str, best: float) -> str:
    """Why the method certified nothing, in its own terms: the thresholds it tested first
    (whatever the outcome: where it looked before stopping) and the lowest bound it reached
    there, at the level it tested them — so that ltt and sgr, which test differently, each
    state what they did rather than what "the data" can certify."""
    where = result.get("best_achievable")
    target = f"above the target {result['target']:g}"
    kind = "batch bound" if result.get("batch") else "bound"
    if not where:
        return f"the lowest {kind} on the {what} the method reached is {_small(best)}, {target}"
    spot = f"the threshold {where['threshold']:.6g} ({where['answered']:,} answered)"
    first = int(where.get("n_tested_first") or 1)
    tested = int(result.get("n_tested") or first)
    level = "" if result.get("batch") else None   # a batch's levels split delta in two
    if result["method"] == "sgr":
        how = (f"none of the {first} thresholds the binary search of SGR tests (each at "
               f"delta/{first}) passes")
    elif result.get("fwer") == "holm":
        return (f"the first test of Holm, of the smallest p-value among {tested} thresholds"
                + (level if level is not None else f" at delta/{tested}") + f", fails: "
                f"{spot}, whose {kind} on the {what} is {_small(best)}, {target}")
    elif result.get("fwer") == "bonferroni":
        how = (f"none of the {tested} thresholds Learn then Test tests"
               + (level if level is not None else f" (each at delta/{tested})") + " passes")
        if first < tested:   # the batch test's bounds, sought on thresholds evenly in rank
            return (f"{how}; the lowest {kind} on the {what} among {first} of them (evenly "
                    f"in rank) is {_small(best)}, at {spot}, {target}")
    elif first == 1:
        return (f"the fixed sequence of Learn then Test stops at its first threshold, "
                f"{where['threshold']:.6g} ({where['answered']:,} answered), "
                f"whose {kind} on the {what} is {_small(best)}, {target}")
    else:
        how = (f"each of the {first} walks of Learn then Test"
               + (level if level is not None else f" (at delta/{first})")
               + " stops at its first threshold")
    return (f"{how}; the lowest {kind} on the {what} among them is {_small(best)}, at {spot}, "
            f"{target}")


def _small(value: float) -> str:
    """A bound with three decimals, or two significant digits below 0.01 (never "0.000")."""
    return f"{value:.3f}" if value >= 0.01 else f"{value:.2g}"


def sentence(result: dict) -> str:
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
        best = result.get("best_achievable_bound")
        if best is None:
            return (f"No threshold is certified: at {at}, no threshold answers enough items "
                    f"to be tested at target {result['target']:g}.")
        if joint:
            return (f"No threshold is certified: at {at}, the lowest conformal bound on the "
                    f"{what} is {_small(best)}, above the target {result['target']:g}.")
        return f"No threshold is certified: at {at}, " + _why_none(result, what, best) + "."
    answered = (f"{result['calibration']['answered']:,} of {result['n_calibration']:,} "
                "calibration items answered" + (f", {result['n_clusters']:,} chains"
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




def guarantee_inputs(paths: list[str | Path], options: GuaranteeOptions,
                     values: Mapping[str, Any],
                     explicit: frozenset[str] | set[str] = frozenset()) -> list[Certified]:
    """Every input certified (:func:`certify_input`), in order."""
    return [certify_input(path, options, values, explicit) for path in paths]


def guarantee_metrics(paths: list[str | Path], certified: list[Certified]) -> dict:
    """The ``metrics.json`` of a guarantee folder: one section, each input's result."""
    return {"title": "confeval guarantee", "simulated": False, "sections": [
        {"kind": "guarantee", "title": "Certified threshold",
         "results": {str(p): c.result for p, c in zip(paths, certified)}}]}


def guarantee_run_config(paths: list[str | Path], options: GuaranteeOptions,
                         given: Mapping[str, Any]) -> dict:
    """The ``run.json`` config of a guarantee folder: the working directory, every input with
    its SHA-256, the guarantee's options and the suite options given on the command line —
    what ``confeval rerun`` needs to repeat it."""
    import os

    from ..runs import file_sha256

    return {"command": "guarantee", "cwd": os.getcwd(),
            "inputs": [{"path": str(p), "sha256": file_sha256(p)} for p in paths],
            "guarantee_options": to_json(options), "given": dict(given)}


def policy_files(certified: list[Certified], paths: list[str | Path]) -> dict[str, dict]:
    """The policy files of a guarantee folder: ``policy.json`` for one input, else
    ``policy-<k>.json`` per input."""
    if len(paths) == 1:
        return {"policy.json": policy(certified[0], paths[0])}
    return {f"policy-{k}.json": policy(c, p)
            for k, (p, c) in enumerate(zip(paths, certified), start=1)}


def rerun_guarantee(config: Mapping[str, Any]) -> dict:
    """The metrics of a guarantee folder computed again from its ``run.json``."""
    from .score import check_unchanged

    if "guarantee_options" not in config:
        raise ValueError("this guarantee folder was written before confeval recorded how to "
                         "repeat a guarantee (no guarantee_options in run.json); run the "
                         "guarantee again")
    paths = [check_unchanged(config, e["path"], e.get("sha256"))
             for e in config.get("inputs") or []]
    options = build(GuaranteeOptions, config["guarantee_options"], what="confeval guarantee")
    given = dict(config.get("given") or {})
    certified = guarantee_inputs(paths, options, given, frozenset(given))
    return guarantee_metrics([e["path"] for e in config["inputs"]], certified)


def policy(certified: Certified, path: str | Path) -> dict:
    """``policy.json``: the threshold and what it applies to (the suite, its options and the
    decision's choice, the model, the calibration file's SHA-256), the promise (risk, target,
    delta, method) and the sentence, and a digest of all of it — what a service loads to
    answer or abstain (:func:`confeval.verbs.apply.apply_policy`)."""
    from .. import __version__
    from .._validation import record_file
    from ..runs import file_sha256

    result, suite = certified.result, certified.suite
    data = record_file(path)   # a run folder's records
    doc = {"policy_version": POLICY_VERSION, "threshold": result["threshold"],
           "answer_if": "confidence >= threshold", "applies_to": {
               "suite": suite.name,
               **suite.decision().applies_to(certified.options, certified.choice),
               "model": result.get("model"), "options": to_json(certified.options),
               "choice": to_json(certified.choice)},
           "risk": result["risk_controlled"], "target": result["target"],
           "delta": result["delta"], "method": result["method"], "fwer": result["fwer"],
           "starts": result["starts"], "batch": result.get("batch"),
           "risk_measure": result.get("risk_measure", "error"),
           "bound": result["bound"], "n_calibration": result["n_calibration"],
           "confidence_range": result.get("confidence_range"),
           "split_seed": result.get("split_seed"),
           "calibration_data": {"file": str(Path(path).name if data == Path(path) else
                                             Path(Path(path).name) / data.name),
                                "sha256": file_sha256(data)},
           "guarantee": result["guarantee"], "confeval_version": __version__}
    if certified.calibration_confidence is not None and certified.calibration_confidence.size:
        doc["validity"] = validity_summary(certified.calibration_confidence,
                                           seed=result.get("split_seed") or 0,
                                           clustered=bool(result.get("n_clusters")))
    doc["digest"] = digest(doc)
    return doc


def validity_summary(confidence: np.ndarray, *, seed: int = 0, clustered: bool = False
                     ) -> dict:
    """What a policy keeps to test new records against its calibration data
    (:func:`confeval.validity.summarise_calibration`: the calibration confidences, or a seeded
    subsample of 5,000 of them). The tests compare ranks; a suite's calibration confidences
    are finite (the measures suite places a measure's +-inf just beyond the finite ones), and
    an infinity that still arrives is kept as the largest finite float of its sign, so the
    summary stays JSON. ``clustered``: the items were steps of chains (recorded: the tests
    treat every step as one draw)."""
    from ..validity import summarise_calibration

    summary = summarise_calibration(ranked_finite(confidence), seed=seed)
    summary["clustered"] = clustered
    return summary


def ranked_finite(values: np.ndarray) -> np.ndarray:
    """``values`` with +-inf as the largest finite float of that sign (ranks unchanged)."""
    top = np.finfo(np.float64).max
    return np.nan_to_num(np.asarray(values, dtype=np.float64), nan=np.nan, posinf=top,
                         neginf=-top)


_REWRITE = "policy again with `confeval guarantee --out`"


def _field(path: Path, name: str, why: str) -> ValueError:
    return field_error(path, name, why, _REWRITE)


def _number(doc: Mapping, name: str, path: Path, *, open_unit: bool = False,
            allow_none: bool = False) -> float | None:
    value = doc.get(name)
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise _field(path, name, f"is {value!r}, not a finite number")
    if open_unit and not 0 < value < 1:
        raise _field(path, name, f"is {value!r}, outside (0, 1)")
    return float(value)


def read_policy(path: str | Path) -> dict:
    """A ``policy.json`` checked in full — its shape, its numbers (a finite threshold inside
    the calibration confidences' range, or null; target and delta in (0, 1); a known method,
    FWER procedure, suite and risk), its sentence agreeing with its threshold, and its digest
    — else one :class:`ValueError` naming the file and the field."""
    from ..guarantee import FWER_METHODS

    path = Path(path)
    doc = load_document(path, "policy")
    if not isinstance(doc, dict) or doc.get("policy_version") not in (1, POLICY_VERSION):
        raise ValueError(f"{path}: not a confeval policy (written by `confeval guarantee "
                         "--out`, policy_version 1 or 2)")
    target = doc.get("applies_to")
    if not isinstance(target, dict) or target.get("suite") not in certifiable():
        raise _field(path, "applies_to", f"names no suite confeval certifies "
                     f"({', '.join(certifiable())})")
    threshold = _number(doc, "threshold", path, allow_none=True)
    _number(doc, "target", path, open_unit=True)
    if doc.get("method") not in GUARANTEE_METHODS:
        raise _field(path, "method", f"is {doc.get('method')!r}, not one of "
                     f"{', '.join(GUARANTEE_METHODS)}")
    if doc["method"] != "crc":
        _number(doc, "delta", path, open_unit=True)
        if doc["method"] == "ltt" and doc.get("fwer") not in FWER_METHODS:
            raise _field(path, "fwer", f"is {doc.get('fwer')!r}")
    if doc.get("risk") not in ("selective", "joint"):
        raise _field(path, "risk", f"is {doc.get('risk')!r}, not selective or joint")
    if not isinstance(doc.get("guarantee"), str):
        raise _field(path, "guarantee", "is no sentence")
    if threshold is not None and f"at least {threshold:.6g}:" not in doc["guarantee"]:
        raise _field(path, "guarantee", f"does not state the threshold {threshold:.6g}")
    if threshold is None and not doc["guarantee"].startswith("No threshold is certified"):
        raise _field(path, "guarantee", "promises answers though no threshold is certified")
    if doc["policy_version"] == POLICY_VERSION:
        seen = doc.get("confidence_range")
        if threshold is not None and isinstance(seen, list) and len(seen) == 2 \
                and not seen[0] <= threshold <= seen[1]:
            raise _field(path, "threshold", f"{threshold:g} lies outside the calibration "
                         f"confidences [{seen[0]:g}, {seen[1]:g}]")
        if doc.get("digest") != digest(doc):
            raise _field(path, "digest", "does not match the policy's content (it was edited "
                         "after it was written)")
        if "validity" in doc:
            check_summary(doc["validity"], path, "validity", _REWRITE)
    return doc


_V1_CHOICE = {"measure_col": "confidence_col", "tolerance": "tolerance"}
"""Version 1 policies named the decision's choice by these keys of ``applies_to``."""


def policy_options(doc: Mapping[str, Any], suite: Suite) -> tuple[Any, Any]:
    """(the suite's options, the decision's choice) a policy decides with: version 2 stores
    both; a version 1 policy named the columns it needs in ``applies_to``."""
    target = doc["applies_to"]
    if doc["policy_version"] == POLICY_VERSION:
        try:
            return (build(suite.Options, target.get("options") or {}, what="the policy's "
                          "options"), build(suite.choice, target.get("choice") or {},
                                            what="the policy's choice"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"applies_to: {exc}") from None
    own = {f.name for f in dataclasses.fields(suite.Options)}
    chosen = {f.name for f in dataclasses.fields(suite.choice)}
    values = {k: v for k, v in target.items() if k in own and v is not None}
    picks = {_V1_CHOICE[k]: v for k, v in target.items() if k in _V1_CHOICE and v is not None}
    key = "confidence_col"   # v1's "confidence" named that column, unless measure_col did
    if key in own | chosen and key not in picks and target.get("confidence") is not None:
        (values if key in own else picks)[key] = target["confidence"]
    return build(suite.Options, values, what="the policy's options"), \
        build(suite.choice, {k: v for k, v in picks.items() if k in chosen},
              what="the policy's choice")

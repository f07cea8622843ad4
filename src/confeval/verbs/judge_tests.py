"""``confeval judge reruns``, ``judge position`` and ``judge length``: a judge's variability
across reruns and its position and length biases, from the files people have (and from the
records of a live run, :mod:`confeval.verbs.judge_live`), computed by :mod:`confeval.judge`.

**Reruns** are read in one of three layouts (``--score-cols``, ``--rerun-col`` or several
files), each becoming an items x reruns matrix of scores:

* *columns*: one file, one row per item, one column per rerun (``--score-cols 'score_*'``);
* *long*: one file, one row per item and rerun (``--id-col``, ``--rerun-col``, ``--score-col``;
  an Inspect log's epochs written as a table, or a live run's records);
* *files*: one file per rerun (``--id-col``, ``--score-col``), which must hold the same items:
  otherwise one error naming the file and how many items differ.

A score off the scale [``--min-score``, ``--max-score``] (a -1 "unparseable" marker) or
missing is no score for that rerun (counted: ``notes.rerun_scores_missing``); an item left with
fewer than two scores is excluded and counted (``fewer_than_two_reruns``). With
``--human-col`` the reruns' majority score is scored against the humans, the rerun agreement
and (with ``--logprob-cols``) the judge's score-token probability as its confidences.

Each result is a dict of JSON values (its keys are in each ``*_records`` function's docstring;
the numbers are :func:`confeval.judge.rerun_variability`'s, :func:`confeval.judge.position_bias`'s
and :func:`confeval.judge.length_bias`'s own dicts, under stable keys).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..suites.options import Options, build, option, to_json

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["KINDS", "JudgeLengthOptions", "JudgePositionOptions", "JudgeRerunsOptions",
           "input_name", "judge_length_records", "judge_position_records",
           "judge_reruns_from_sets", "judge_reruns_inputs", "judge_reruns_records",
           "judge_section", "judge_tests_run_config", "rerun_judge_test", "rerun_options",
           "score_judge_test"]

_SCORE = ("score",)
_BOTH = ("score", "run")
_RUN = ("run",)


def _level(value: str) -> str:
    from ..judge.reruns import LEVELS_OF_MEASUREMENT

    if value not in LEVELS_OF_MEASUREMENT:
        raise ValueError(f"--level must be one of {', '.join(LEVELS_OF_MEASUREMENT)}, got "
                         f"{value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class JudgeRerunsOptions(Options):
    """Options of ``confeval judge reruns`` (files, and the live run's ``--repeats``)."""

    score_cols: str | None = option(None, "One file, one column per rerun: the columns "
                                    "(comma list or glob, e.g. 'score_*').", stages=_BOTH)
    score_col: str | None = option(None, "The judge's score column: with --rerun-col (one "
                                   "row per item and rerun), or in each of several files "
                                   "(one rerun per file).", stages=_BOTH)
    rerun_col: str | None = option(None, "Column numbering the reruns (e.g. an Inspect "
                                   "epoch), with --id-col and --score-col.", stages=_BOTH)
    id_col: str | None = option(None, "Column naming each item (with --rerun-col or several "
                                "files).", stages=_BOTH)
    human_col: str | None = option(None, "Column with the human score: the reruns' majority "
                                   "score is scored against it, rerun agreement as its "
                                   "confidence.", stages=_BOTH)
    logprob_cols: str | None = option(None, "The judge's log-probabilities of each score, "
                                      "lowest first (glob): its score-token confidence beside "
                                      "the rerun agreement.", stages=_BOTH)
    tolerance: float = option(0.0, "Scores within this distance count as the same (between "
                              "reruns) and as right (against the human).", stages=_BOTH,
                              minimum=0)
    level: str = option("ordinal", "Krippendorff's alpha: nominal | ordinal | interval | "
                        "ratio.", stages=_BOTH)
    min_score: float = option(1.0, "Lowest score of the scale; scores off it are no score.",
                              stages=_BOTH)
    max_score: float = option(5.0, "Highest score of the scale.", stages=_BOTH)
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=_BOTH, minimum=0, maximum=100_000)
    seed: int = option(0, "Seed of the bootstrap and, live, of the first repeat.",
                       stages=_BOTH)
    repeats: int | None = option(None, "Live: ask the judge this many times per item "
                                 "(each repeat cached and resumed on its own).", stages=_RUN,
                                 minimum=2, maximum=100)
    temperature: float = option(1.0, "Live: the judge's sampling temperature (0: greedy).",
                                stages=_RUN, minimum=0)
    top_p: float = option(1.0, "Live: the judge's nucleus sampling.", stages=_RUN, minimum=0,
                          maximum=1)
    max_tokens: int = option(128, "Live: the judge's reply length.", stages=_RUN, minimum=1)
    answer: str = option("justified", "Live: justified (a sentence, then 'Score: X') or direct "
                         "('Score: X' only).", stages=_RUN)

    def __post_init__(self) -> None:
        super().__post_init__()
        _level(self.level)
        if not self.min_score < self.max_score:
            raise ValueError(f"--max-score {self.max_score:g} must be above --min-score "
                             f"{self.min_score:g}")
        if self.answer not in ("justified", "direct"):
            raise ValueError(f"--answer must be justified or direct, got {self.answer!r}")

    def layout(self, n_files: int) -> str:
        """``columns``, ``long`` or ``files``: how these options read ``n_files`` inputs."""
        if self.score_cols and (self.score_col or self.rerun_col):
            raise ValueError("--score-cols (one column per rerun) or --score-col with "
                             "--rerun-col / several files: not both")
        if self.score_cols:
            if n_files > 1:
                raise ValueError("--score-cols reads one file; several files are one rerun "
                                 "each: give --score-col and --id-col")
            return "columns"
        if not self.score_col:
            raise ValueError("name the reruns: --score-cols COLS (one column per rerun), or "
                             "--score-col with --rerun-col or several files")
        if not self.id_col:
            raise ValueError("--id-col: the items must be named to line their reruns up")
        if self.rerun_col:
            if n_files > 1:
                raise ValueError("--rerun-col reads one file; give the files one at a time")
            return "long"
        if n_files < 2:
            raise ValueError("one file with --score-col holds one rerun: add --rerun-col, "
                             "or give one file per rerun")
        return "files"


@dataclasses.dataclass(frozen=True)
class JudgePositionOptions(Options):
    """Options of ``confeval judge position``."""

    ab_col: str = option("verdict_ab", "The verdict with answer A shown first: a, b or tie "
                         "(naming the answer, not the slot).", stages=_BOTH)
    ba_col: str = option("verdict_ba", "The verdict with answer B shown first.", stages=_BOTH)
    conf_ab_col: str | None = option(None, "The judge's confidence in its verdict of order "
                                     "AB (e.g. the probability of its letter).", stages=_BOTH)
    conf_ba_col: str | None = option(None, "The same of order BA.", stages=_BOTH)
    a_col: str = option("answer_a", "Answer A's text (its length; used when present).",
                        stages=_BOTH)
    b_col: str = option("answer_b", "Answer B's text.", stages=_BOTH)
    human_col: str | None = option(None, "The humans' pick: a, b or tie (empty: none).",
                                   stages=_BOTH)
    length_unit: str = option("words", "words | chars: how an answer's length is counted.",
                              stages=_BOTH)
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=_BOTH, minimum=0, maximum=100_000)
    seed: int = option(0, "Seed of the bootstrap.", stages=_BOTH)
    question_col: str = option("question", "Live: the question's column of --data.",
                               stages=_RUN)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.length_unit not in ("words", "chars"):
            raise ValueError(f"--length-unit must be words or chars, got {self.length_unit!r}")
        if self.ab_col == self.ba_col:
            raise ValueError(f"--ab-col and --ba-col are both {self.ab_col!r}: the two orders "
                             "need a column each")


@dataclasses.dataclass(frozen=True)
class JudgeLengthOptions(Options):
    """Options of ``confeval judge length``."""

    judge_col: str = option(dataclasses.MISSING, "The judge's score.", stages=_SCORE)
    human_col: str = option(dataclasses.MISSING, "The human score.", stages=_SCORE)
    answer_col: str | None = option(None, "The answer's text (its length is counted).",
                                    stages=_SCORE)
    length_col: str | None = option(None, "The answer's length as a number (instead of "
                                    "--answer-col).", stages=_SCORE)
    confidence_col: str | None = option(None, "The judge's confidence in its score.",
                                        stages=_SCORE)
    length_unit: str = option("words", "words | chars: how --answer-col is counted.",
                              stages=_SCORE)
    per: float = option(100.0, "Slopes are per this many units of length.", stages=_SCORE)
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=_SCORE, minimum=0, maximum=100_000)
    seed: int = option(0, "Seed of the bootstrap.", stages=_SCORE)

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.answer_col is None) == (self.length_col is None):
            raise ValueError("give the answers' length: --answer-col (a text column) or "
                             "--length-col (a number), one of them")
        if self.length_unit not in ("words", "chars"):
            raise ValueError(f"--length-unit must be words or chars, got {self.length_unit!r}")
        if not self.per > 0:
            raise ValueError(f"--per must be positive, got {self.per:g}")


# ------------------------------------------------------------------ reruns: reading
class _NamesItsFile(ValueError):
    """An error whose message already starts with the file it is about."""


def _named(source: str, exc: Exception) -> ValueError:
    text = str(exc)
    if isinstance(exc, _NamesItsFile) or text.startswith(source):
        return ValueError(text)
    return ValueError(f"{source}: {text}")


def _on_scale(values: np.ndarray, options: JudgeRerunsOptions) -> tuple[np.ndarray, int]:
    """Values off the scale made NaN (no score), and how many were."""
    with np.errstate(invalid="ignore"):
        off = (values < options.min_score) | (values > options.max_score)
    values = values.copy()
    values[off] = np.nan
    return values, int(off.sum())


def _long_frame(rs: RecordSet, options: JudgeRerunsOptions, rerun: np.ndarray | None):
    """(item, rerun, score, human, probs) of a long layout's usable rows."""
    import pandas as pd

    from ..records import id_text

    col = rs.columns([options.id_col], what="item id column")[0]
    items = id_text(rs.frame[col])
    rs.exclude(rs.frame[col].isna().to_numpy(), "missing_item_id")
    if rerun is None:
        rerun = rs.groups(options.rerun_col, what="rerun")
    score = rs.numeric([options.score_col], what="rerun_score", allow_missing=True)[:, 0]
    frame = pd.DataFrame({"item": items, "rerun": rerun, "score": score})
    frame = frame[rs.mask]
    duplicated = frame.duplicated(subset=["item", "rerun"]).to_numpy()
    if duplicated.any():
        rows = np.zeros(len(rs.frame), dtype=bool)
        rows[np.flatnonzero(rs.mask)[duplicated]] = True
        rs.exclude(rows, "duplicate_rerun")
        frame = frame[~duplicated]
    return frame


def _rerun_order(values: Sequence[str]) -> list[str]:
    """Reruns in their natural order (numbers as numbers)."""
    try:
        return sorted(values, key=float)
    except ValueError:
        return sorted(values)


def judge_reruns_inputs(paths: Sequence[str | Path], options: JudgeRerunsOptions) -> dict:
    """The reruns of one input (one file, or one file per rerun) as arrays: ``scores`` (items
    x reruns, NaN: no score), ``items``, ``human`` (NaN: none), ``probs`` (or None),
    ``scale``, ``records`` (the first file's :class:`~confeval.records.RecordSet`, for its
    counts), ``reruns`` (their names) and ``notes`` (counts that are not exclusions)."""
    from ..records import RecordSet

    return _reruns_inputs([RecordSet.read(p) for p in paths], [str(p) for p in paths],
                          options)


def _reruns_inputs(sets: Sequence[RecordSet], paths: Sequence[str],
                   options: JudgeRerunsOptions) -> dict:
    import pandas as pd

    layout = options.layout(len(sets))
    rs = sets[0]
    notes: dict[str, int] = {}
    scale = np.arange(options.min_score, options.max_score + 0.5)
    try:
        if layout == "columns":
            cols = rs.columns(options.score_cols, what="rerun score column")
            if len(cols) < 2:
                raise ValueError(f"--score-cols names one column ({cols[0]}): variability "
                                 "needs two reruns or more")
            scores = rs.numeric(cols, what="rerun_score", allow_missing=True)
            items = np.asarray([str(i) for i in rs.frame["_row"]])
            if options.id_col:
                from ..records import id_text

                items = id_text(rs.frame[rs.columns([options.id_col], "item id column")[0]])
            rows = np.arange(len(rs.frame))
            reruns = cols
        else:
            frames = []
            for k, one in enumerate(sets):
                tag = None if layout == "long" else np.full(len(one.frame), str(k + 1))
                frames.append(_long_frame(one, options, tag).assign(source=k))
            if layout == "files":
                _same_items(paths, [f["item"] for f in frames])
            long = pd.concat(frames, ignore_index=True)
            reruns = _rerun_order(long["rerun"].unique().tolist())
            order = list(dict.fromkeys(long["item"].tolist()))
            wide = long.pivot(index="item", columns="rerun", values="score")
            scores = wide.reindex(index=order, columns=reruns).to_numpy(np.float64)
            items = np.asarray(order)
            rows = None
    except ValueError as exc:
        raise _named(rs.source, exc) from None
    scores, off = _on_scale(scores, options)
    if off:
        notes["rerun_scores_off_scale"] = off
    missing = int(np.isnan(scores).sum()) - off
    if missing:
        notes["rerun_scores_missing"] = missing
    enough = (~np.isnan(scores)).sum(axis=1) >= 2
    human = probs = None
    if options.human_col or options.logprob_cols:
        human, probs = _per_item_extras(sets, options, layout, items, notes)
    if not enough.all():
        notes["fewer_than_two_reruns"] = int((~enough).sum())
        if layout == "columns":
            bad = np.zeros(len(rs.frame), dtype=bool)
            bad[rows[~enough & rs.mask[rows]]] = True
            rs.exclude(bad, "fewer_than_two_reruns")
    keep = enough & (rs.mask if layout == "columns" else True)
    return {"layout": layout, "scores": scores[keep], "items": items[keep],
            "human": None if human is None else human[keep],
            "probs": None if probs is None else probs[keep], "scale": scale, "records": rs,
            "reruns": [str(r) for r in reruns], "notes": notes}


def _same_items(paths: Sequence[str | Path], item_lists: Sequence) -> None:
    """One error naming the first file whose items are not the first file's."""
    first = set(item_lists[0])
    for path, items in zip(paths[1:], item_lists[1:]):
        here = set(items)
        if here != first:
            raise _NamesItsFile(
                f"{path}: {len(here - first):,} item(s) that {paths[0]} does not have and "
                f"{len(first - here):,} of its items missing: reruns must judge the same "
                "items (one file with --rerun-col counts missing reruns instead)")


def _per_item_extras(sets, options: JudgeRerunsOptions, layout: str, items: np.ndarray,
                     notes: dict) -> tuple:
    """Each item's human score (the first one given) and mean score-token distribution."""
    import pandas as pd

    from ..records import id_text

    def read(one):
        human = probs = None
        if options.human_col:
            human = one.numeric([options.human_col], what="human_score",
                                allow_missing=True)[:, 0]
            human, off = _on_scale(human, options)
            if off:
                notes["human_scores_off_scale"] = notes.get("human_scores_off_scale", 0) + off
        if options.logprob_cols:
            cols = one.columns(options.logprob_cols, what="logprob column")
            if len(cols) != int(options.max_score - options.min_score + 1):
                raise ValueError(f"{one.source}: {len(cols)} log-probability columns for the "
                                 f"scale {options.min_score:g}-{options.max_score:g}")
            probs = np.exp(one.numeric(cols, what="logprob", allow_missing=True))
        return human, probs

    if layout == "columns":
        human, probs = read(sets[0])
        if probs is not None:
            probs = probs / probs.sum(axis=1, keepdims=True)
        return human, probs
    parts = []
    for one in sets:
        frame = pd.DataFrame({"item": id_text(one.frame[one.columns([options.id_col])[0]])})
        human, probs = read(one)
        if human is not None:
            frame["human"] = human
        if probs is not None:
            for j in range(probs.shape[1]):
                frame[f"p{j}"] = probs[:, j]
        parts.append(frame[one.mask])
    frame = pd.concat(parts, ignore_index=True)
    grouped = frame.groupby("item", sort=False)
    human = probs = None
    if options.human_col:
        human = grouped["human"].first().reindex(items).to_numpy(np.float64)
    if options.logprob_cols:
        pcols = [c for c in frame.columns if c.startswith("p") and c[1:].isdigit()]
        mean = grouped[pcols].mean().reindex(items).to_numpy(np.float64)
        probs = mean / mean.sum(axis=1, keepdims=True)
    return human, probs


# ------------------------------------------------------------------ reruns: results
def _confidence_scores(inputs: dict, options: JudgeRerunsOptions) -> dict:
    """Rerun agreement (and the score-token probability) as confidences in the reruns'
    majority score, scored against the humans by :func:`confeval.evaluate.evaluate_confidence`
    on the same items."""
    from ..evaluate import evaluate_confidence
    from ..judge import rerun_confidence
    from ..metrics import auroc, paired_bootstrap

    human = inputs["human"]
    probs = inputs["probs"]
    usable = ~np.isnan(human)
    if probs is not None:
        usable &= np.isfinite(probs).all(axis=1)
    n = int(usable.sum())
    if n < 2:
        return {"n": n, "skipped": f"{n} item(s) with a human score: a confidence needs two "
                                   "to be scored"}
    got = rerun_confidence(inputs["scores"][usable], human[usable],
                           tolerance=options.tolerance,
                           probs=None if probs is None else probs[usable],
                           scale=inputs["scale"])
    correct = got["correct"]
    measures = {}
    for name, conf in got["confidences"].items():
        res = evaluate_confidence(conf, correct, n_resamples=options.bootstrap,
                                  seed=options.seed)
        res.pop("risk_coverage", None)
        res.pop("reliability", None)
        measures[name] = res
    out: dict[str, Any] = {"n": n, "accuracy": float(correct.mean()),
                           "tolerance": options.tolerance, "measures": measures}
    if len(measures) == 2 and options.bootstrap and 0 < correct.sum() < n:
        diff = paired_bootstrap(auroc, (got["confidences"]["rerun_agreement"], correct),
                                (got["confidences"]["score_token"], correct),
                                n_resamples=options.bootstrap, seed=options.seed)
        out["auroc_difference"] = {"estimate": diff.estimate, "low": diff.low,
                                   "high": diff.high, "p_value": diff.p_value}
    return out


def judge_reruns_inputs_result(inputs: dict, options: JudgeRerunsOptions) -> dict:
    """The result of one input's reruns (:func:`judge_reruns_records`' keys)."""
    from ..judge import rerun_variability

    rs = inputs["records"]
    if inputs["scores"].shape[0] < 2:
        raise ValueError(f"{rs.source}: {inputs['scores'].shape[0]} item(s) with two scores "
                         f"or more (notes: {inputs['notes'] or 'none'}): variability needs at "
                         "least two items")
    variability = rerun_variability(inputs["scores"], tolerance=options.tolerance,
                                    level=options.level, n_resamples=options.bootstrap,
                                    seed=options.seed, item_ids=inputs["items"])
    out: dict[str, Any] = {**rs.summary(), "layout": inputs["layout"],
                           "reruns_read": inputs["reruns"],
                           "scale": [options.min_score, options.max_score],
                           "notes": dict(inputs["notes"]), **variability}
    out.pop("flagged", None)
    warnings = []
    if inputs["notes"].get("rerun_scores_missing") or inputs["notes"].get(
            "rerun_scores_off_scale"):
        warnings.append("not every rerun scored every item (notes): the items' reruns differ "
                        "in number")
    if inputs["human"] is not None:
        out["as_confidence"] = _confidence_scores(inputs, options)
    out["warnings"] = warnings
    return out


def judge_reruns_from_sets(sets: Sequence[RecordSet], options: JudgeRerunsOptions) -> dict:
    """:func:`judge_reruns_records` of record sets already read (a live run's records)."""
    return judge_reruns_inputs_result(_reruns_inputs(sets, [s.source for s in sets], options),
                                      options)


def judge_reruns_records(paths: Sequence[str | Path], options: JudgeRerunsOptions) -> dict:
    """The rerun variability of one input (a file, or one file per rerun)::

        {"source", "n_read", "n_used", "excluded", "layout", "reruns_read", "scale",
         "notes", "n_items", "reruns", "tolerance", "items_flipping", "flip_rate",
         "pairwise_disagreement", "alpha", "distinct_scores", "items",
         ["as_confidence": {"n", "accuracy", "tolerance",
                            "measures": {"rerun_agreement" | "score_token": {...}},
                            ["auroc_difference"]}],
         "warnings"}

    The numbers are :func:`confeval.judge.rerun_variability`'s; ``measures`` are
    :func:`confeval.evaluate.evaluate_confidence`'s (``ece``, ``brier``, ``auroc``,
    ``auarc``, ``ci``, ...)."""
    return judge_reruns_inputs_result(judge_reruns_inputs(paths, options), options)


# ------------------------------------------------------------------ position
def _lengths(texts, unit: str) -> np.ndarray:
    values = [str(t) if t is not None else "" for t in texts]
    if unit == "chars":
        return np.asarray([len(t) for t in values], dtype=np.float64)
    return np.asarray([len(t.split()) for t in values], dtype=np.float64)


def _verdict_column(rs: RecordSet, column: str) -> np.ndarray:
    from ..judge.bias import VERDICTS

    col = rs.columns([column], what="verdict column")[0]
    raw = rs.frame[col]
    text = raw.astype(str).str.strip().str.lower().to_numpy()
    text = np.where(raw.isna().to_numpy() | (text == ""), "", text)
    rs.exclude(text == "", "missing_order")
    rs.exclude(~np.isin(text, VERDICTS) & (text != ""), "unknown_verdict")
    return text


def judge_position_records(rs: RecordSet, options: JudgePositionOptions) -> dict:
    """The position tests of one pairwise file::

        {"source", "n_read", "n_used", "excluded", "columns", "n_items", "ties", "flips",
         "first_slot", "sign_test", ["confidence_by_slot"], ["longer"], ["agreement"]}

    (:func:`confeval.judge.position_bias`'s keys). A row without one order's verdict is
    excluded and counted (``missing_order``); a verdict that is not a, b or tie too
    (``unknown_verdict``)."""
    from ..judge import position_bias

    for column in (options.ab_col, options.ba_col):
        if column not in rs.frame.columns:
            raise ValueError(f"{rs.source}: no column {column!r}: a position test needs the "
                             f"verdicts of both orders ({options.ab_col}, {options.ba_col})")
    ab, ba = _verdict_column(rs, options.ab_col), _verdict_column(rs, options.ba_col)
    conf = {}
    for key, column in (("conf_ab", options.conf_ab_col), ("conf_ba", options.conf_ba_col)):
        if column:
            conf[key] = rs.numeric([column], what=key, lo=0.0, hi=1.0, allow_missing=True)[:, 0]
    human = None
    if options.human_col:
        col = rs.columns([options.human_col], what="human column")[0]
        raw = rs.frame[col]
        human = np.where(raw.isna().to_numpy(), "", raw.astype(str).str.strip().str.lower())
    lengths = {}
    if options.a_col in rs.frame.columns and options.b_col in rs.frame.columns:
        lengths = {"length_a": _lengths(rs.frame[options.a_col], options.length_unit),
                   "length_b": _lengths(rs.frame[options.b_col], options.length_unit)}
    keep = rs.mask
    if keep.sum() < 2:
        raise ValueError(f"{rs.source}: {int(keep.sum())} item(s) with a verdict in both "
                         f"orders (excluded: {rs.excluded or 'none'}): the position tests "
                         "need at least two")
    found = position_bias(ab[keep], ba[keep],
                          **{k: v[keep] for k, v in conf.items()},
                          **{k: v[keep] for k, v in lengths.items()},
                          human=None if human is None else human[keep],
                          n_resamples=options.bootstrap, seed=options.seed)
    summary = rs.summary()
    summary.pop("flagged", None)
    columns = {"ab": options.ab_col, "ba": options.ba_col, **{
        k: c for k, c in (("conf_ab", options.conf_ab_col), ("conf_ba", options.conf_ba_col),
                          ("human", options.human_col)) if c}}
    if lengths:
        columns.update(a=options.a_col, b=options.b_col, length_unit=options.length_unit)
    return {**summary, "columns": columns, **found}


# ------------------------------------------------------------------ length
def judge_length_records(rs: RecordSet, options: JudgeLengthOptions) -> dict:
    """The length tests of one file::

        {"source", "n_read", "n_used", "excluded", "length_unit", "n", "per", "length",
         "control", "judge_slope", "human_slope", "excess_slope",
         "judge_slope_at_fixed_human", ["confidence_slope_at_fixed_human"]}

    (:func:`confeval.judge.length_bias`'s keys). Rows without a number in a column used are
    excluded and counted."""
    from ..judge import length_bias

    judge = rs.numeric([options.judge_col], what="judge_score")[:, 0]
    human = rs.numeric([options.human_col], what="human_score")[:, 0]
    if options.length_col:
        length = rs.numeric([options.length_col], what="length", lo=0.0)[:, 0]
        unit = options.length_col
    else:
        col = rs.columns([options.answer_col], what="answer column")[0]
        rs.exclude(rs.frame[col].isna().to_numpy(), "missing_answer")
        length = _lengths(rs.frame[col].fillna(""), options.length_unit)
        unit = options.length_unit
    conf = None
    if options.confidence_col:
        conf = rs.numeric([options.confidence_col], what="confidence")[:, 0]
    keep = rs.mask
    try:
        found = length_bias(judge[keep], human[keep], length[keep],
                            confidence=None if conf is None else conf[keep], per=options.per,
                            n_resamples=options.bootstrap, seed=options.seed)
    except ValueError as exc:
        raise ValueError(f"{rs.source}: {exc} (excluded: {rs.excluded or 'none'})") from None
    summary = rs.summary()
    summary.pop("flagged", None)
    return {**summary, "length_unit": unit, **found}


# ------------------------------------------------------------------ commands, folders
KINDS = {"judge reruns": ("judge_reruns", "A judge's variability across reruns"),
         "judge position": ("judge_position", "Position bias of a pairwise judge"),
         "judge length": ("judge_length", "A judge's score and confidence against answer "
                                          "length")}
"""Command -> (report section kind, section title)."""

_OPTIONS = {"judge reruns": JudgeRerunsOptions, "judge position": JudgePositionOptions,
            "judge length": JudgeLengthOptions}


def score_judge_test(command: str, paths: Sequence[str | Path], options: Any) -> dict:
    """The result of ``command`` on one input (several paths: one file per rerun)."""
    from ..records import RecordSet

    if command == "judge reruns":
        return judge_reruns_records(paths, options)
    if len(paths) != 1:
        raise ValueError(f"confeval {command} reads one file at a time")
    rs = RecordSet.read(paths[0])
    if command == "judge position":
        return judge_position_records(rs, options)
    return judge_length_records(rs, options)


def input_name(paths: Sequence[str | Path]) -> str:
    """The name of one input's result: its path, or the rerun files joined by " + "."""
    return " + ".join(str(p) for p in paths)


def judge_section(command: str, results: Mapping[str, dict]) -> dict:
    """The report section of ``command``'s results (by input name)."""
    kind, title = KINDS[command]
    return {"kind": kind, "title": title, "name_header": "file", "results": dict(results)}


def judge_tests_run_config(command: str, paths: Sequence[str | Path], options: Any) -> dict:
    """The ``run.json`` config: the working directory, the inputs with their SHA-256 and every
    option — what ``confeval rerun`` needs to repeat it."""
    import os

    from ..runs import file_sha256

    return {"command": command, "cwd": os.getcwd(),
            "inputs": [{"path": str(p), "sha256": file_sha256(p)} for p in paths],
            "options": to_json(options)}


def rerun_options(config: Mapping[str, Any]) -> Any:
    """The options a ``judge reruns | position | length`` folder was made with."""
    command = str(config["command"])
    return build(_OPTIONS[command], config.get("options") or {}, what=f"confeval {command}")


def rerun_judge_test(config: Mapping[str, Any]) -> dict:
    """The metrics of a ``judge reruns | position | length`` folder computed again from its
    ``run.json``: the inputs checked unchanged and scored again, or a live folder's records
    scored again (no model call)."""
    from .score import check_unchanged

    command = str(config["command"])
    options = rerun_options(config)
    if config.get("live"):
        raise ValueError(f"a live `confeval {command}` folder is scored again from its "
                         "records: confeval rerun RUN_DIR")
    found = [check_unchanged(config, e["path"], e.get("sha256"))
             for e in config.get("inputs") or []]
    names = [e["path"] for e in config.get("inputs") or []]
    result = score_judge_test(command, found, options)
    return {"title": f"confeval {command}", "simulated": False,
            "sections": [judge_section(command, {input_name(names): result})]}

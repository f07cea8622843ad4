"""``confeval sets calibrate`` / ``confeval sets apply``: split-conformal prediction sets kept
as numbers and applied to new multiple-choice records.

Calibrate: every usable row of the input calibrates (no split: the input *is* the calibration
set) one score (``--score``, default ``lac``) at the suite's ``--alpha``; q_hat is the exact
finite-sample quantile, the ceil((n + 1)(1 - alpha))-th smallest true-label score
(:func:`confeval.conformal.conformal_quantile`), per group with ``--group-col`` (Mondrian). The
state stored is the score's name, alpha, q_hat (null: too few calibration items, every set is
the full option set), the RAPS penalty and the seed of a randomised score's draws — numbers
only.

Apply: each new row's set holds the options whose score is at most q_hat (an empty set gets the
top option unless ``--allow-empty``); a group unseen at calibration gets the full set (a
warning). The label-free confidence is the top option's probability; where the gold option is
present its score and whether the set covers it are returned too.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ...conformal.names import SCORES
from .._conformal import check_alpha, check_qhats, qhat_state, qhat_values
from ..base import Conformalised, ConformalStep, Predicted
from ..options import Options, option
from .options import SetsOptions

if TYPE_CHECKING:
    from ...records import RecordSet

__all__ = ["STEP", "SetsConformalChoice"]

_SCORE = ("score",)


@dataclasses.dataclass(frozen=True)
class SetsConformalChoice(Options):
    """The set score calibrated (one), and the seed of a randomised score's draws."""

    score: str = option("lac", "The set score: lac, aps, aps_randomized, raps, "
                        "raps_randomized or margin.", stages=_SCORE)
    score_seed: int = option(0, "Seed of a randomised score's per-row draws (the same at "
                             "calibration and apply).", stages=_SCORE, minimum=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.score not in SCORES:
            raise ValueError(f"--score {self.score!r}: choose from {', '.join(SCORES)}")


def _scores_of(probs: np.ndarray, state: Mapping[str, Any]) -> np.ndarray:
    from ...conformal import label_scores

    return label_scores(probs, state["score"], rng=np.random.default_rng(state["score_seed"]),
                        lam=state["lam"], k_reg=state["k_reg"])


def calibrate(rs: RecordSet, options: SetsOptions, choice: SetsConformalChoice
              ) -> Conformalised:
    from ...conformal import conformal_quantile, mondrian_quantiles
    from .inputs import read_sets

    data = read_sets(rs, options)
    if not data.labels.size:
        raise ValueError(f"{rs.source}: no usable row to calibrate on (excluded: "
                         f"{rs.excluded})")
    state = {"score": choice.score, "score_seed": choice.score_seed, "alpha": options.alpha,
             "lam": options.lam, "k_reg": options.k_reg, "allow_empty": options.allow_empty,
             "letters": list(data.letters)}
    true = _scores_of(data.probs, state)[np.arange(data.labels.size), data.labels]
    true = true.astype(np.float64)
    state.update(qhat_state(conformal_quantile(true, options.alpha) if data.groups is None
                            else mondrian_quantiles(true, data.groups, options.alpha)))
    return Conformalised(rs, state, data.probs.max(axis=1).astype(np.float64), true)


def _row_qhat(state: Mapping[str, Any], groups: np.ndarray | None, n: int) -> np.ndarray:
    from ...conformal.quantile import row_thresholds

    qhat = qhat_values(state)
    if not isinstance(qhat, dict):
        return np.full(n, qhat)
    if groups is None:
        raise ValueError("this predictor was calibrated per group: the records need the "
                         "group column (--group-col)")
    return row_thresholds(qhat, groups.astype(str), what="had no calibration rows; "
                          "their sets hold every option")


def predict(rs: RecordSet, options: SetsOptions, choice: SetsConformalChoice,
            state: Mapping[str, Any]) -> Predicted:
    from ...conformal import prediction_sets, to_probabilities
    from .inputs import option_values

    values, letters = option_values(rs, logit_cols=options.logit_cols,
                                    input_kind=options.input, precision=options.precision)
    if list(letters) != list(state["letters"]):
        raise ValueError(f"{rs.source}: options {letters} where the predictor was calibrated "
                         f"on {state['letters']}")
    every_group = rs.groups(options.group_col) if options.group_col else None
    rows = np.flatnonzero(rs.mask)
    probs = to_probabilities(values[rows], options.input, np.dtype(options.precision))
    groups = None if every_group is None else every_group[rows]
    scores = _scores_of(probs, state)
    member = prediction_sets(scores, _row_qhat(state, groups, rows.size), probs,
                             allow_empty=state["allow_empty"])
    sets: list = [None] * len(rs.frame)
    sizes: list = [None] * len(rs.frame)
    names = np.asarray(letters, dtype=object)
    for row, chosen in zip(rows.tolist(), member):
        sets[row] = names[chosen].tolist()
        sizes[row] = int(chosen.sum())
    out = Predicted(rs, {"set": sets, "set_size": sizes}, rows,
                    probs.max(axis=1).astype(np.float64))
    _truth(out, options, letters, scores, member)
    return out


def _truth(out: Predicted, options: SetsOptions, letters: list[str], scores: np.ndarray,
           member: np.ndarray) -> None:
    """The gold option's score and coverage where the rows carry a known gold option."""
    from ..._validation import index_in

    frame = out.records.frame
    if options.label_col not in frame.columns:
        out.no_truth = f"no {options.label_col!r} column (the gold option)"
        return
    raw = frame[options.label_col].iloc[out.rows]
    text = raw.astype(str).str.strip()
    known = raw.notna().to_numpy() & text.isin(letters).to_numpy()
    if not known.any():
        out.no_truth = f"no row's {options.label_col!r} names one of the options"
        return
    gold = index_in(np.array(letters), text[known].to_numpy())
    picked = np.flatnonzero(known)
    out.truth_rows = out.rows[picked]
    out.scores = scores[picked, gold].astype(np.float64)
    out.covered = member[picked, gold]


def check(state: Mapping[str, Any]) -> None:
    """A state as :func:`calibrate` writes it, else a ValueError naming the field."""
    if state.get("score") not in SCORES:
        raise ValueError(f"state.score {state.get('score')!r} is not a set score")
    check_alpha(state)
    lam = state.get("lam")
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not math.isfinite(lam):
        raise ValueError(f"state.lam is {lam!r}, not a number")
    for key in ("k_reg", "score_seed"):
        if isinstance(state.get(key), bool) or not isinstance(state.get(key), int):
            raise ValueError(f"state.{key} is {state.get(key)!r}, not an integer")
    letters = state.get("letters")
    if not isinstance(letters, list) or len(letters) < 2 \
            or not all(isinstance(x, str) for x in letters):
        raise ValueError("state.letters is not a list of option names")
    check_qhats(state)


def promise(state: Mapping[str, Any]) -> str:
    level = 1 - state["alpha"]
    per = " within each group" if "qhat_by_group" in state else ""
    return (f"Each set ({state['score']}) holds the right option with probability at least "
            f"{level:g}{per}, for new questions exchangeable with the calibration questions.")


STEP = ConformalStep(SetsConformalChoice, calibrate, predict, check, promise,
                     ignores=("split_seed", "seeds", "scores", "protocol"))

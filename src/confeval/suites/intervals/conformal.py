"""``confeval intervals calibrate`` / ``confeval intervals apply``: a judge's conformal rating
interval kept as numbers and applied to new judged items.

One method can be stored: ordinal APS (:class:`confeval.conformal.OrdinalAPS`, Lu et al. 2022),
which fits nothing — the judge's own rating distribution (the softmax of the first judge's
rating log-probabilities) grows a contiguous set of ratings from its arg-max, and q_hat is the
exact finite-sample quantile of the true rating's score over every usable calibration row (per
group with ``--group-col --mondrian``). The other interval methods fit a regressor on the
calibration data; a stored predictor holds numbers only, never a fitted model (confeval does
not load pickled models from files it is given), so they are refused with that reason.

Apply: each new item's interval is the lowest and highest rating of its set; its label-free
confidence the judge's largest rating probability; where the human score is present, its score
and whether the interval covers it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .._conformal import check_alpha, check_qhats, qhat_state, qhat_values
from ..base import Conformalised, ConformalStep, Predicted
from ..options import Options, option
from .options import IntervalsOptions

if TYPE_CHECKING:
    from ...records import RecordSet

__all__ = ["STEP", "IntervalsConformalChoice", "STORABLE"]

STORABLE = ("ordinal_aps",)
"""The interval methods a stored predictor can hold (they fit no model)."""

_SCORE = ("score",)


@dataclasses.dataclass(frozen=True)
class IntervalsConformalChoice(Options):
    """The interval method calibrated."""

    method: str = option("ordinal_aps", "The interval method stored: ordinal_aps (the one that "
                         "fits no model).", stages=_SCORE)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method not in STORABLE:
            raise ValueError(f"--method {self.method!r}: a stored predictor holds numbers, not "
                             "a fitted regressor, so only a method that fits none can be "
                             f"calibrated for apply: {', '.join(STORABLE)}")


def _method(state: Mapping[str, Any]):
    from ...conformal import make_method

    return make_method(state["method"], alpha=state["alpha"], low=float(state["min_score"]),
                       high=float(state["min_score"] + state["n_ratings"] - 1))


def _confidence(features: np.ndarray, n_ratings: int) -> np.ndarray:
    """The judge's largest rating probability (its first judge's, renormalised)."""
    from ..._numeric import softmax

    return softmax(features[:, :n_ratings], np.float64).max(axis=1)


def calibrate(rs: RecordSet, options: IntervalsOptions, choice: IntervalsConformalChoice
              ) -> Conformalised:
    from .inputs import read_intervals

    data = read_intervals(rs, options)
    if not data.truth.size:
        raise ValueError(f"{rs.source}: no usable row to calibrate on (excluded: "
                         f"{rs.excluded})")
    state = {"method": choice.method, "alpha": options.alpha, "min_score": options.min_score,
             "n_ratings": int(data.levels.size)}
    groups = data.groups if options.mondrian else None
    if options.mondrian and groups is None:
        raise ValueError("--mondrian calibrates per group: name the column with --group-col")
    method = _method(state).fit(data.features, data.truth, groups)
    state.update(qhat_state(method.thresholds[0]))
    scores = method._nonconformity(data.features, data.truth)[0]
    return Conformalised(rs, state, _confidence(data.features, data.levels.size),
                         np.asarray(scores, dtype=np.float64))


def predict(rs: RecordSet, options: IntervalsOptions, choice: IntervalsConformalChoice,
            state: Mapping[str, Any]) -> Predicted:
    from .inputs import read_intervals

    labelled = options.label_col in rs.frame.columns
    data = read_intervals(rs, options, with_truth=False)
    if data.levels.size != state["n_ratings"] or options.min_score != state["min_score"]:
        raise ValueError(f"{rs.source}: ratings {options.min_score} to "
                         f"{options.min_score + data.levels.size - 1} where the predictor was "
                         f"calibrated on {state['min_score']} to "
                         f"{state['min_score'] + state['n_ratings'] - 1}")
    rows = np.flatnonzero(rs.mask)
    method = _method(state)
    if "qhat_by_group" in state:
        if data.groups is None:
            raise ValueError("this predictor was calibrated per group: the records need the "
                             "group column (--group-col)")
        method.mondrian = True
        method.thresholds = [qhat_values(state)]
        lo, hi = method.predict(data.features, data.groups.astype(str))
    else:
        method.mondrian = False
        method.thresholds = [qhat_values(state)]
        lo, hi = method.predict(data.features)
    low: list = [None] * len(rs.frame)
    high: list = [None] * len(rs.frame)
    for row, a, b in zip(rows.tolist(), lo.tolist(), hi.tolist()):
        low[row], high[row] = a, b
    out = Predicted(rs, {"interval_low": low, "interval_high": high}, rows,
                    _confidence(data.features, state["n_ratings"]))
    if not labelled:
        out.no_truth = f"no {options.label_col!r} column (the human score)"
        return out
    truth = _human_scores(rs, options, rows, data.levels)
    known = np.isfinite(truth)
    if not known.any():
        out.no_truth = f"no row's {options.label_col!r} is a rating of the scale"
        return out
    out.truth_rows = rows[known]
    out.scores = np.asarray(method._nonconformity(data.features[known], truth[known])[0],
                            dtype=np.float64)
    out.covered = (lo[known] <= truth[known]) & (truth[known] <= hi[known])
    return out


def _human_scores(rs: RecordSet, options: IntervalsOptions, rows: np.ndarray,
                  levels: np.ndarray) -> np.ndarray:
    """The human score of each predicted row, NaN where it is missing or off the scale (new
    items may be labelled later, some or none)."""
    import pandas as pd

    values = pd.to_numeric(rs.frame[options.label_col].iloc[rows], errors="coerce")
    values = values.to_numpy(np.float64)
    return np.where(np.isin(values, levels), values, np.nan)


def check(state: Mapping[str, Any]) -> None:
    """A state as :func:`calibrate` writes it, else a ValueError naming the field."""
    if state.get("method") not in STORABLE:
        raise ValueError(f"state.method {state.get('method')!r} is not a storable method")
    check_alpha(state)
    for key, low in (("min_score", -10**6), ("n_ratings", 2)):
        value = state.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 10**6:
            raise ValueError(f"state.{key} is {value!r}")
    if state["n_ratings"] > 100:
        raise ValueError(f"state.n_ratings {state['n_ratings']} is more than 100 ratings")
    check_qhats(state)


def promise(state: Mapping[str, Any]) -> str:
    per = " within each group" if "qhat_by_group" in state else ""
    return (f"Each interval ({state['method']}) holds the human score with probability at "
            f"least {1 - state['alpha']:g}{per}, for new items exchangeable with the "
            "calibration items.")


STEP = ConformalStep(IntervalsConformalChoice, calibrate, predict, check, promise,
                     ignores=("pred_col", "methods", "seeds", "base", "paper_protocol",
                              "cal_fraction", "seed_sweep", "separately"))

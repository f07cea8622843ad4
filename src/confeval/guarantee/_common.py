"""What every certified-threshold method shares: the checked inputs and the result."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


def checked(confidence: ArrayLike, correct: ArrayLike, delta: float | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correctness) as float arrays, or a :class:`ValueError` saying what is
    wrong: 1-D of one length, finite, correctness in [0, 1], delta in (0, 1)."""
    conf = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    if conf.shape != y.shape or conf.ndim != 1 or conf.size == 0:
        raise ValueError("confidence and correct must be 1-D of one length, not empty")
    if not (np.isfinite(conf).all() and np.isfinite(y).all()):
        raise ValueError("confidence and correct must be finite")
    if ((y < 0) | (y > 1)).any():
        raise ValueError("correct must lie in [0, 1]")
    if delta is not None and not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    return conf, y


def check_target(target: float) -> None:
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}")


@dataclass
class ThresholdResult:
    """A certified threshold ("answer if confidence >= threshold"; None: none is), the bound
    the method certifies there, the calibration risk and answered count there, the best bound
    any tested threshold reaches (what this n could promise), and which risk is bounded:
    ``selective`` (errors among the answered) or ``joint`` (answered and wrong, among all)."""

    threshold: float | None
    bound: float | None
    risk: float | None
    answered: int | None
    best_bound: float
    n_candidates: int
    risk_kind: str = "selective"
    best_achievable: dict | None = None
    """With no threshold certified: where ``best_bound`` was reached (``threshold``,
    ``answered``, ``risk``, the ``level`` it was tested at, ``n_tested_first``: how many
    thresholds the method tested), None when it answers nothing."""

    def to_dict(self) -> dict:
        return {"threshold": self.threshold, "answer_if": "confidence >= threshold",
                "bound": self.bound, "risk_controlled": self.risk_kind,
                "n_candidates": self.n_candidates,
                "calibration": None if self.threshold is None else {
                    "risk": self.risk, "answered": self.answered},
                "best_achievable_bound": self.best_bound,
                "best_achievable": self.best_achievable if self.threshold is None else None}

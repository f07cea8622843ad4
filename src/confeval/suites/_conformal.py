"""What the suites' stored conformal predictors share (``suites/sets/conformal.py``,
``suites/intervals/conformal.py``): q_hat as JSON — a number, or null for +inf (too few
calibration items: every prediction is the whole set or scale) — alone or per group, and the
check of a state's q_hat and alpha as read back from an untrusted file."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["check_alpha", "check_qhats", "qhat_state", "qhat_values"]


def _json(q: float) -> float | None:
    return None if not math.isfinite(q) else float(q)


def qhat_state(qhat: float | Mapping[Any, float]) -> dict:
    """``{"qhat": q}`` for one threshold, ``{"qhat_by_group": {group: q}}`` for Mondrian
    thresholds; +inf as null."""
    if isinstance(qhat, Mapping):
        return {"qhat_by_group": {str(g): _json(q) for g, q in qhat.items()}}
    return {"qhat": _json(qhat)}


def qhat_values(state: Mapping[str, Any]) -> float | dict[str, float]:
    """The thresholds of a state as numbers (null: +inf): one, or by group."""
    if "qhat_by_group" in state:
        return {g: math.inf if q is None else float(q)
                for g, q in state["qhat_by_group"].items()}
    return math.inf if state["qhat"] is None else float(state["qhat"])


def check_alpha(state: Mapping[str, Any]) -> None:
    alpha = state.get("alpha")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
            or not math.isfinite(alpha) or not 0 < alpha < 1:
        raise ValueError(f"state.alpha {alpha!r} is outside (0, 1)")


def check_qhats(state: Mapping[str, Any]) -> None:
    """A ValueError unless the state holds ``qhat`` (a finite number or null) or
    ``qhat_by_group`` (an object of them)."""
    if isinstance(state.get("qhat_by_group"), dict):
        qs = list(state["qhat_by_group"].values())
    elif "qhat" in state:
        qs = [state["qhat"]]
    else:
        raise ValueError("state has neither qhat nor qhat_by_group")
    for q in qs:
        if q is not None and (isinstance(q, bool) or not isinstance(q, (int, float))
                              or not math.isfinite(q)):
            raise ValueError(f"state q_hat {q!r} is not a finite number or null")

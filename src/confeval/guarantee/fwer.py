"""Family-wise error control over the thresholds Learn then Test tests: fixed-sequence (one
walk, or several starts each at ``delta / k``), Bonferroni and Holm — each checking its level
at the door, as MAPIE's ``fwer_control`` does, and each with the level at which a rejected
hypothesis was rejected (what its certified bound must be computed at)."""

from __future__ import annotations

import numpy as np

__all__ = ["FWER_METHODS", "check_fwer", "fwer_levels", "fwer_rejections", "reachable",
           "walk_starts"]

FWER_METHODS = ("fixed-sequence", "bonferroni", "holm")


def check_fwer(delta: float, method: str, starts: int) -> None:
    """A :class:`ValueError` unless ``delta`` is in (0, 1), ``method`` one of
    :data:`FWER_METHODS` and ``starts`` a positive integer."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if method not in FWER_METHODS:
        raise ValueError(f"fwer must be one of {', '.join(FWER_METHODS)}, got {method!r}")
    if isinstance(starts, bool) or not isinstance(starts, (int, np.integer)) or starts < 1:
        raise ValueError(f"starts must be a positive integer, got {starts!r}")


def walk_starts(n_tested: int, k: int) -> range:
    """Where the k walks of a multi-start fixed sequence start among ``n_tested`` ordered
    hypotheses: every ``n_tested // k``-th, as MAPIE places them."""
    if not n_tested or not k:
        return range(0)
    return range(0, k * (n_tested // k), n_tested // k)


def fwer_rejections(p: np.ndarray, tested: np.ndarray, delta: float, method: str,
                    starts: int = 1) -> np.ndarray:
    """Rejections among the tested hypotheses (in the given order) at family-wise ``delta``."""
    rejected = np.zeros(p.size, dtype=bool)
    order = np.flatnonzero(tested)
    if not order.size:
        return rejected
    if method == "fixed-sequence":
        # Each walk is a fixed sequence at delta / k from its start onwards; a false rejection
        # anywhere needs one in some walk, so the union keeps the family-wise level (Bonferroni
        # over the walks). Starts as MAPIE places them: every len // k-th tested hypothesis.
        k = min(starts, order.size)
        for start in walk_starts(order.size, k):
            for i in order[start:]:
                if p[i] > delta / k:
                    break
                rejected[i] = True
    elif method == "bonferroni":
        rejected[order] = p[order] <= delta / order.size
    else:   # Holm: the k-th smallest p-value against delta / (m - k)
        ranked = order[np.argsort(p[order], kind="stable")]
        for k, i in enumerate(ranked):
            if p[i] > delta / (order.size - k):
                break
            rejected[i] = True
    return rejected


def fwer_levels(p: np.ndarray, tested: np.ndarray, delta: float, method: str,
                starts: int = 1) -> np.ndarray:
    """The level each tested hypothesis is tested at by ``method`` (NaN where untested): a
    rejected one's certified bound is the bound at its level, not at ``delta`` —
    ``delta / k`` for a fixed sequence of k walks, ``delta / m`` for Bonferroni over m, and
    for Holm ``delta / (m - r)`` at the r-th smallest p-value (0-based)."""
    levels = np.full(p.size, np.nan)
    order = np.flatnonzero(tested)
    if not order.size:
        return levels
    if method == "fixed-sequence":
        levels[order] = delta / min(starts, order.size)
    elif method == "bonferroni":
        levels[order] = delta / order.size
    else:
        ranked = order[np.argsort(p[order], kind="stable")]
        levels[ranked] = delta / (order.size - np.arange(order.size))
    return levels


def reachable(p: np.ndarray, tested: np.ndarray, method: str, starts: int = 1) -> np.ndarray:
    """The tested hypotheses ``method`` tests first whatever the outcome — where the lowest
    bound the procedure reached is sought when nothing is rejected (what it did, not what
    another procedure might certify on the same data): a fixed sequence's walk
    starts (the rest are tested only after a rejection), for Bonferroni every tested one, for
    Holm the one of the smallest p-value (at ``delta / m``, where Holm begins; nothing
    rejected means it failed)."""
    order = np.flatnonzero(tested)
    first = np.zeros(p.size, dtype=bool)
    if not order.size:
        return first
    if method == "fixed-sequence":
        first[order[list(walk_starts(order.size, min(starts, order.size)))]] = True
    elif method == "bonferroni":
        first[order] = True
    else:
        first[order[np.argmin(p[order])]] = True
    return first

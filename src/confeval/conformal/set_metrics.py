"""What a prediction set is worth: coverage, size and the accuracy they imply."""

from __future__ import annotations

import numpy as np

__all__ = ["set_metrics", "uncertainty_aware_accuracy"]


def uncertainty_aware_accuracy(accuracy: float, mean_set_size: float, n_labels: int) -> float:
    """UAcc of Kostumov et al. (2024): accuracy * sqrt(|Y|) / mean set size.

    It rewards accuracy and penalises large sets; with the full label set as the set, it is
    accuracy / sqrt(|Y|). Can exceed 1 (a very accurate model with small sets).

    Examples
    --------
    >>> round(uncertainty_aware_accuracy(0.8, 1.6, 4), 6)
    1.0
    """
    return float(accuracy * np.sqrt(n_labels) / mean_set_size)


def set_metrics(member: np.ndarray, labels: np.ndarray, probs: np.ndarray) -> dict:
    """Coverage, set size (mean and distribution), singleton hits, coverage by size, UAcc.

    Parameters
    ----------
    member : bool array (n, K) — set membership
    labels : int array (n,) — true label index
    probs : array (n, K) — the probabilities the sets were built from (for top-1 accuracy)
    """
    n, k = member.shape
    covered = member[np.arange(n), labels]
    size = member.sum(axis=1)
    accuracy = float(np.mean(np.argmax(probs, axis=1) == labels))
    counts = np.bincount(size, minlength=k + 1)
    cov_by_size = np.bincount(size, weights=covered, minlength=k + 1)
    singles = size == 1
    return {
        "coverage": float(covered.mean()),
        "set_size": float(size.mean()),
        "uacc": uncertainty_aware_accuracy(accuracy, float(size.mean()), k),
        "size_distribution": {int(s): int(c) for s, c in enumerate(counts) if c},
        "coverage_by_size": {int(s): float(cov_by_size[s] / counts[s])
                             for s in range(k + 1) if counts[s]},
        "singleton_rate": float(singles.mean()),
        "singleton_hit_rate": float(covered[singles].mean()) if singles.any() else None,
        "empty_rate": float((size == 0).mean()),
    }

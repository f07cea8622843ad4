"""Learn then Test when the items come in clusters — the steps of one reasoning chain, the
questions of one document: items of a cluster are not independent, so a binomial test over
items would be too confident. The clusters are the independent draws instead.

For a threshold t, cluster c has a_c items answered and e_c errors among them, e_c in
[0, a_c]. As the item-level test does (the answered count taken as given, as MAPIE's precision
controller does), the answered sets are taken as given — they depend on the confidences only —
and the null "the selective error exceeds the target" reads sum_c E[e_c] >= target A, with
A = sum_c a_c. The e_c are independent across clusters and bounded by a_c, so Hoeffding's
inequality gives the p-value

    p(t) = exp(-2 max(0, target A - E)^2 / sum_c a_c^2),   E = sum_c e_c,

and the family-wise procedures apply unchanged. With clusters of one item it is Hoeffding's
test over the answered items; with k fully answered items per cluster it counts A / k
independent draws. The certified bound of a threshold, the smallest target it rejects at
delta, has a closed form: (E + sqrt(sum_c a_c^2 ln(1/delta) / 2)) / A. Hoeffding only (no
Bentkus term): the e_c are sums of dependent 0/1 losses, not binomial counts.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cluster_counts", "clustered_bound", "clustered_p_values"]


def cluster_counts(conf: np.ndarray, loss: np.ndarray, groups: np.ndarray,
                   candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(answered A, errors E, sum of squared per-cluster answered counts S), one per candidate
    threshold (candidates running high to low: item i is answered from the first candidate
    <= its confidence on)."""
    _, cluster = np.unique(groups, return_inverse=True)
    n_clusters = int(cluster.max()) + 1 if cluster.size else 0
    first_k = np.searchsorted(-candidates, -conf, side="left")
    k = candidates.size
    answered = np.zeros((k + 1, n_clusters))
    errors = np.zeros(k + 1)
    np.add.at(answered, (first_k, cluster), 1.0)
    np.add.at(errors, first_k, loss)
    by_cluster = np.cumsum(answered, axis=0)[:k]
    return by_cluster.sum(axis=1), np.cumsum(errors)[:k], (by_cluster ** 2).sum(axis=1)


def clustered_p_values(answered: np.ndarray, errors: np.ndarray, squares: np.ndarray,
                       target: float) -> np.ndarray:
    """Hoeffding's p-value of "selective error > target" for each candidate (1 where
    nothing is answered)."""
    gap = np.maximum(0.0, target * answered - errors)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.exp(-2.0 * gap ** 2 / squares)
    return np.where(answered > 0, p, 1.0)


def clustered_bound(answered: np.ndarray, errors: np.ndarray, squares: np.ndarray,
                    delta: float) -> np.ndarray:
    """Each candidate's certified bound (1 where nothing is answered or it exceeds 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = (errors + np.sqrt(squares * math.log(1.0 / delta) / 2.0)) / answered
    return np.where(answered > 0, np.minimum(bound, 1.0), 1.0)

"""Numeric helpers shared by every layer (the one softmax of the package)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["softmax"]


def softmax(values: ArrayLike, dtype=np.float64, *, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``, computed in ``dtype``.

    ``exp(z - max z) / sum exp(z - max z)``, the same operations as
    :func:`scipy.special.softmax` (so results are bit-identical to it in float64). NaN entries
    (options a question does not have, rating tokens never scored) get probability 0. The sets
    suite passes ``dtype=np.float32`` to match the published benchmark, which worked in float32.

    Examples
    --------
    >>> softmax([[0.0, 0.0], [0.0, float("nan")]]).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    z = np.asarray(values, dtype=dtype)
    z = np.where(np.isnan(z), -np.inf, z)
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)

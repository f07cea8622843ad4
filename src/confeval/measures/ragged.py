"""Ragged batches for the batched measures: n answers of different lengths held as one array
padded on the right along the token axis, with their lengths.

Every batched white-box measure takes ``(values, lengths)``: ``values`` of shape (n, T) — or
(n, H, T) for attention — where row i's first ``lengths[i]`` entries along the last axis are
answer i's tokens. What lies beyond a row's length is never read as a token (log-probabilities
and relevance there are ignored outright); attention padding must still be finite and >= 0
(:func:`pad_ragged` writes 0), since the attention is validated and multiplied as one array.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["pad_ragged", "token_mask"]


def pad_ragged(sequences: Sequence[ArrayLike], *, fill: float = 0.0
               ) -> tuple[np.ndarray, np.ndarray]:
    """(padded, lengths): n arrays whose last axes have different lengths as one float64 array
    of shape (n, ..., T), T the longest, padded with ``fill``; the leading shapes must agree.

    Examples
    --------
    >>> values, lengths = pad_ragged([[-1.0, -2.0], [-0.5]])
    >>> values.tolist(), lengths.tolist()
    ([[-1.0, -2.0], [-0.5, 0.0]], [2, 1])
    """
    arrays = [np.asarray(s, dtype=np.float64) for s in sequences]
    lengths = np.array([a.shape[-1] if a.ndim else 1 for a in arrays], dtype=np.int64)
    lead = {a.shape[:-1] for a in arrays}
    if len(lead) > 1:
        raise ValueError(f"the sequences' leading shapes differ: {sorted(lead)}")
    shape = (len(arrays), *(lead.pop() if lead else ()), int(lengths.max(initial=0)))
    out = np.full(shape, fill, dtype=np.float64)
    if len(shape) == 2 and arrays:    # one vectorised scatter for plain token sequences
        out[token_mask(lengths, shape[1])] = np.concatenate([a.reshape(-1) for a in arrays])
        return out, lengths
    for i, a in enumerate(arrays):
        out[i, ..., :a.shape[-1]] = a
    return out, lengths


def token_mask(lengths: np.ndarray, width: int) -> np.ndarray:
    """(n, width) booleans: True on each row's first ``lengths[i]`` positions."""
    return np.arange(width) < lengths[:, None]


def checked_lengths(lengths: ArrayLike | None, n: int, width: int) -> np.ndarray:
    """``lengths`` as int64, one per row, each in [1, width]; all rows full when ``None``."""
    if lengths is None:
        if width == 0:
            raise ValueError("every answer needs at least one token")
        return np.full(n, width, dtype=np.int64)
    out = np.asarray(lengths)
    if out.shape != (n,) or (out.size and out.dtype.kind not in "iu"):
        raise ValueError(f"lengths must be {n} integers, one per row; got shape {out.shape}")
    out = out.astype(np.int64, copy=False)
    if out.size and (out.min() < 1 or out.max() > width):
        raise ValueError(f"lengths must be in [1, {width}] (every answer has a token, none "
                         "longer than the padded width)")
    return out

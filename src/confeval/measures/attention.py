"""Attention-weighted white-box measures: CSL and CSL-Next (Lin, Trivedi and Sun, 2024,
"Contextualized Sequence Likelihood"), as MCQA-Eval uses them.

For every attention head h (all layers x all heads), take the attention a_h,t that one readout
position pays to each answer token t, normalise it over the answer, w_h,t = a_h,t / sum_t' a_h,t',
and weight the token log-probabilities l_t with it: CSL_h = sum_t w_h,t l_t (the confidence form
of ContextSL's attention-weighted NLL). The measure averages CSL_h over heads: all heads
(ContextSL's unlabelled ``attnnll|all``) or the top-k heads chosen on labelled calibration rows
(``attnnll@k``; the paper's CSL uses k = 10), see :func:`select_heads`.

The two measures differ only in where the attention comes from:

* **CSL** — the readout is the last token of an eliciting prompt that shows the answer and asks
  whether it is right ("... Decision:"); the l_t come from the answer's own generation pass.
* **CSL-Next** — the readout is the answer's last token in its generation pass.

Normalising per head before averaging follows ContextSL; LM-Polygraph's ``CSL`` averages the raw
attention over heads first and normalises once, which weights heads by how much they attend to
the answer at all. For a one-token answer every head's weight is 1 and CSL = SL (tested).

``csl_per_head_batch`` and ``csl_batch`` take n answers at once: log-probabilities (n, T) and
attention (n, H, T) padded on the right with the answers' lengths (:mod:`.ragged`), validated
once; the single-answer functions are the same formula on one answer.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._numeric import ones
from .._threads import parallel_map, row_parts
from .likelihood import _tokens, token_batch, weighted_logprob
from .ragged import token_mask

__all__ = ["csl", "csl_batch", "csl_per_head", "csl_per_head_batch", "select_heads"]

_MAX, _MIN, _SUM = np.maximum.reduce, np.minimum.reduce, np.add.reduce


def _attention(attention: ArrayLike, shape: tuple[int, ...], *, finite: bool = True,
               signs: bool = True) -> np.ndarray:
    """Attention of shape (*leading, heads, tokens) checked >= 0 everywhere (a NaN fails too)
    and finite; ``finite=False`` (a batch) leaves finiteness to the per-head totals
    (:func:`_divided`), which an infinite weight makes infinite — or NaN in the padding, where
    it is multiplied by 0 — and ``signs=False`` leaves the sign check to the caller (a batch
    checks it chunk by chunk, :func:`_sums_and_totals`)."""
    att = np.asarray(attention, dtype=np.float64)
    if att.ndim == len(shape):   # one head
        att = att[..., None, :]
    if att.ndim != len(shape) + 1 or att.shape[:-2] != shape[:-1] or att.shape[-1] != shape[-1]:
        raise ValueError(f"attention must be (heads, tokens) per answer with {shape[-1]} "
                         f"tokens, got shape {att.shape}")
    if signs and att.size and not (_MIN(att, axis=None) >= 0
                                   and (not finite or _MAX(att, axis=None) < np.inf)):
        raise ValueError(_ATTENTION_RULE)
    return att


_ATTENTION_RULE = "attention weights must be finite and >= 0"


def _check_totals(totals: np.ndarray) -> None:
    if totals.size and not _MAX(totals, axis=None) < np.inf:
        raise ValueError(_ATTENTION_RULE)


def _per_head(lp: np.ndarray, att: np.ndarray) -> np.ndarray:
    """CSL_h = sum_t w_h,t l_t of one answer, w_h = a_h / sum_t a_h (:func:`_divided`)."""
    if _MIN(lp) == -np.inf:
        return _guarded(lp, att, np.ones_like(lp))
    return _divided(lp, att @ lp, _SUM(att, axis=-1), None)


def _per_head_batch(lp: np.ndarray, att: np.ndarray, real: np.ndarray) -> np.ndarray:
    """CSL_h of a padded batch, ``real`` the 0/1 mask of each answer's tokens; the attention's
    signs are checked here."""
    if lp.size and _MIN(lp, axis=None) == -np.inf:
        if att.size and not _MIN(att, axis=None) >= 0:
            raise ValueError(_ATTENTION_RULE)
        return _guarded(lp, att, real)
    sums, totals = _sums_and_totals(lp, att, real)
    return _divided(lp, sums, totals, real)


def _sums_and_totals(lp: np.ndarray, att: np.ndarray, real: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """sum_t a_h,t l_t and sum_t a_h,t over each answer's real tokens, (n, heads) each, from one
    matrix product per answer with its stacked (l, mask) columns, the attention checked >= 0
    on the way: the answers are split between the cores and read in chunks of about a
    megabyte, so that the product reads each chunk from cache after its check. Per answer the
    same product whatever the split, so the results do not depend on it."""
    both = np.stack([lp, real], axis=-1)
    out = np.empty((*att.shape[:-1], 2))
    rows = max(1, _CHUNK_ELEMENTS // max(1, att[0].size if len(att) else 1))

    def run(part: slice) -> bool:
        for start in range(part.start, part.stop, rows):
            chunk = slice(start, min(start + rows, part.stop))
            if not _MIN(att[chunk], axis=None) >= 0:
                return False
            with np.errstate(invalid="ignore"):   # an infinite weight: refused by the totals
                np.matmul(att[chunk], both[chunk], out=out[chunk])
        return True

    if att.size and not all(parallel_map(run, row_parts(len(att), rows))):
        raise ValueError(_ATTENTION_RULE)
    return out[..., 0], out[..., 1]


_CHUNK_ELEMENTS = 1 << 17


def _guarded(lp: np.ndarray, att: np.ndarray, real: np.ndarray) -> np.ndarray:
    """CSL_h where some token is impossible (l = -inf): a token a head ignores adds nothing to
    that head (0 x -inf would be NaN, :func:`.likelihood.weighted_logprob`)."""
    with np.errstate(invalid="ignore"):   # an infinite weight in the padding: NaN
        totals = np.sum(att * real[..., None, :], axis=-1)
    _check_totals(totals)
    weights = att * real[..., None, :] / np.where(totals > 0, totals, 1.0)[..., None]
    uniform = real[..., None, :] / real.sum(axis=-1)[..., None, None]
    weights = np.where((totals > 0)[..., None], weights, uniform)
    return weighted_logprob(weights, lp[..., None, :])


def _divided(lp: np.ndarray, sums: np.ndarray, totals: np.ndarray, real: np.ndarray | None
             ) -> np.ndarray:
    """CSL_h = sums / totals, after refusing an infinite total (an infinite weight); a head
    paying the answer no attention gets uniform weights (SL(norm)) rather than a division by
    zero. ``real``: the batch's token mask, ``None`` for one answer."""
    _check_totals(totals)
    if not totals.size or _MIN(totals, axis=None) > 0:
        return sums / totals
    n_tokens = lp.shape[-1] if real is None else real.sum(axis=-1)
    mean = (lp.sum(axis=-1) / n_tokens)[..., None]
    return np.where(totals > 0, sums / np.where(totals > 0, totals, 1.0), mean)


def csl_per_head(token_logprobs: ArrayLike, attention: ArrayLike) -> np.ndarray:
    """CSL_h = sum_t w_h,t l_t for every head: ``attention`` is (heads, tokens), the raw attention
    of the readout position over the answer's tokens; returns (heads,).

    Examples
    --------
    >>> csl_per_head([-1.0, -3.0], [[1.0, 1.0], [3.0, 1.0]]).tolist()
    [-2.0, -1.5]
    >>> csl_per_head([float("-inf"), -3.0], [[0.0, 1.0], [1.0, 1.0]]).tolist()
    [-3.0, -inf]
    """
    lp = _tokens(token_logprobs)
    return _per_head(lp, _attention(attention, lp.shape))


def csl_per_head_batch(token_logprobs: ArrayLike, attention: ArrayLike,
                       lengths: ArrayLike | None = None) -> np.ndarray:
    """CSL_h of every answer of a padded batch: log-probabilities (n, T), attention
    (n, heads, T), lengths (n,); returns (n, heads).

    Examples
    --------
    >>> csl_per_head_batch([[-1.0, -3.0], [-2.0, 0.0]],
    ...                    [[[1.0, 1.0], [3.0, 1.0]], [[5.0, 7.0], [1.0, 0.0]]],
    ...                    lengths=[2, 1]).tolist()
    [[-2.0, -1.5], [-2.0, -2.0]]
    """
    lp, lengths = token_batch(token_logprobs, lengths)
    real = token_mask(lengths, lp.shape[1]).astype(np.float64)
    return _per_head_batch(lp, _attention(attention, lp.shape, finite=False, signs=False), real)


def _heads(heads: ArrayLike | None, n_heads: int) -> np.ndarray | slice:
    if heads is None:
        return slice(None)
    idx = np.asarray(heads, dtype=np.int64)
    if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= n_heads:
        raise ValueError(f"heads must be indices in [0, {n_heads})")
    return idx


def csl(token_logprobs: ArrayLike, attention: ArrayLike, heads: ArrayLike | None = None
        ) -> float:
    """CSL (or CSL-Next, by where ``attention`` was read): the mean of :func:`csl_per_head` over
    ``heads`` (indices into the attention's rows; all heads when ``None``).

    Examples
    --------
    >>> csl([-1.0, -3.0], [[1.0, 1.0], [3.0, 1.0]])
    -1.75
    >>> csl([-1.0, -3.0], [[1.0, 1.0], [3.0, 1.0]], heads=[1])
    -1.5
    """
    if heads is None:
        value = _csl_all_heads(token_logprobs, attention)
        if value is not None:
            return value
    per_head = csl_per_head(token_logprobs, attention)
    if heads is not None:
        per_head = per_head[_heads(heads, per_head.size)]
    return float(_SUM(per_head) / per_head.size)


def _csl_all_heads(token_logprobs: ArrayLike, attention: ArrayLike) -> float | None:
    """CSL over all heads of one answer with (heads, tokens) attention in the fewest numpy
    calls (checks on the log-probabilities and the head totals in plain floats), or None where
    the general path must decide: a head paying the answer no attention (uniform weights), an
    impossible token (0 x -inf where a head ignores it) or an invalid value (the general path
    raises, with its message). One token: its log-probability, whatever the weights."""
    lp = np.asarray(token_logprobs, dtype=np.float64)
    att = np.asarray(attention, dtype=np.float64)
    if lp.ndim != 1 or att.ndim != 2 or att.shape[1] != lp.size or lp.size == 0:
        return None
    tokens = lp.tolist()
    if not (max(tokens) <= 0 and sum(tokens) > -math.inf):   # NaN, -inf: the general path
        return None
    if not _MIN(att, axis=None) >= 0:
        return None
    totals = att.dot(ones(lp.size))   # a matrix-vector product: cheaper than a reduction
    head_totals = totals.tolist()
    if not (min(head_totals) > 0 and sum(head_totals) < math.inf):
        return None
    if lp.size == 1:
        return tokens[0]
    # sum_h (a_h . l) / (a_h . 1) as one dot product with the reciprocals (two roundings a
    # term instead of one: within a few ulps of the general path's quotients)
    return float(att.dot(lp).dot(1.0 / totals)) / att.shape[0]


def csl_batch(token_logprobs: ArrayLike, attention: ArrayLike, lengths: ArrayLike | None = None,
              heads: ArrayLike | None = None) -> np.ndarray:
    """CSL of every answer of a padded batch (:func:`csl_per_head_batch` averaged over
    ``heads``): (n,)."""
    per_head = csl_per_head_batch(token_logprobs, attention, lengths)
    return per_head[:, _heads(heads, per_head.shape[1])].mean(axis=1)


def select_heads(per_head: ArrayLike, correct: ArrayLike, k: int = 10, *,
                 metric: str = "auroc") -> np.ndarray:
    """The ``k`` heads whose CSL_h best separates right from wrong answers on labelled
    calibration rows (ContextSL's ``attnnll@k``): ``per_head`` is (rows, heads), ranked by
    AUROC or AUARC of each head's column; ties keep the lower head index. The rows used here
    must be excluded from every reported metric.

    Examples
    --------
    >>> per_head = [[0.9, 0.1, 0.5], [0.2, 0.8, 0.5], [0.8, 0.3, 0.4]]
    >>> select_heads(per_head, [1, 0, 1], k=1).tolist()
    [0]
    """
    from .. import metrics as M

    values = np.asarray(per_head, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] != y.size:
        raise ValueError("per_head must be (rows, heads) with one row per correctness label")
    if not 1 <= k <= values.shape[1]:
        raise ValueError(f"k must be in [1, {values.shape[1]}], got {k}")
    score = {"auroc": M.auroc, "auarc": M.auarc}.get(metric)
    if score is None:
        raise ValueError(f"metric must be auroc or auarc, got {metric!r}")
    quality = np.array([score(values[:, h], y) for h in range(values.shape[1])])
    return np.argsort(-quality, kind="stable")[:k]

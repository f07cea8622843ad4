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
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .likelihood import weighted_logprob

__all__ = ["csl", "csl_per_head", "select_heads"]


def _head_weights(attention: ArrayLike, n_tokens: int) -> np.ndarray:
    att = np.asarray(attention, dtype=np.float64)
    if att.ndim == 1:
        att = att[None, :]
    if att.ndim != 2 or att.shape[1] != n_tokens:
        raise ValueError(f"attention must be (heads, tokens) with {n_tokens} tokens, "
                         f"got shape {att.shape}")
    if not np.isfinite(att).all() or (att < 0).any():
        raise ValueError("attention weights must be finite and >= 0")
    total = att.sum(axis=1, keepdims=True)
    # A head that pays no attention to the answer at all has no preference among its tokens:
    # uniform weights (SL(norm)) rather than a division by zero.
    uniform = np.full_like(att, 1.0 / n_tokens)
    return np.divide(att, total, out=uniform, where=total > 0)


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
    lp = np.asarray(token_logprobs, dtype=np.float64)
    if lp.ndim != 1 or lp.size == 0 or np.isnan(lp).any() or (lp > 0).any():
        raise ValueError("token_logprobs must be a non-empty 1-D array of values <= 0")
    return weighted_logprob(_head_weights(attention, lp.size), lp)


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
    per_head = csl_per_head(token_logprobs, attention)
    if heads is None:
        return float(per_head.mean())
    idx = np.asarray(heads, dtype=np.int64)
    if idx.ndim != 1 or idx.size == 0 or idx.min() < 0 or idx.max() >= per_head.size:
        raise ValueError(f"heads must be indices in [0, {per_head.size})")
    return float(per_head[idx].mean())


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

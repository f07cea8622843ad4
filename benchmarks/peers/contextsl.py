"""ContextSL (Lin et al., 2024, "Contextualized sequence likelihood"),
``zlin7/ContextSL@44f3717``, ``pipeline/uq.py::_precompute_attn_nll_helper`` and
``get_attn_nll`` (``attnnll|all``): the attention of every head over the answer's tokens
normalised per head (``v / v.sum(0)`` on a tokens x heads array), each head's
attention-weighted NLL ``(v.T * token_nll).sum(1)``, averaged over heads. The original does
these operations on a pandas frame per sequence; here on the numpy array under it, which is
faster than the original and so the harder reference.
"""

from __future__ import annotations

import numpy as np


def attn_nll_all(token_nll: list[np.ndarray], attention: list[np.ndarray]) -> np.ndarray:
    """``attention[i]`` is (heads, tokens); returns the head-averaged NLL of each sequence."""
    out = []
    for w, att in zip(token_nll, attention):
        v = att.T
        v = v / v.sum(0)
        out.append((v.T * w).sum(1).mean())
    return np.array(out)

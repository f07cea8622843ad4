"""SAR (Duan et al., 2024, "Shifting attention to relevance"), ``jinhaoduan/SAR@d45e01b``,
``src/compute_uncertainty.py::token_sar``: per generation,
``((importance / importance.sum()) * token_wise_entropy).sum()`` where the importance is
1 - similarity (``src/get_tokenwise_importance.py``) and the token-wise entropy the token's
negative log-probability. The original holds torch tensors; here numpy arrays, one call per
sequence as there.
"""

from __future__ import annotations

import numpy as np


def token_sar(token_wise_entropy: list[np.ndarray], importance: list[np.ndarray]) -> np.ndarray:
    scores = []
    for entropy, weight in zip(token_wise_entropy, importance):
        scores.append(((weight / weight.sum()) * entropy).sum())
    return np.array(scores)

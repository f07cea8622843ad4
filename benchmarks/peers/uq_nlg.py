"""UQ-NLG (Lin, Trivedi and Sun, "Generating with confidence"), ``zlin7/UQ-NLG@ecaea91``:
the black-box measures on one Jaccard similarity matrix and the AUARC.

* ``pipeline/uq_bb.py::UQ_computer.get_degreeuq`` — ``np.sum(1 - W, axis=1)`` per question
  (``clustering.py::get_affinity_mat`` returns a Jaccard matrix unchanged);
* ``get_eccentricity`` with ``clustering.py::SpetralClusteringFromLogits.proj`` —
  ``get_L_mat`` (inverse square root of the degree matrix by ``np.linalg.inv``, two matrix
  products), ``get_eig`` (``np.linalg.eigh``, eigenvalues below the threshold), the norm of each
  centred row and the norm of those;
* ``get_spectral_eigv(adjust=True)`` — ``get_eigvs``: 1 - eigenvalues, clipped at 0, summed;
* ``pipeline/eval_uq.py::area_under_accuracy_coverage_curve`` — pandas sort by uncertainty,
  expanding mean, ``sklearn.metrics.auc`` over ``linspace(0, 1, n)``.

Each measure returns what UQ-NLG returns: uncertainties (higher = less confident).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn import metrics


def degree(W: np.ndarray) -> tuple[float, np.ndarray]:
    """(U, per-response negative confidence m - D_jj) of one question."""
    per_response = np.sum(1 - W, axis=1)
    return per_response.mean(), per_response


def _laplacian(W: np.ndarray) -> np.ndarray:
    D = np.diag(np.sum(W, axis=1))
    L = np.linalg.inv(np.sqrt(D)) @ (D - W) @ np.linalg.inv(np.sqrt(D))
    return L.copy()


def eccentricity(W: np.ndarray, threshold: float = 0.9) -> tuple[float, np.ndarray]:
    """(U, per-response distance to the centre of the eigen-embedding) of one question."""
    eigvals, eigvecs = np.linalg.eigh(_laplacian(W))
    projected = eigvecs[:, eigvals < threshold]
    ds = np.linalg.norm(projected - projected.mean(0)[None, :], 2, axis=1)
    return np.linalg.norm(ds, 2), ds


def eigv(W: np.ndarray) -> float:
    """U_EigV = sum_k max(0, 1 - lambda_k)."""
    eigvals = np.linalg.eigh(_laplacian(W))[0]
    return (1 - eigvals).clip(0).sum()


def auarc(uncertainty: np.ndarray, accuracy: np.ndarray) -> float:
    """Area under the accuracy-rejection curve (trapezoid over linspace(0, 1, n))."""
    df = pd.DataFrame({"u": uncertainty, "a": accuracy}).sort_values("u", ascending=True)
    df["amean"] = df["a"].expanding().mean()
    return metrics.auc(np.linspace(0, 1, len(df)), df["amean"])

"""LM-Polygraph (Fadeeva et al.), ``IINemo/lm-polygraph@efea882``, ``src/lm_polygraph/``:

* ``estimators/deg_mat.py::DegMat.U_DegMat`` — W symmetrised, ``trace(m - diag(W 1)) / m^2``;
* ``estimators/eccentricity.py::Eccentricity.U_Eccentricity`` — normalised Laplacian through
  ``np.linalg.inv(np.sqrt(D))``, ``scipy.linalg.eigh``, eigenvalues below 0.9, the norm over
  the per-eigenvector centred norms;
* ``estimators/eig_val_laplacian.py::EigValLaplacian.U_EigVal_Laplacian`` — the same Laplacian,
  ``eigh(eigvals_only=True)``, ``sum(max(0, 1 - lambda))`` as a Python sum;
* ``estimators/max_probability.py::MaximumSequenceProbability`` — ``-np.sum(ll)``;
* ``estimators/perplexity.py::Perplexity`` — ``-np.mean(ll)``;
* ``estimators/token_sar.py::token_level_sar_scores`` and ``TokenSAR`` — relevance
  R = 1 - token similarity normalised to sum 1, ``sum(-ll * R)``;
* ``estimators/csl.py::CSL`` — attention averaged over heads, normalised once, ``-sum(ll * w)``;
* ``ue_metrics/pred_rej_area.py::PredictionRejectionArea`` (max_rejection = 1), its
  normalised PRR (``utils/manager.py``) and ``ue_metrics/risk_cov_curve.py`` (AURC), with
  ``ue_metric.py::normalize``.

Every estimator returns an uncertainty (higher = less confident).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh


def deg_mat(W: np.ndarray) -> float:
    W = (W + np.transpose(W)) / 2
    D = np.diag(W.sum(axis=1))
    return np.trace(len(W) - D) / (len(W) ** 2)


def _laplacian(W: np.ndarray) -> np.ndarray:
    D = np.diag(W.sum(axis=1))
    D_inverse_sqrt = np.linalg.inv(np.sqrt(D))
    return np.eye(D.shape[0]) - D_inverse_sqrt @ W @ D_inverse_sqrt


def eccentricity(W: np.ndarray, thres: float = 0.9) -> float:
    W = (W + np.transpose(W)) / 2
    eigenvalues, eigenvectors = eigh(_laplacian(W))
    keep_mask = eigenvalues < thres
    smallest_eigenvectors = eigenvectors[:, keep_mask].T
    C_Ecc_s_j = (-1) * np.asarray(
        [np.linalg.norm(x - x.mean(0), 2) for x in smallest_eigenvectors])
    return np.linalg.norm(C_Ecc_s_j, 2)


def eig_val_laplacian(W: np.ndarray) -> float:
    W = (W + np.transpose(W)) / 2
    return sum([max(0, 1 - lambda_k) for lambda_k in eigh(_laplacian(W), eigvals_only=True)])


def max_sequence_probability(log_likelihoods: list[np.ndarray]) -> np.ndarray:
    return np.array([-np.sum(ll) for ll in log_likelihoods])


def perplexity(log_likelihoods: list[np.ndarray]) -> np.ndarray:
    return np.array([-np.mean(ll) for ll in log_likelihoods])


def token_sar(log_likelihoods: list[np.ndarray], token_similarity: list[np.ndarray]
              ) -> np.ndarray:
    all_E_t = []
    for ll, similarity in zip(log_likelihoods, token_similarity):
        ll = np.array(ll)
        R_t = 1 - similarity
        R_t_norm = R_t / R_t.sum()
        all_E_t.append(-ll * R_t_norm)
    return np.array([E_t.sum() for E_t in all_E_t])


def csl(log_likelihoods: list[np.ndarray], attention: list[np.ndarray]) -> np.ndarray:
    """``attention[i]`` is (heads, tokens) for sequence i."""
    scores = []
    for i in range(len(log_likelihoods)):
        weights = attention[i].mean(0)
        weights /= weights.sum()
        scores.append(-np.sum(log_likelihoods[i] * weights))
    return np.array(scores)


def _normalize(target: np.ndarray) -> np.ndarray:
    min_t, max_t = np.min(target), np.max(target)
    if np.isclose(min_t, max_t):
        min_t -= 1
        max_t += 1
    return (np.array(target) - min_t) / (max_t - min_t)


def prediction_rejection_area(estimator: np.ndarray, target: np.ndarray) -> float:
    """Area under the prediction-rejection curve, every rejection level (max_rejection 1)."""
    target = _normalize(target)
    ue = np.array(estimator)
    num_obs = len(ue)
    num_rej = int(1.0 * num_obs)
    ue_argsort = np.argsort(ue)
    sorted_metrics = np.array(target)[ue_argsort]
    cumsum = np.cumsum(sorted_metrics)[-num_rej:]
    scores = (cumsum / np.arange((num_obs - num_rej) + 1, num_obs + 1))[::-1]
    return np.sum(scores) / num_rej


def risk_coverage_auc(estimator: np.ndarray, target: np.ndarray) -> float:
    """``ue_metrics/risk_cov_curve.py::RiskCoverageCurveAUC`` (normalize=True): risk 1 - target,
    (estimator, risk) pairs sorted in Python by the estimator, mean of the running mean risk."""
    target = _normalize(target)
    risk = 1 - np.array(target)
    cr_pair = list(zip(estimator, risk))
    cr_pair.sort(key=lambda x: x[0])
    cumulative_risk = np.cumsum([x[1] for x in cr_pair])
    cumulative_risk = cumulative_risk / np.arange(1, len(estimator) + 1)
    return cumulative_risk.mean()


def prediction_rejection_ratio(estimator: np.ndarray, target: np.ndarray) -> float:
    """``utils/manager.py`` + ``ue_metric.py::normalize_metric``: (PRA - random) / (oracle -
    random) with the oracle PRA(-target, target). LM-Polygraph estimates the random score as
    the mean PRA over 1,000 seeded shuffles (``get_random_scores``); here its exact
    expectation, the mean target, so the timing covers the same work as confeval's PRR."""
    score = prediction_rejection_area(estimator, target)
    oracle = prediction_rejection_area(-np.asarray(target), target)
    random = np.mean(_normalize(target))
    return (score - random) / (oracle - random)

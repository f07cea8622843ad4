"""The benchmarks' references (``benchmarks/peers/``, transcriptions of the public code) equal
confeval on random inputs to 1e-12, so that every ratio ``benchmarks/run_all.py`` prints
compares the same numbers. Signs: the peers return uncertainties, confeval confidences."""

import sys
from pathlib import Path

import numpy as np
import pytest

from confeval import measures as MS
from confeval import metrics as M

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from peers import contextsl, lm_polygraph, sar, uq_nlg

TOL = dict(rtol=1e-12, atol=1e-12)


def _matrices(seed, q=20, m=12):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(q):
        w = rng.random((m, m))
        w = (w + w.T) / 2
        np.fill_diagonal(w, 1.0)
        out.append(w)
    return out


def _answers(seed, n=50):
    rng = np.random.default_rng(seed)
    lps = [-rng.exponential(size=rng.integers(1, 15)) for _ in range(n)]
    sims = [rng.random(lp.size) for lp in lps]
    att = [rng.random((6, lp.size)) for lp in lps]
    return lps, sims, att


@pytest.mark.parametrize("seed", range(3))
def test_black_box_peers_equal_confeval(seed):
    for w in _matrices(seed):
        m = len(w)
        u, per_response = uq_nlg.degree(w)
        deg = MS.degree(w)
        np.testing.assert_allclose(per_response, m - m * deg.confidence, **TOL)
        assert u == pytest.approx(deg.uncertainty, rel=1e-12)
        assert lm_polygraph.deg_mat(w) == pytest.approx(deg.uncertainty / m, rel=1e-12)
        u, distance = uq_nlg.eccentricity(w)
        ecc = MS.eccentricity(w)
        np.testing.assert_allclose(distance, -ecc.confidence, **TOL)
        assert u == pytest.approx(ecc.uncertainty, rel=1e-12)
        assert lm_polygraph.eccentricity(w) == pytest.approx(ecc.uncertainty, rel=1e-12)
        eig = MS.eigenvalue(w).uncertainty
        assert uq_nlg.eigv(w) == pytest.approx(eig, rel=1e-12)
        assert lm_polygraph.eig_val_laplacian(w) == pytest.approx(eig, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_white_box_peers_equal_confeval(seed):
    lps, sims, att = _answers(seed)
    relevance = [1 - s for s in sims]
    padded, lengths = MS.pad_ragged(lps)
    sl = MS.sequence_likelihood_batch(padded, lengths)
    np.testing.assert_allclose(lm_polygraph.max_sequence_probability(lps), -sl, **TOL)
    np.testing.assert_allclose(lm_polygraph.perplexity(lps),
                               -MS.normalised_likelihood_batch(padded, lengths), **TOL)
    tsar = MS.token_sar_batch(padded, MS.pad_ragged(relevance)[0], lengths)
    np.testing.assert_allclose(lm_polygraph.token_sar(lps, sims), -tsar, **TOL)
    np.testing.assert_allclose(sar.token_sar([-lp for lp in lps], relevance), -tsar, **TOL)
    np.testing.assert_allclose([-MS.token_sar(lp, r) for lp, r in zip(lps, relevance)],
                               sar.token_sar([-lp for lp in lps], relevance), **TOL)
    csl = MS.csl_batch(padded, MS.pad_ragged(att)[0], lengths)
    np.testing.assert_allclose(contextsl.attn_nll_all([-lp for lp in lps], att), -csl, **TOL)
    # LM-Polygraph averages the heads' raw attention before normalising: confeval's CSL of
    # that one averaged head
    np.testing.assert_allclose(lm_polygraph.csl(lps, att),
                               [-MS.csl(lp, a.mean(0)) for lp, a in zip(lps, att)], **TOL)


@pytest.mark.parametrize("seed", range(3))
def test_selective_peers_equal_confeval_without_ties(seed):
    rng = np.random.default_rng(seed)
    confidence = rng.random(2000)
    correct = (rng.random(2000) < confidence).astype(float)
    assert lm_polygraph.prediction_rejection_area(-confidence, correct) == pytest.approx(
        M.auarc(confidence, correct), rel=1e-12)
    assert uq_nlg.auarc(-confidence, correct) == pytest.approx(
        M.auarc(confidence, correct, integration="trapezoid"), rel=1e-12)
    assert lm_polygraph.risk_coverage_auc(-confidence, correct) == pytest.approx(
        M.aurc(confidence, 1 - correct), rel=1e-12)
    assert lm_polygraph.prediction_rejection_ratio(-confidence, correct) == pytest.approx(
        M.prediction_rejection_ratio(confidence, correct), rel=1e-12)

"""Black-box measures against direct transcriptions of their definitions (hand cases) and the
UQ-NLG TriviaQA demo's printed Jaccard numbers."""

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from confeval.measures import (
    MEASURES,
    degree,
    eccentricity,
    eigenvalue,
    jaccard_similarity,
    option_confidences,
)
from confeval.metrics import auarc, auroc

DEMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "uq-nlg-triviaqa-demo"


def _random_similarity(m, seed):
    rng = np.random.default_rng(seed)
    w = rng.random((m, m))
    w = (w + w.T) / 2
    np.fill_diagonal(w, 1.0)
    return w


def test_jaccard_is_the_word_set_overlap():
    texts = ["The bank.", "the Bank", "river bank", ""]
    w = jaccard_similarity(texts)
    for i, j in itertools.product(range(4), repeat=2):
        a, b = set(texts[i].lower().split()), set(texts[j].lower().split())
        expected = 1.0 if i == j else (len(a & b) / len(a | b) if a | b else 0.0)
        assert w[i, j] == pytest.approx(expected)
    assert w[0, 1] == pytest.approx(1 / 3)  # "bank." is not "bank"


@pytest.mark.parametrize("seed", range(3))
def test_degree_eccentricity_eigenvalue_match_their_definitions(seed):
    w = _random_similarity(7, seed)
    m = 7
    d = w.sum(axis=1)
    res = degree(w)
    np.testing.assert_allclose(res.confidence, d / m)
    assert res.uncertainty == pytest.approx(np.mean(m - d))
    # transcription: L = D^-1/2 (D - W) D^-1/2 with explicit inverses
    big_d = np.diag(d)
    lap = np.linalg.inv(np.sqrt(big_d)) @ (big_d - w) @ np.linalg.inv(np.sqrt(big_d))
    values, vectors = np.linalg.eigh(lap)
    kept = vectors[:, values < 0.9]
    dist = np.linalg.norm(kept - kept.mean(axis=0), axis=1)
    ecc = eccentricity(w)
    np.testing.assert_allclose(-ecc.confidence, dist, atol=1e-12)
    assert ecc.uncertainty == pytest.approx(np.linalg.norm(dist))
    eig = eigenvalue(w)
    assert eig.uncertainty == pytest.approx(np.clip(1 - values, 0, None).sum())
    assert (eig.confidence == -eig.uncertainty).all()


def test_identical_answers_get_exactly_identical_eccentricity():
    texts = ["Appaloosa"] * 6 + ["Tombstone", "Tombstone film", "Appaloosa film"]
    res = eccentricity(jaccard_similarity(texts))
    assert len(set(res.confidence[:6].tolist())) == 1  # exact, not 1e-16 apart
    assert res.confidence[6] != res.confidence[0]


def test_edge_cases_and_errors():
    assert degree(np.ones((4, 4))).uncertainty == 0.0
    assert eigenvalue(np.eye(4)).uncertainty == pytest.approx(4.0)  # four components
    assert eigenvalue(np.ones((4, 4))).uncertainty == pytest.approx(1.0)
    for bad in (np.ones((2, 3)), np.full((2, 2), 2.0), np.array([[1, np.nan], [np.nan, 1]])):
        with pytest.raises(ValueError):
            degree(bad)
    assert MEASURES["deg_j"].label == "Deg(J)" and MEASURES["ecc_c"].label == "Ecc(C)"
    assert len(MEASURES) == 14
    with pytest.raises(ValueError, match="choose from"):
        MEASURES["entropy-of-vibes"]


def _demo():
    if not DEMO.is_dir():
        pytest.skip(f"needs the shared data at {DEMO}")
    data = json.loads((DEMO / "demo_data.json").read_text())[:10]
    printed = (DEMO / "demo_notebook_outputs.txt").read_text()
    rows: dict[str, list[float]] = {}
    block = printed.split("### cell 7 output\n")[2].split("###")[0]
    for line in block.splitlines():
        parts = line.split()
        if parts and "_" in parts[0]:
            rows.setdefault(parts[0], []).extend(float(x) for x in parts[1:] if x != "\\")
    acc = np.array([rows[q["id"]][:20] for q in data])

    def cell(n):
        text = printed.split(f"### cell {n} output\n")[1].split("###")[0]
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(\S+)\s+([-\d.]+)$", text, flags=re.M)}

    return data, acc, cell


@pytest.mark.shared_data
def test_uq_nlg_demo_jaccard_numbers_reproduce():
    """UQ-NLG's demo (first 10 TriviaQA questions, 10 generations, Jaccard): Deg(J) and EigV(J)
    overall (cell 12, AUARC against expected accuracy) and per response (cells 13-14, AUARC
    and AUROC against each generation's correctness, averaged over the 10 generations), with
    the oracle, blind and accuracy rows, to 1e-6 — AUARC with UQ-NLG's trapezoid and input-order
    ties. Ecc(J) is tie-dependent there (module docstring of confeval.measures.similarity)."""
    data, acc, cell = _demo()
    overall, individual_arc, individual_roc = cell(12), cell(13), cell(14)
    expected_acc = acc.mean(axis=1)
    sims = [jaccard_similarity(q["generations"]["text_cleaned"][:10]) for q in data]

    def area(c, a):
        return auarc(c, a, integration="trapezoid", ties="input-order")

    assert expected_acc.mean() == pytest.approx(overall["acc"], abs=1e-6)
    assert area(expected_acc, expected_acc) == pytest.approx(overall["oracle"], abs=1e-6)
    # "blind" is a constant confidence: every order equally likely, i.e. the tie-averaged area
    blind = auarc(np.zeros(10), expected_acc, integration="trapezoid")
    assert blind == pytest.approx(overall["blind"], abs=1e-6)
    for name, fn in (("degree", degree), ("spectral_eigv_clip", eigenvalue)):
        key = f"generations|{name}|jaccard"
        results = [fn(w) for w in sims]
        u = np.array([r.uncertainty for r in results])
        assert area(-u, expected_acc) == pytest.approx(overall[key], abs=1e-6), key
        conf = np.array([r.confidence for r in results])           # (questions, generations)
        arcs = [area(conf[:, i], acc[:, i]) for i in range(10)]
        rocs = [auroc(conf[:, i], acc[:, i]) for i in range(10)]
        assert np.mean(arcs) == pytest.approx(individual_arc[key], abs=1e-6), key
        assert np.nanmean(rocs) == pytest.approx(individual_roc[key], abs=1e-6), key
    oracle = np.mean([area(acc[:, i], acc[:, i]) for i in range(10)])
    assert oracle == pytest.approx(individual_arc["oracle"], abs=1e-6)


def test_algorithm_1_equals_one_matrix_per_option():
    """Reusing the samples' matrix and adding each option's row gives exactly what building
    each (n + 1) x (n + 1) matrix and running the measures on it gives (option = last row)."""
    from confeval.measures import option_confidences

    samples = ["paris", "paris france", "lyon", "paris", "the city of paris"]
    options = ["paris", "lyon france", "berlin"]
    base = jaccard_similarity(samples)
    cross = np.array([[jaccard_similarity([o, s])[0, 1] for s in samples] for o in options])
    got = option_confidences(base, cross)
    for i, option in enumerate(options):
        full = jaccard_similarity([*samples, option])
        assert got["degree"][i] == pytest.approx(degree(full).confidence[-1], abs=1e-12)
        assert got["eccentricity"][i] == pytest.approx(eccentricity(full).confidence[-1],
                                                       abs=1e-9)
    assert got["degree"][0] > got["degree"][2]  # "paris" is central, "berlin" isolated
    with pytest.raises(ValueError, match="cross_w must be"):
        option_confidences(base, cross[:, :2])


def test_hostile_matrices_are_refused_in_one_clear_error():
    """A zero row (D^{-1/2} infinite), an asymmetric matrix (eigh reads one triangle), text in
    the matrix: a ValueError naming the problem, never NaN or numpy's LinAlgError."""
    zero_row = np.array([[1.0, 0.0], [0.0, 0.0]])
    for fn in (degree, eccentricity, eigenvalue):
        with pytest.raises(ValueError, match=r"diagonal must be positive.*W\[1, 1\] = 0.0"):
            fn(zero_row)
    lopsided = np.array([[1.0, 0.9], [0.1, 1.0]])
    assert degree(lopsided).confidence.tolist() == [0.95, 0.55]  # degree needs no symmetry
    for fn in (eccentricity, eigenvalue):
        with pytest.raises(ValueError, match=r"symmetric.*W\[0, 1\] = 0.9 but W\[1, 0\] = 0.1"):
            fn(lopsided)
    with pytest.raises(ValueError, match="symmetric"):
        option_confidences(lopsided, [[0.5, 0.5]])
    with pytest.raises(ValueError, match="matrix of numbers"):
        degree([["a", "b"], ["c", "d"]])


def test_missing_texts_are_empty_answers_not_words():
    w = jaccard_similarity([None, float("nan"), "none", "NaN"])
    assert w.tolist() == [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0],
                          [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]


def test_options_equal_by_construction_get_exactly_equal_measures():
    """Two options with the same text have the same similarity row: their Deg and Ecc are
    the very same floats (a last-bit difference would be read as a ranking)."""
    samples = ["paris", "paris france", "lyon", "the city of paris", "marseille"]
    options = ["paris", "lyon", "paris", "rome"]
    w = jaccard_similarity(samples + options)
    n = len(samples)
    out = option_confidences(w[:n, :n], w[n:, :n])
    assert out["degree"][0] == out["degree"][2]
    assert out["eccentricity"][0] == out["eccentricity"][2]
    assert out["eccentricity"][0] != out["eccentricity"][3]

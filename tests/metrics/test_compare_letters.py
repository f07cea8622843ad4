"""The compact letters of ``confeval compare`` (:func:`confeval.metrics.compare.
significance_groups`): equal to Piepho's insert-absorb as confeval computed it before (the
transcription below) and to a brute-force search for every maximal set of models no test
separates, on every small pattern; equal to R's multcompView ``multcompLetters`` on the
examples of its help page (its 43 judges: the same 24 groups); known answers on structured
patterns of 300 models; and, where the maximal groups explode, a bound and a cover with the
letters' defining property."""

import itertools

import numpy as np
import pytest

from confeval.metrics import compare as C


def _insert_absorb(order, separated):
    """Piepho's (2004) insert-absorb, pair by pair, as confeval computed the letters before
    they were computed model by model (exponential in the worst case): the reference for
    "the letters did not change"."""
    position = {name: i for i, name in enumerate(order)}
    groups = [(1 << len(order)) - 1]
    for pair in sorted(separated, key=lambda p: sorted(position[x] for x in p)):
        a, b = (1 << position[x] for x in pair)
        split = set()
        for g in groups:
            if g & a and g & b:
                split.update((g & ~a, g & ~b))
            else:
                split.add(g)
        split.discard(0)
        kept = []
        for g in sorted(split, key=lambda m: -m.bit_count()):
            if not any(g & h == g for h in kept):
                kept.append(g)
        groups = kept
    members = sorted([i for i in range(len(order)) if g >> i & 1] for g in groups)
    return _named(order, members)


def _named(order, members):
    """Letters a, b, ... of groups (lists of positions, in order) for each model."""
    letters = C._letters(len(members))
    return {name: "".join(letters[k] for k, m in enumerate(members) if i in m)
            for i, name in enumerate(order)}


def _brute_force(order, separated):
    """Every subset of models with no separated pair inside, the maximal ones, in
    lexicographic order of their positions."""
    k = len(order)
    apart = {tuple(sorted(order.index(x) for x in pair)) for pair in separated}
    cliques = [set(c) for r in range(1, k + 1) for c in itertools.combinations(range(k), r)
               if not any(p in apart for p in itertools.combinations(c, 2))]
    maximal = [c for c in cliques if not any(c < d for d in cliques)]
    return _named(order, sorted(sorted(c) for c in maximal))


def _random_pattern(rng, k):
    names = [f"m{i}" for i in range(k)]
    density = rng.random()
    return names, {frozenset(p) for p in itertools.combinations(names, 2)
                   if rng.random() < density}


def test_letters_equal_insert_absorb_and_the_brute_force_on_small_patterns():
    rng = np.random.default_rng(36)
    for _ in range(400):
        names, separated = _random_pattern(rng, int(rng.integers(0, 10)))
        letters = C.significance_groups(names, separated)
        assert letters == _insert_absorb(names, separated) == _brute_force(names,
                                                                           separated)


def test_letters_equal_insert_absorb_on_60_models_of_a_rank_order_with_noise():
    """Models whose separation mostly follows their values (a threshold with noise per
    pair): the kind of pattern that took insert-absorb 80 s at 160 models (60 here)."""
    rng = np.random.default_rng(7)
    values = np.sort(rng.random(60))
    names = [f"m{i:03d}" for i in range(60)]
    separated = {frozenset((names[i], names[j])) for i, j in itertools.combinations(range(60), 2)
                 if abs(values[i] - values[j]) > 0.15 + 0.05 * rng.random()}
    assert C.significance_groups(names, separated) == _insert_absorb(names, separated)


def test_letters_of_multcompview_help_page_examples():
    """multcompLetters(dif3) and multcompLetters(dif4) as its help page prints them."""
    dif3 = {frozenset("BC")}   # A-B FALSE, A-C FALSE, B-C TRUE
    assert C.significance_groups(list("ABC"), dif3) == {"A": "ab", "B": "a", "C": "b"}
    # dif4 = c(a-b = .01, a-c = .02, b-d = .03, a-d = 1) < 0.05
    dif4 = {frozenset("ab"), frozenset("ac"), frozenset("bd")}
    assert C.significance_groups(list("abcd"), dif4) == {"a": "a", "b": "b", "c": "bc",
                                                          "d": "ac"}


JUDGES = """\
AARONSON,L.H.    5.7  7.9  7.7  7.3  7.1  7.4  7.1  7.1  7.1  7.0  8.3  7.8  abcdefg
ALEXANDER,J.M.   6.8  8.9  8.8  8.5  7.8  8.1  8.0  8.0  7.8  7.9  8.5  8.7  abhijkl
ARMENTANO,A.J.   7.2  8.1  7.8  7.8  7.5  7.6  7.5  7.5  7.3  7.4  7.9  7.8  abcdefghijmnop
BERDON,R.I.      6.8  8.8  8.5  8.8  8.3  8.5  8.7  8.7  8.4  8.5  8.8  8.7  hkl
BRACKEN,J.J.     7.3  6.4  4.3  6.5  6.0  6.2  5.7  5.7  5.1  5.3  5.5  4.8  qr
BURNS,E.B.       6.2  8.8  8.7  8.5  7.9  8.0  8.1  8.0  8.0  8.0  8.6  8.6  abhijkl
CALLAHAN,R.J.   10.6  9.0  8.9  8.7  8.5  8.5  8.5  8.5  8.6  8.4  9.1  9.0  s
COHEN,S.S.       7.0  5.9  4.9  5.1  5.4  5.9  4.8  5.1  4.7  4.9  6.8  5.0  q
DALY,J.J.        7.3  8.9  8.9  8.7  8.6  8.5  8.4  8.4  8.4  8.5  8.8  8.8  hikl
DANNEHY,J.F.     8.2  7.9  6.7  8.1  7.9  8.0  7.9  8.1  7.7  7.8  8.5  7.9  hijmno
DEAN,H.H.        7.0  8.0  7.6  7.4  7.3  7.5  7.1  7.2  7.1  7.2  8.4  7.7  abcdefgjmnopt
DEVITA,H.J.      6.5  8.0  7.6  7.2  7.0  7.1  6.9  7.0  7.0  7.1  6.9  7.2  cdfpt
DRISCOLL,P.J.    6.7  8.6  8.2  6.8  6.9  6.6  7.1  7.3  7.2  7.2  8.1  7.7  acdefp
GRILLO,A.E.      7.0  7.5  6.4  6.8  6.5  7.0  6.6  6.8  6.3  6.6  6.2  6.5  tuv
HADDEN,W.L.JR.   6.5  8.1  8.0  8.0  7.9  8.0  7.9  7.8  7.8  7.8  8.4  8.0  abceghijmn
HAMILL,E.C.      7.3  8.0  7.4  7.7  7.3  7.3  7.3  7.2  7.1  7.2  8.0  7.6  abcdefgjmnoptu
HEALEY.A.H.      8.0  7.6  6.6  7.2  6.5  6.5  6.8  6.7  6.4  6.5  6.9  6.7  ptuw
HULL,T.C.        7.7  7.7  6.7  7.5  7.4  7.5  7.1  7.3  7.1  7.3  8.1  7.4  cdefgmnoptu
LEVINE,I.        8.3  8.2  7.4  7.8  7.7  7.7  7.7  7.8  7.5  7.6  8.0  8.0  abcefghijmno
LEVISTER,R.L.    9.6  6.9  5.7  6.6  6.9  6.6  6.2  6.0  5.8  5.8  7.2  6.0  wx
MARTIN,L.F.      7.1  8.2  7.7  7.1  6.6  6.6  6.7  6.7  6.8  6.8  7.5  7.3  cdfptu
MCGRATH,J.F.     7.6  7.3  6.9  6.8  6.7  6.8  6.4  6.3  6.3  6.3  7.4  6.6  dptuw
MIGNONE,A.F.     6.6  7.4  6.2  6.2  5.4  5.7  5.8  5.9  5.2  5.8  4.7  5.2  rv
MISSAL,H.M.      6.2  8.3  8.1  7.7  7.4  7.3  7.3  7.3  7.2  7.3  7.8  7.6  abcdefgjmno
MULVEY,H.M.      7.5  8.7  8.5  8.6  8.5  8.4  8.5  8.5  8.4  8.4  8.7  8.7  hikls
NARUK,H.J.       7.8  8.9  8.7  8.9  8.7  8.8  8.9  9.0  8.8  8.9  9.0  9.0  kls
O'BRIEN,F.J.     7.1  8.5  8.3  8.0  7.9  7.9  7.8  7.8  7.8  7.7  8.3  8.2  abceghijklmn
O'SULLIVAN,T.J.  7.5  9.0  8.9  8.7  8.4  8.5  8.4  8.3  8.3  8.3  8.8  8.7  hikls
PASKEY,L.        7.5  8.1  7.7  8.2  8.0  8.1  8.2  8.4  8.0  8.1  8.4  8.1  abeghijklmn
RUBINOW,J.E.     7.1  9.2  9.0  9.0  8.4  8.6  9.1  9.1  8.9  9.0  8.9  9.2  k
SADEN.G.A.       6.6  7.4  6.9  8.4  8.0  7.9  8.2  8.4  7.7  7.9  8.4  7.5  bghijmn
SATANIELLO,A.G.  8.4  8.0  7.9  7.9  7.8  7.8  7.6  7.4  7.4  7.4  8.1  7.9  abcefgijmno
SHEA,D.M.        6.9  8.5  7.8  8.5  8.1  8.2  8.4  8.5  8.1  8.3  8.7  8.3  hijklm
SHEA,J.F.JR.     7.3  8.9  8.8  8.7  8.4  8.5  8.5  8.5  8.4  8.4  8.8  8.8  hikl
SIDOR,W.J.       7.7  6.2  5.1  5.6  5.6  5.9  5.6  5.6  5.3  5.5  6.3  5.3  qrx
SPEZIALE,J.A.    8.5  8.3  8.1  8.3  8.4  8.2  8.2  8.1  7.9  8.0  8.0  8.2  hijklmns
SPONZO,M.J.      6.9  8.3  8.0  8.1  7.9  7.9  7.9  7.7  7.6  7.7  8.1  8.0  abceghijmn
STAPLETON,J.F.   6.5  8.2  7.7  7.8  7.6  7.7  7.7  7.7  7.5  7.6  8.5  7.7  abcefghijmno
TESTO,R.J.       8.3  7.3  7.0  6.8  7.0  7.1  6.7  6.7  6.7  6.7  8.0  7.0  dfoptuw
TIERNEY,W.L.JR.  8.3  8.2  7.8  8.3  8.4  8.3  7.7  7.6  7.5  7.7  8.1  7.9  hijlmn
WALL,R.A.        9.0  7.0  5.9  7.0  7.0  7.2  6.9  6.9  6.5  6.6  7.6  6.6  uw
WRIGHT,D.B.      7.1  8.4  8.4  7.7  7.5  7.7  7.8  8.2  8.0  8.1  8.3  8.1  abceghijklmn
ZARRILLI,K.J.    8.6  7.4  7.0  7.5  7.5  7.7  7.4  7.2  6.9  7.0  7.8  7.1  cdefgnoptu
"""
"""R's datasets::USJudgeRatings (lawyers' ratings of 43 Connecticut judges, New Haven Register
1977), 12 ratings each, and the letters multcompView's help page prints for
``multcompLetters(dist(USJudgeRatings), compare = ">", threshold = median(dist(...)))``."""


def test_letters_have_multcompviews_groups_for_its_43_judges():
    """Judges are separated when their Euclidean distance is above the median of the 903
    distances (computed exactly in tenths: the ratings have one decimal). Our 24 groups are
    multcompView's; its sortCols orders the groups that start at one judge by one
    bubble-sort pass over its own column order, so three of its letters (d, e, f) name
    other groups than ours: the letters agree once each group is named by its members."""
    rows = [line.split() for line in JUDGES.splitlines()]
    names = [r[0] for r in rows]
    ratings = np.array([[float(v) for v in r[1:13]] for r in rows])
    expected = {r[0]: r[13] for r in rows}
    # the transcription is R's data: its column means as R prints them
    np.testing.assert_allclose(ratings.mean(axis=0)[:3], [7.437209, 8.020930, 7.516279],
                               atol=5e-7)
    tenths = np.rint(ratings * 10).astype(np.int64)
    squared = ((tenths[:, None, :] - tenths[None, :, :]) ** 2).sum(axis=2)
    upper = np.triu_indices(len(names), 1)
    median = np.median(squared[upper])
    assert (squared[upper] == median).sum() == 1   # no tie at the threshold
    separated = {frozenset((names[i], names[j])) for i, j in zip(*upper)
                 if squared[i, j] > median}
    letters = C.significance_groups(names, separated)

    def groups(by_name):
        labels = sorted({c for v in by_name.values() for c in v})
        return sorted(tuple(n for n in names if c in by_name[n]) for c in labels)

    assert len(groups(expected)) == 24 and groups(letters) == groups(expected)
    same = [n for n in names if not set(expected[n]) & set("def")]
    assert {n: letters[n] for n in same} == {n: expected[n] for n in same}


def test_letters_of_300_models_on_structured_patterns():
    """Known answers: separated beyond 7 ranks (293 windows of 8 models), blocks of 10 (30
    groups, one letter each), nothing separated, everything separated."""
    k, width = 300, 7
    names = [f"m{i:03d}" for i in range(k)]
    letters = C._letters(k)
    band = {frozenset((names[i], names[j])) for i, j in itertools.combinations(range(k), 2)
            if j - i > width}
    got = C.significance_groups(names, band, max_groups=1000)
    assert got == {names[j]: "".join(letters[i] for i in range(max(0, j - width),
                                                               min(j, k - 1 - width) + 1))
                   for j in range(k)}
    assert got["m000"] == "a" and got["m007"] == "abcdefgh" and got["m299"] == letters[292]
    blocks = {frozenset((names[i], names[j])) for i, j in itertools.combinations(range(k), 2)
              if i // 10 != j // 10}
    assert C.significance_groups(names, blocks) == {names[j]: letters[j // 10]
                                                    for j in range(k)}
    assert set(C.significance_groups(names, set()).values()) == {"a"}
    every = {frozenset(p) for p in itertools.combinations(names, 2)}
    assert C.significance_groups(names, every, max_groups=k) == dict(zip(names, letters))
    assert letters[26:28] == ["aa", "ab"] and letters[-1] == "kn"


def _check_cover(together, groups):
    """Every group is a set of models pairwise together; two models share a group exactly
    when they are together; every model has one; no group lies inside another."""
    k = together.shape[0]
    share = (groups.T.astype(int) @ groups.astype(int)) > 0
    assert (share == (together | np.eye(k, dtype=bool))).all()
    size = groups.sum(axis=1)
    inside = (groups.astype(int) @ groups.T.astype(int)) == size[:, None]
    np.fill_diagonal(inside, False)
    assert not inside.any()


def test_maximal_groups_beyond_the_bound_stop_at_once_and_the_cover_holds():
    """Every other pair of neighbours separated (2^150 maximal groups for 300 models):
    the enumeration stops as soon as it passes the bound, naming it; the cover has the
    letters' defining property with 65 groups."""
    k = 300
    together = np.ones((k, k), dtype=bool)
    for i in range(0, k, 2):
        together[i, i + 1] = together[i + 1, i] = False
    with pytest.raises(C.TooManyGroups, match=r"more than 100 groups .*\(among the first "
                                              r"14 of 300 models\)"):
        C.maximal_groups(together)
    cover = C.covering_groups(together)
    _check_cover(together, cover)
    assert len(cover) == 65
    # the band's cover is its maximal groups
    band = np.abs(np.subtract.outer(range(k), range(k))) <= 7
    assert (C.covering_groups(band) == C.maximal_groups(band, max_groups=1000)).all()


def test_the_cover_has_the_defining_property_on_random_patterns():
    rng = np.random.default_rng(5)
    for _ in range(150):
        k = int(rng.integers(1, 40))
        upper = np.triu(rng.random((k, k)) < rng.random(), 1)
        together = ~(upper | upper.T)
        _check_cover(together, C.covering_groups(together))


def test_a_comparison_beyond_the_bound_shows_a_cover_and_says_so(monkeypatch):
    """Three models, a and c separated (two maximal groups): with the bound at 1 the
    letters are the cover's (here the same groups) and a warning says why."""
    rng = np.random.default_rng(8)
    base = rng.normal(0, 0.01, 500)
    reps = np.column_stack([0.9 + base + rng.normal(0, 0.01, 500), 0.85 + base
                            + rng.normal(0, 0.05, 500), 0.8 + base + rng.normal(0, 0.01, 500)])
    table = C.compare_metric(reps, [0.9, 0.85, 0.8], list("abc"), higher_is_better=True)
    assert {n: r["group"] for n, r in table["models"].items()} == {"a": "a", "b": "ab",
                                                                    "c": "b"}
    assert "warnings" not in table
    monkeypatch.setattr(C, "MAX_GROUPS", 1)
    table = C.compare_metric(reps, [0.9, 0.85, 0.8], list("abc"), higher_is_better=True)
    assert {n: r["group"] for n, r in table["models"].items()} == {"a": "a", "b": "ab",
                                                                    "c": "b"}
    assert table["warnings"] == [
        "letters: more than 1 maximal groups of models that no test separates (multcompView's "
        "letters); shown instead are 2 groups covering every pair no test separates (clique "
        "growing, Gramm et al. 2007): models share a letter exactly when no test separates "
        "them, but not every maximal group has its own letter"]

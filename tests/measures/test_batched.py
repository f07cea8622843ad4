"""Every batched measure equals its single-answer form on random ragged batches (hypothesis),
to 1e-12: padded log-probabilities, relevance and attention with lengths; stacks of similarity
matrices with sizes (what lies beyond a size is garbage and must be ignored); identical rows
tie exactly; the split of a batch between cores changes no bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confeval import measures as MS
from confeval.measures import similarity
from confeval.measures.ragged import pad_ragged

TOL = dict(rtol=1e-12, atol=1e-12)


def _answers(rng, n, max_len, *, impossible=0.1):
    lengths = rng.integers(1, max_len + 1, size=n)
    lps = []
    for length in lengths:
        lp = -rng.exponential(size=length)
        lp[rng.random(length) < impossible] = -np.inf
        lps.append(lp)
    return lps


def _relevance(rng, lps):
    out = []
    for lp in lps:
        r = rng.random(lp.size)
        r[rng.random(lp.size) < 0.3] = 0.0
        if rng.random() < 0.2:
            r[:] = 0.0   # no relevant token: uniform weights
        out.append(r)
    return out


def _attention(rng, lps, heads):
    out = []
    for lp in lps:
        a = rng.random((heads, lp.size))
        a[rng.random((heads, lp.size)) < 0.3] = 0.0
        a[rng.random(heads) < 0.2] = 0.0   # heads that ignore the answer
        out.append(a)
    return out


def _garbage_padding(values, lengths, rng):
    """Padding filled with values a measure must never read (NaN for log-probabilities)."""
    out = values.copy()
    mask = np.arange(values.shape[-1]) >= lengths[:, None]
    out[mask] = np.nan if values.ndim == 2 else 0.0
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), max_len=st.integers(1, 9),
       heads=st.integers(1, 5))
def test_white_box_batches_equal_single_calls(seed, n, max_len, heads):
    rng = np.random.default_rng(seed)
    lps = _answers(rng, n, max_len)
    rel = _relevance(rng, lps)
    att = _attention(rng, lps, heads)
    lp_pad, lengths = pad_ragged(lps)
    lp_pad = _garbage_padding(lp_pad, lengths, rng)
    rel_pad, _ = pad_ragged(rel)
    att_pad, _ = pad_ragged(att)
    pairs = [
        (MS.sequence_likelihood_batch(lp_pad, lengths), [MS.sequence_likelihood(x) for x in lps]),
        (MS.normalised_likelihood_batch(lp_pad, lengths),
         [MS.normalised_likelihood(x) for x in lps]),
        (MS.perplexity_batch(lp_pad, lengths), [MS.perplexity(x) for x in lps]),
        (MS.token_sar_batch(lp_pad, rel_pad, lengths),
         [MS.token_sar(x, r) for x, r in zip(lps, rel)]),
        (MS.csl_batch(lp_pad, att_pad, lengths), [MS.csl(x, a) for x, a in zip(lps, att)]),
        (MS.csl_batch(lp_pad, att_pad, lengths, heads=[0]),
         [MS.csl(x, a, heads=[0]) for x, a in zip(lps, att)]),
    ]
    for batched, single in pairs:
        np.testing.assert_allclose(batched, single, **TOL)
    np.testing.assert_allclose(MS.csl_per_head_batch(lp_pad, att_pad, lengths),
                               [MS.csl_per_head(x, a) for x, a in zip(lps, att)], **TOL)


def test_white_box_batches_equal_their_definitions():
    rng = np.random.default_rng(7)
    lps = [-rng.exponential(size=k) for k in (1, 3, 5)]
    rel = [rng.random(lp.size) for lp in lps]
    att = [rng.random((4, lp.size)) for lp in lps]
    lp_pad, lengths = pad_ragged(lps)
    np.testing.assert_allclose(MS.token_sar_batch(lp_pad, pad_ragged(rel)[0], lengths),
                               [np.sum(r / r.sum() * lp) for lp, r in zip(lps, rel)], **TOL)
    per_head = MS.csl_per_head_batch(lp_pad, pad_ragged(att)[0], lengths)
    for row, lp, a in zip(per_head, lps, att):
        np.testing.assert_allclose(row, (a / a.sum(1, keepdims=True)) @ lp, **TOL)


def test_batch_errors_name_the_row_and_the_rule():
    with pytest.raises(ValueError, match=r"<= 0 and not NaN \(row 1\)"):
        MS.sequence_likelihood_batch([[-1.0, -1.0], [-1.0, 0.5]])
    # a positive value in the padding is never read
    assert MS.sequence_likelihood_batch([[-1.0, 9.0]], lengths=[1]).tolist() == [-1.0]
    with pytest.raises(ValueError, match=r"lengths must be in \[1, 2\]"):
        MS.sequence_likelihood_batch([[-1.0, -1.0]], lengths=[3])
    with pytest.raises(ValueError, match="lengths must be 1 integers"):
        MS.sequence_likelihood_batch([[-1.0, -1.0]], lengths=[1.5])
    with pytest.raises(ValueError, match="relevance must have"):
        MS.token_sar_batch([[-1.0, -1.0]], [[1.0]])
    with pytest.raises(ValueError, match="relevance must be one finite value"):
        MS.token_sar_batch([[-1.0, -1.0]], [[1.0, np.inf]])
    with pytest.raises(ValueError, match="attention weights must be finite"):
        MS.csl_batch([[-1.0, -1.0]], [[[1.0, np.nan]]])
    with pytest.raises(ValueError, match="leading shapes differ"):
        pad_ragged([np.ones((2, 3)), np.ones((3, 1))])


def _stack(rng, q, m, *, duplicates=True):
    """q random symmetric similarity matrices of sizes in [1, m], garbage beyond each size,
    some with identical responses (equal rows), and each one's own matrix."""
    sizes = rng.integers(1, m + 1, size=q)
    stack = rng.random((q, m, m)) * 5 - 2   # out of range: must be ignored
    own = []
    for k, s in enumerate(sizes):
        w = rng.random((s, s))
        w = (w + w.T) / 2
        np.fill_diagonal(w, 1.0)
        if duplicates and s > 2 and rng.random() < 0.5:   # response 1 repeats response 0
            w[1, :] = w[0, :]
            w[:, 1] = w[:, 0]
            w[0, 1] = w[1, 0] = w[1, 1] = 1.0
        stack[k, :s, :s] = w
        own.append(w)
    return stack, sizes, own


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), q=st.integers(1, 8), m=st.integers(1, 9))
def test_similarity_batches_equal_single_matrices(seed, q, m):
    rng = np.random.default_rng(seed)
    stack, sizes, own = _stack(rng, q, m)
    for batched_fn, single_fn in ((MS.degree_batch, MS.degree),
                                  (MS.eccentricity_batch, MS.eccentricity),
                                  (MS.eigenvalue_batch, MS.eigenvalue)):
        out = batched_fn(stack, sizes)
        for k, (s, w) in enumerate(zip(sizes, own)):
            single = single_fn(w)
            np.testing.assert_allclose(out.confidence[k, :s], single.confidence, **TOL)
            assert np.isnan(out.confidence[k, s:]).all()
            assert out.uncertainty[k] == pytest.approx(single.uncertainty, rel=1e-12, abs=1e-12)


def test_identical_responses_tie_exactly_in_batches_and_single_calls():
    rng = np.random.default_rng(3)
    stack, sizes, own = _stack(rng, 40, 8)
    out = MS.eccentricity_batch(stack, sizes)
    tied = 0
    for k, (s, w) in enumerate(zip(sizes, own)):
        if s > 2 and (w[0] == w[1]).all():
            tied += 1
            assert out.confidence[k, 0] == out.confidence[k, 1]
            single = MS.eccentricity(w).confidence
            assert single[0] == single[1]
    assert tied > 5


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), q=st.integers(1, 6), n=st.integers(1, 8),
       k=st.integers(1, 5))
def test_option_confidences_batch_equals_one_question_at_a_time(seed, q, n, k):
    rng = np.random.default_rng(seed)
    stack, sizes, own = _stack(rng, q, n)
    cross = rng.random((q, k, n))
    if k > 1:
        cross[:, 1] = cross[:, 0]   # two options with the same text
    out = MS.option_confidences_batch(stack, cross, sizes)
    for j, (s, w) in enumerate(zip(sizes, own)):
        single = MS.option_confidences(w, cross[j, :, :s])
        for name in ("degree", "eccentricity"):
            np.testing.assert_allclose(out[name][j], single[name], **TOL)
        if k > 1:
            assert out["eccentricity"][j, 0] == out["eccentricity"][j, 1]


def test_the_split_between_cores_changes_no_bit(monkeypatch):
    rng = np.random.default_rng(11)
    stack, sizes, _ = _stack(rng, 300, 12)
    cross = rng.random((300, 4, 12))
    monkeypatch.setattr(similarity, "_QUESTIONS_PER_THREAD", 10**9)   # one thread
    alone = (MS.eccentricity_batch(stack, sizes), MS.eigenvalue_batch(stack, sizes),
             MS.option_confidences_batch(stack, cross, sizes))
    monkeypatch.setattr(similarity, "_QUESTIONS_PER_THREAD", 7)
    monkeypatch.setattr(similarity, "_cores", lambda: 5)   # uneven parts, more than the machine
    split = (MS.eccentricity_batch(stack, sizes), MS.eigenvalue_batch(stack, sizes),
             MS.option_confidences_batch(stack, cross, sizes))
    for a, b in zip(alone[:2], split[:2]):
        np.testing.assert_array_equal(a.confidence, b.confidence)
        np.testing.assert_array_equal(a.uncertainty, b.uncertainty)
    for name in ("degree", "eccentricity"):
        np.testing.assert_array_equal(alone[2][name], split[2][name])


def test_stack_errors_name_the_matrix():
    w = np.ones((2, 3, 3))
    w[1, 0, 2] = 0.5
    with pytest.raises(ValueError, match="symmetric for a spectral measure in matrix 1"):
        MS.eccentricity_batch(w)
    with pytest.raises(ValueError, match=r"W\[1\]\[2, 2\] = 0.0"):
        MS.degree_batch(np.stack([np.eye(3), np.diag([1.0, 1.0, 0.0])]))
    with pytest.raises(ValueError, match=r"sizes must be in \[1, 3\]"):
        MS.degree_batch(w, sizes=[0, 3])
    # beyond a size nothing is read: the asymmetric entry is outside matrix 1's 2 x 2
    assert MS.eccentricity_batch(w, sizes=[3, 2]).uncertainty.shape == (2,)


def test_identical_rows_are_found_in_bounded_chunks(monkeypatch):
    """The exact row comparison runs over chunks of stacks (memory bounded whatever q and m):
    the ties found do not depend on the chunk size."""
    rng = np.random.default_rng(12)
    stack, sizes, _ = _stack(rng, 60, 7)
    whole = MS.eccentricity_batch(stack, sizes)
    monkeypatch.setattr(similarity, "_COMPARISON_ELEMENTS", 1)   # one stack per chunk
    one_by_one = MS.eccentricity_batch(stack, sizes)
    np.testing.assert_array_equal(whole.confidence, one_by_one.confidence)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_tokens=st.integers(1, 80))
def test_single_call_fast_paths_equal_the_general_forms(seed, n_tokens):
    """TokenSAR's Python loop (answers up to 64 tokens), CSL's all-heads path and Deg's one-
    matrix path give what the batched forms give, impossible tokens and zero weights included."""
    rng = np.random.default_rng(seed)
    lp = -rng.exponential(size=n_tokens)
    relevance = rng.random(n_tokens) * (rng.random(n_tokens) < 0.7)
    if rng.random() < 0.3:
        lp[rng.integers(n_tokens)] = -np.inf
    att = rng.random((4, n_tokens)) * (rng.random((4, n_tokens)) < 0.8)
    for single, batch in [
        (MS.token_sar(lp, relevance), MS.token_sar_batch(lp[None], relevance[None])[0]),
        (MS.csl(lp, att), MS.csl_batch(lp[None], att[None])[0]),
    ]:
        assert single == pytest.approx(batch, rel=1e-12, abs=1e-12) or single == batch
    w = rng.random((n_tokens % 9 + 1,) * 2)
    w = (w + w.T) / 2
    np.fill_diagonal(w, 1.0)
    got, want = MS.degree(w), MS.degree_batch(w[None])
    np.testing.assert_array_equal(got.confidence, want.confidence[0])
    assert got.uncertainty == want.uncertainty[0]


def test_csl_chunks_and_threads_change_no_bit(monkeypatch):
    """The batched CSL reads the attention in chunks split between the cores: one chunk on one
    thread, or three-answer chunks on five threads, the same numbers; a negative weight in any
    chunk is refused."""
    from confeval import _threads
    from confeval.measures import attention

    rng = np.random.default_rng(5)
    lps = _answers(rng, 200, 9, impossible=0.0)
    lp_pad, lengths = pad_ragged(lps)
    att_pad = pad_ragged(_attention(rng, lps, 6))[0]
    monkeypatch.setattr(attention, "_CHUNK_ELEMENTS", 10**9)
    monkeypatch.setattr(attention, "row_parts", lambda n, rows: [slice(0, n)])
    alone = MS.csl_per_head_batch(lp_pad, att_pad, lengths)
    monkeypatch.setattr(attention, "_CHUNK_ELEMENTS", 3 * 6 * lp_pad.shape[1])
    monkeypatch.setattr(attention, "row_parts",
                        lambda n, rows: _threads.row_parts(n, rows, workers=5))
    np.testing.assert_array_equal(MS.csl_per_head_batch(lp_pad, att_pad, lengths), alone)
    att_pad[150, 2, 0] = -1e-9
    with pytest.raises(ValueError, match="attention weights must be finite and >= 0"):
        MS.csl_per_head_batch(lp_pad, att_pad, lengths)


def test_single_call_fast_paths_refuse_what_the_general_forms_refuse():
    for lp, relevance, message in [([-1.0, np.nan], [1.0, 1.0], "<= 0 and not NaN"),
                                   ([-1.0, 0.5], [1.0, 1.0], "<= 0 and not NaN"),
                                   ([-1.0, -1.0], [1.0, np.inf], "relevance must be"),
                                   ([-1.0, -1.0], [1.0, -0.1], "relevance must be"),
                                   ([-1.0, -1.0], [1.0], "relevance must be")]:
        with pytest.raises(ValueError, match=message):
            MS.token_sar(lp, relevance)
    for att in ([[1.0, np.inf]], [[1.0, -1.0]], [[1.0, np.nan]]):
        with pytest.raises(ValueError, match="attention weights must be finite"):
            MS.csl([-1.0, -1.0], att)
    for lp, att, lengths in [([[-1.0, 0.0]], [[[1.0, np.inf]]], None),      # in the answer
                             ([[-1.0, 0.0]], [[[1.0, np.inf]]], [1]),       # in the padding
                             ([[-np.inf, 0.0]], [[[1.0, np.inf]]], [2])]:   # guarded form
        with pytest.raises(ValueError, match="attention weights must be finite"):
            MS.csl_batch(lp, att, lengths)
    assert MS.csl([-1.0, -3.0], [[0.0, 0.0], [1.0, 1.0]]) == -2.0   # a silent head: uniform
    for w in ([[1.0, -0.1], [-0.1, 1.0]], [[1.0, 1.5], [1.5, 1.0]], [[1.0, np.nan], [0, 1]]):
        with pytest.raises(ValueError, match=r"similarities in \[0, 1\]"):
            MS.degree(w)

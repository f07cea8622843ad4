"""The numpy MLP's Adam: first moments that decay below the smallest normal float32 are set to
0 (for speed, docs/performance.md); the trained weights must be those of plain float32 Adam
with every moment kept, subnormal ones included — with numpy's update and with the compiled one
(numba, the extra ``fast``), which must also give R2CCP's and CHR's networks bit for bit."""

import importlib.util
import math

import numpy as np
import pytest

from confeval._numeric import softmax
from confeval.conformal import _mlp
from confeval.conformal._mlp import _mlp_backward as backward
from confeval.conformal._mlp import _views, adam_train, init_mlps, mlp_forward

_TINY = np.finfo(np.float32).tiny


def _plain_adam(sizes, X, output_grad, *, epochs, batch_size, lr, rngs):
    """Adam in float32 as adam_train computes it, operation by operation, with nothing
    flushed; also counts the steps at which some first moment was subnormal."""
    flat = init_mlps(sizes, rngs)
    weights, biases = _views(flat, sizes)
    grad = np.zeros_like(flat)
    grad_w, grad_b = _views(grad, sizes)
    m, v = np.zeros_like(flat), np.zeros_like(flat)
    step, subnormal_steps = 0, 0
    models = np.arange(X.shape[0])[:, None]
    for epoch in range(epochs):
        rate = 0.5 * lr * (1 + math.cos(math.pi * epoch / epochs))
        order = np.stack([rng.permutation(X.shape[1]) for rng in rngs])
        for start in range(0, X.shape[1], batch_size):
            idx = order[:, start:start + batch_size]
            out, acts = mlp_forward(weights, biases, X[models, idx])
            backward(weights, acts, output_grad(out, idx), grad_w, grad_b)
            step += 1
            m = m * np.float32(0.9) + grad * np.float32(1 - 0.9)
            v = v * np.float32(0.999) + grad * grad * np.float32(1 - 0.999)
            denominator = np.sqrt(v / np.float32(1 - 0.999 ** step)) + np.float32(1e-8)
            flat -= (m / denominator) * np.float32(rate / (1 - 0.9 ** step))
            subnormal_steps += bool(((m != 0) & (np.abs(m) < _TINY)).any())
    return weights, biases, subnormal_steps


ROUTES = ["numpy", pytest.param("compiled", marks=pytest.mark.skipif(
    importlib.util.find_spec("numba") is None,
    reason="the compiled update needs numba (pip install 'confeval[fast]')"))]


@pytest.mark.parametrize("route", ROUTES)
def test_flushing_subnormal_first_moments_changes_no_weight(route, monkeypatch):
    monkeypatch.setattr(_mlp, "_ADAM_ROUTE", route)
    rng = np.random.default_rng(3)
    n, d, bins = 256, 4, 12
    X = rng.normal(size=(2, n, d)).astype(np.float32)   # two networks side by side
    target = rng.integers(0, bins, size=(2, n))
    models = np.arange(2)[:, None]

    def output_grad(logits, idx):   # softmax cross-entropy
        p = softmax(logits, logits.dtype)
        p[models, np.arange(idx.shape[1])[None, :], target[models, idx]] -= 1
        return p

    options = dict(epochs=60, batch_size=16, lr=3e-2)
    sizes = [d, 48, 48, bins]
    flushed = adam_train(sizes, X, output_grad, cosine=True,
                         rngs=[np.random.default_rng(s) for s in (1, 2)], **options)
    weights, biases, subnormal_steps = _plain_adam(
        sizes, X, output_grad, rngs=[np.random.default_rng(s) for s in (1, 2)], **options)
    assert subnormal_steps > 100   # the case the flush is for did arise
    for got, want in zip(flushed[0] + flushed[1], weights + biases):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("method", ["r2ccp", "chr"])
def test_the_compiled_update_trains_the_same_networks(method, monkeypatch):
    """R2CCP (cosine schedule) and CHR (dropout, rows in order) on seeded data, two seeds side
    by side: every weight equal bit for bit whichever update ran."""
    pytest.importorskip("numba", reason="the compiled update needs numba")
    from confeval.conformal.regression import make_method

    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 5))
    y = np.clip(np.round(X[:, 0] + 3 + rng.normal(size=300)), 1, 5)
    nets = {}
    for route in ("numpy", "compiled"):
        monkeypatch.setattr(_mlp, "_ADAM_ROUTE", route)
        models = [make_method(method, alpha=0.1, seed=s, low=1, high=5, epochs=6)
                  for s in (1, 2)]
        type(models[0]).fit_many(models, [X, X[::-1]], [y, y[::-1]])
        nets[route] = [w for m in models for w in m.net[0] + m.net[1]]
    for a, b in zip(nets["numpy"], nets["compiled"], strict=True):
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))


def test_the_route_follows_the_setting_and_the_work(monkeypatch):
    pytest.importorskip("numba", reason="the compiled update needs numba")
    monkeypatch.setattr(_mlp, "_ADAM_ROUTE", "numpy")
    assert _mlp._adam_kernel_for(10**12) is None
    monkeypatch.setattr(_mlp, "_ADAM_ROUTE", "compiled")
    assert _mlp._adam_kernel_for(1) is _mlp._adam_kernel()[0] is not None
    monkeypatch.setattr(_mlp, "_ADAM_ROUTE", "auto")
    assert _mlp._adam_kernel_for(_mlp._COMPILED_ADAM_WORK) is not None
    # compiled in this process already: used for short trainings too
    assert _mlp._adam_kernel_for(1) is not None
    _mlp._adam_kernel.cache_clear()
    try:   # not compiled yet: a short training keeps numpy's update
        assert _mlp._adam_kernel_for(1) is None
    finally:
        _mlp._adam_kernel()


def test_without_numba_the_compiled_route_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(_mlp, "_ADAM_ROUTE", "compiled")
    monkeypatch.setattr(_mlp, "_adam_kernel", lambda: (None, "numba is not installed"))
    with pytest.raises(RuntimeError, match=r"needs numba .*confeval\[fast\].*not installed"):
        _mlp._adam_kernel_for(1)


@pytest.mark.parametrize("step", [15, 16], ids=["no flush", "flush"])
def test_one_update_gives_the_same_bits_on_both_routes_and_flushes_subnormal_moments(step):
    """Moments at the edges — subnormal of either sign, -0.0, exactly the smallest normal,
    ordinary values — through one update: flat, m and v bit for bit alike on both routes; at a
    flush step (every 16th) each first moment left subnormal (or -0.0) becomes +0.0, at
    another step it stays."""
    pytest.importorskip("numba", reason="the compiled update needs numba")
    tiny = np.finfo(np.float32).tiny
    m0 = np.array([[3e-39, -3e-39, 1e-45, -0.0, tiny, 0.02, -0.5, 0.0]], dtype=np.float32)
    grad = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.3, -1e-3, 2.0]], dtype=np.float32)
    v0 = np.array([[1e-6, 2e-7, 0.0, 1e-3, 1e-9, 0.01, 0.5, 0.0]], dtype=np.float32)
    flat0 = np.linspace(-1, 1, m0.size, dtype=np.float32)[None]
    out = {}
    for name, kernel in (("numpy", None), ("compiled", _mlp._adam_kernel()[0])):
        flat, m, v = flat0.copy(), m0.copy(), v0.copy()
        scratch = (np.empty_like(flat), m.view(np.int32), np.empty(flat.shape, np.int32))
        _mlp._adam_step(kernel, flat, grad, m, v, scratch, step, 1e-3)
        out[name] = (flat, m, v)
    for a, b in zip(out["numpy"], out["compiled"]):
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))
    m = out["compiled"][1][0]
    subnormal_or_zero = np.abs(m) < tiny
    if step % 16 == 0:
        assert (m[:4].view(np.int32) == 0).all()   # +0.0, every one
    else:
        assert subnormal_or_zero[:3].all() and (m[:3] != 0).all()   # decayed, kept


def test_a_numpy_learning_rate_trains_the_same_networks_on_both_routes(monkeypatch):
    """``lr`` as a numpy float64 is taken as a Python float (numpy would otherwise multiply the
    float32 update by it in float64, which the compiled loop does not)."""
    pytest.importorskip("numba", reason="the compiled update needs numba")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1, 64, 4)).astype(np.float32)

    def output_grad(out, idx):
        return out - 1

    nets = {}
    for route in ("numpy", "compiled"):
        monkeypatch.setattr(_mlp, "_ADAM_ROUTE", route)
        nets[route] = adam_train([4, 16, 5], X, output_grad, epochs=3, batch_size=8,
                                 lr=np.float64(1e-3), rngs=[np.random.default_rng(1)],
                                 cosine=True)
    numpy_net, compiled_net = nets["numpy"], nets["compiled"]
    for a, b in zip(numpy_net[0] + numpy_net[1], compiled_net[0] + compiled_net[1]):
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))

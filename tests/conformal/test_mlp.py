"""The numpy MLP's Adam: first moments that decay below the smallest normal float32 are set to
0 (for speed, docs/performance.md); the trained weights must be those of plain float32 Adam
with every moment kept, subnormal ones included."""

import math

import numpy as np

from confeval._numeric import softmax
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


def test_flushing_subnormal_first_moments_changes_no_weight():
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

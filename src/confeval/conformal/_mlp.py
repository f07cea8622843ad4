"""A small numpy ReLU network trained with Adam, for the interval methods that need one (R2CCP,
CHR). Several networks of one shape (one per seed) train side by side as one batched array
program. Written by hand because the reference packages need torch (docs/design.md)."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable

import numpy as np

__all__ = ["adam_train", "init_mlps", "mlp_forward", "predict_mlp"]


def _views(flat: np.ndarray, sizes: list[int]) -> tuple[list, list]:
    """(weights, biases) of S stacked networks as views into ``flat`` (S, n_params)."""
    weights, biases, offset = [], [], 0
    for fan_in, fan_out in itertools.pairwise(sizes):
        weights.append(flat[:, offset:offset + fan_in * fan_out].reshape(-1, fan_in, fan_out))
        offset += fan_in * fan_out
        biases.append(flat[:, offset:offset + fan_out])
        offset += fan_out
    return weights, biases


def init_mlps(sizes: list[int], rngs: list[np.random.Generator]) -> np.ndarray:
    """Parameters of one ReLU network per Generator, stacked as a float32 (S, n_params)
    array, each initialised like PyTorch's ``nn.Linear`` (uniform in +-1/sqrt(fan_in)) from
    its own seeded Generator, layer by layer."""
    total = sum(a * b + b for a, b in itertools.pairwise(sizes))
    flat = np.empty((len(rngs), total), dtype=np.float32)
    weights, biases = _views(flat, sizes)
    for s, rng in enumerate(rngs):
        for w, b in zip(weights, biases):
            bound = 1 / math.sqrt(w.shape[1])
            w[s] = rng.uniform(-bound, bound, size=w.shape[1:])
            b[s] = rng.uniform(-bound, bound, size=b.shape[1:])
    return flat


def mlp_forward(weights: list, biases: list, X: np.ndarray, *, dropout: float = 0.0,
                rngs: list[np.random.Generator] | None = None) -> tuple[np.ndarray, list]:
    """Outputs (S, n, k) of S stacked networks on inputs X (S, n, d), and the activations
    the backward pass needs. With ``dropout`` (training only) each hidden unit is zeroed with
    that probability and the survivors scaled by 1/(1 - dropout), network s drawing its
    masks from ``rngs[s]``."""
    acts = [X]
    h = X
    for i, (w, b) in enumerate(zip(weights, biases)):
        h = np.matmul(h, w)
        h += b[:, None, :]
        if i < len(weights) - 1:
            np.maximum(h, 0.0, out=h)
            if dropout:
                keep = np.stack([rng.random(h.shape[1:]) >= dropout for rng in rngs])
                h = h * keep * np.float32(1 / (1 - dropout))
        acts.append(h)
    return h, acts


def _mlp_backward(weights, acts, grad_out, grad_w, grad_b, dropout: float = 0.0) -> None:
    """Write the parameter gradients into ``grad_w``/``grad_b`` (views of one flat buffer).
    A hidden unit passes gradient where its (post-dropout) activation is positive, scaled by
    the dropout factor."""
    g = grad_out
    scale = np.float32(1 / (1 - dropout))
    for i in range(len(weights) - 1, -1, -1):
        np.matmul(acts[i].transpose(0, 2, 1), g, out=grad_w[i])
        grad_b[i][...] = g.sum(axis=1)
        if i:
            # g W^T as (W g^T)^T: OpenBLAS runs R2CCP's 32 x 256 by 256 x 256 product ~1.5x
            # faster in this orientation (44 against 65 us), and on this machine's OpenBLAS
            # both sum in the same order (the judge sweep's numbers are identical). The mask
            # multiplication writes g back row-major, so grad_b's sums run as before.
            g_t = np.matmul(weights[i], g.transpose(0, 2, 1))
            g = np.multiply(g_t.transpose(0, 2, 1), acts[i] > 0, order="C")
            if dropout:
                g *= scale


def adam_train(sizes: list[int], X: np.ndarray, output_grad: Callable, *, epochs: int,
               batch_size: int, lr: float, rngs: list[np.random.Generator], cosine: bool,
               dropout: float = 0.0, shuffle: bool = True) -> tuple[list, list]:
    """Train S ReLU MLPs at once with Adam, float32 throughout like the torch references.

    ``X`` is (S, n, d): one training set per network, all of the same size (the seeds of one
    sweep), so one batched matrix product serves them all — on small networks the per-call
    overhead, not the arithmetic, dominates, and training ten seeds together costs little
    more than one. Network s draws its initial weights and each epoch's shuffle from
    ``rngs[s]``, exactly as if trained alone. ``output_grad(out, idx)`` returns d(loss)/d(out)
    for the mini-batch rows ``idx`` (S, b). ``cosine`` anneals the rate per epoch from ``lr``
    to 0; otherwise it is constant. ``dropout`` applies to the hidden layers while training;
    ``shuffle=False`` visits the rows in order every epoch (a PyTorch DataLoader's default).
    Returns the trained stacked (weights, biases).
    """
    flat = init_mlps(sizes, rngs)
    weights, biases = _views(flat, sizes)
    grad = np.zeros_like(flat)
    grad_w, grad_b = _views(grad, sizes)
    # Adam in float32, like torch. The first moment m of a parameter that gets no gradient (a
    # dead ReLU unit's) decays into the subnormal range, where x86 float32 arithmetic (products,
    # quotients, even comparisons) takes a microcode assist, ~50x slower: most of R2CCP's
    # training time went there. Decaying by 0.9 and rounded to the subnormal grid it never
    # reaches 0 (k * 2^-149 for k <= 4 is a fixed point), so those parameters stayed slow for
    # good. Every _FLUSH_EVERY steps, an m below the smallest normal float32 (2^-126, ~1.2e-38)
    # is set to 0 instead, by integer operations on its bits (no float assist). Such an m moves
    # no weight (its update, m / (sqrt(v) + 1e-8) times a rate <= 1e-3 / (1 - 0.9), is below
    # 1e-28, under half an ulp of any weight above ~1e-21) and vanishes in the next non-zero
    # gradient's term (0.1 * grad) unless that gradient is itself below ~1e-30: the trained
    # weights are the ones Adam gives with m kept (tested) and the judge sweep's 770 numbers
    # are unchanged (docs/performance.md).
    m, v = np.zeros_like(flat), np.zeros_like(flat)
    scratch = (np.empty_like(flat), m.view(np.int32), np.empty(flat.shape, dtype=np.int32))
    step = 0
    # a Python float: with float32 arrays numpy rounds it to float32 (a numpy float64 would
    # multiply in float64), as the compiled update does
    lr = float(lr)
    X = X.astype(np.float32)
    n_models, n = X.shape[0], X.shape[1]
    models = np.arange(n_models)[:, None]
    # the same update compiled as one loop when numba is installed and the training is long
    # enough to repay compiling (_adam_kernel_for): the same float32 numbers bit for bit
    kernel = _adam_kernel_for(flat.size * epochs * -(-n // batch_size))
    for epoch in range(epochs):
        rate = 0.5 * lr * (1 + math.cos(math.pi * epoch / epochs)) if cosine else lr
        order = (np.stack([rng.permutation(n) for rng in rngs]) if shuffle
                 else np.tile(np.arange(n), (n_models, 1)))
        for start in range(0, n, batch_size):
            idx = order[:, start:start + batch_size]
            out, acts = mlp_forward(weights, biases, X[models, idx], dropout=dropout, rngs=rngs)
            _mlp_backward(weights, acts, output_grad(out, idx), grad_w, grad_b, dropout)
            step += 1
            _adam_step(kernel, flat, grad, m, v, scratch, step, rate)
    return weights, biases


_BETA1, _BETA2, _EPS = 0.9, 0.999, 1e-8


def _adam_step(kernel, flat: np.ndarray, grad: np.ndarray, m: np.ndarray, v: np.ndarray,
               scratch: tuple, step: int, rate: float) -> None:
    """Adam's update number ``step`` of ``flat`` in place (first and second moments ``m``,
    ``v``; ``rate`` the epoch's learning rate, a Python float), flushing subnormal first
    moments every :data:`_FLUSH_EVERY` steps: with the compiled ``kernel`` if given, else in
    numpy's passes (``scratch``: a float32 array, ``m`` viewed as int32 and an int32 array,
    all of ``flat``'s shape). The same float32 numbers either way, bit for bit."""
    flush = step % _FLUSH_EVERY == 0
    if kernel is not None:
        kernel(flat.reshape(-1), grad.reshape(-1), m.reshape(-1), v.reshape(-1), _TINY,
               *_float32(_BETA1, 1 - _BETA1, _BETA2, 1 - _BETA2, 1 - _BETA2 ** step, _EPS,
                         rate / (1 - _BETA1 ** step)), flush)
        return
    tmp, m_bits, exponent = scratch
    m *= _BETA1   # m = beta1 * m + (1 - beta1) * grad
    np.multiply(grad, 1 - _BETA1, out=tmp)
    m += tmp
    if flush:
        _flush_subnormal(m_bits, exponent)
    v *= _BETA2   # v = beta2 * v + (1 - beta2) * grad ** 2
    np.multiply(grad, grad, out=tmp)
    tmp *= 1 - _BETA2
    v += tmp
    # flat -= rate * m_hat / (sqrt(v_hat) + eps), in place
    np.divide(v, 1 - _BETA2 ** step, out=tmp)
    np.sqrt(tmp, out=tmp)
    tmp += _EPS
    np.divide(m, tmp, out=tmp)
    tmp *= rate / (1 - _BETA1 ** step)
    flat -= tmp


_FLUSH_EVERY = 16
"""Steps between flushes of the subnormal first moments: a moment crossing into the subnormal
range slows a few steps at most; flushing every step would cost more than that."""

_ADAM_ROUTE = "auto"
"""Adam's update: ``"auto"`` compiled when numba is installed and the training is long enough
(:data:`_COMPILED_ADAM_WORK`) or the kernel is compiled in this process already, ``"numpy"``,
or ``"compiled"`` (numba required; tests)."""

_COMPILED_ADAM_WORK = 500_000_000
"""Parameters x steps from which the compiled update repays compiling it: it saves ~1.7 ns a
parameter and step (numpy's 13 passes ~0.22-0.28 ms a step over R2CCP's 80,178 parameters,
the loop ~0.08 ms; 2026-11-27), and importing numba and compiling take ~0.9 s. One R2CCP
seed is 5.8 x 10^8 (7,200 steps)."""

_TINY = np.float32(np.finfo(np.float32).tiny)


def _float32(*values: float) -> tuple[np.float32, ...]:
    """Python floats as numpy's float32 update takes them (a Python scalar with a float32
    array is rounded to float32 first)."""
    return tuple(np.float32(x) for x in values)


def _adam_kernel_for(work: int):
    """The compiled update for a training of ``work`` parameters x steps, or ``None``."""
    if _ADAM_ROUTE == "numpy" or (_ADAM_ROUTE == "auto" and work < _COMPILED_ADAM_WORK
                                  and not _adam_kernel.cache_info().currsize):
        return None
    kernel, why = _adam_kernel()
    if kernel is None and _ADAM_ROUTE == "compiled":
        raise RuntimeError(f"the compiled Adam update needs numba (pip install "
                           f"'confeval[fast]'): {why}")
    return kernel


@functools.cache
def _adam_kernel():
    from .._jit import compiled

    return compiled(_adam_update, _warm_adam)


def _adam_update(flat, grad, m, v, tiny, beta1, one_minus_beta1, beta2, one_minus_beta2,
                 correction2, eps, step_size, flush):   # pragma: no cover (compiled)
    """adam_train's numpy update, parameter by parameter: the same float32 operations in the
    same order (each result cast back to float32: numba would keep some in float64, which
    rounds once where numpy rounds twice), so the same numbers bit for bit. The flush of
    subnormal first moments is a comparison here: ``|m| < tiny`` holds exactly for the
    subnormals and zeros whose exponent bits the numpy form clears (both give +0)."""
    for i in range(flat.size):
        g = grad[i]
        mi = np.float32(np.float32(m[i] * beta1) + np.float32(g * one_minus_beta1))
        if flush and abs(mi) < tiny:
            mi = np.float32(0.0)
        m[i] = mi
        vi = np.float32(np.float32(v[i] * beta2) + np.float32(np.float32(g * g)
                                                               * one_minus_beta2))
        v[i] = vi
        t = np.float32(np.sqrt(np.float32(vi / correction2)))
        t = np.float32(np.float32(mi / np.float32(t + eps)) * step_size)
        flat[i] = np.float32(flat[i] - t)


def _warm_adam(kernel) -> None:
    x = np.zeros(1, dtype=np.float32)
    kernel(x, x.copy(), x.copy(), x.copy(), _TINY, *_float32(0.9, 0.1, 0.999, 0.001, 1.0, 1e-8,
                                                               1e-3), True)


_EXPONENT = np.int32(0x7F800000)
_ONE, _SIGN = np.int32(1), np.int32(31)


def _flush_subnormal(bits: np.ndarray, exponent: np.ndarray) -> None:
    """Set to +0 every subnormal float32 whose int32 view is ``bits``, in integer arithmetic
    (a float comparison with a subnormal takes the slow path too): a zero exponent field
    gives exponent - 1 < 0, whose arithmetic shift right by 31 is all ones; inverted, a mask
    of zeros. ``exponent`` is scratch space of the same shape."""
    np.bitwise_and(bits, _EXPONENT, out=exponent)
    np.subtract(exponent, _ONE, out=exponent)
    np.right_shift(exponent, _SIGN, out=exponent)
    np.invert(exponent, out=exponent)
    np.bitwise_and(bits, exponent, out=bits)


def _one_of(net: tuple[list, list], s: int) -> tuple[list, list]:
    """Network ``s`` of a stacked (weights, biases), still stacked (S = 1)."""
    return [w[s:s + 1] for w in net[0]], [b[s:s + 1] for b in net[1]]


def predict_mlp(net: tuple[list, list], X: np.ndarray) -> np.ndarray:
    """Output (n, k) of a single (S = 1) network on X (n, d)."""
    return mlp_forward(*net, np.asarray(X, dtype=np.float32)[None])[0][0]

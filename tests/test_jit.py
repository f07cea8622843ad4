"""confeval._jit: a kernel compiled once per process when numba is there; otherwise ``None``
and the reason, never an exception (the callers keep their numpy forms)."""

import sys

import numpy as np
import pytest

from confeval import _jit


def _total(x):
    s = 0.0
    for i in range(x.size):
        s += x[i]
    return s


def _warm_total(kernel):
    kernel(np.zeros(2))


def _uncompilable(x):
    return {object(): x}   # an arbitrary Python object: numba's nopython mode refuses it


def _warm_uncompilable(kernel):
    kernel(1.0)


def test_a_kernel_is_compiled_once_and_computes_the_loop():
    pytest.importorskip("numba")
    kernel, why = _jit.compiled(_total, _warm_total)
    assert why == "" and kernel(np.arange(5.0)) == 10.0
    assert _jit.compiled(_total, _warm_total)[0] is kernel   # cached in the process


def test_a_failed_compile_is_none_with_the_reason():
    pytest.importorskip("numba")
    kernel, why = _jit.compiled(_uncompilable, _warm_uncompilable)
    assert kernel is None and why.startswith("numba could not compile it (")


def test_without_numba_the_reason_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)   # import numba raises ImportError

    def _fresh(x):   # a function not compiled yet in this process
        return x

    assert _jit.compiled(_fresh, lambda k: k(1)) == (None, "numba is not installed")


def test_threads_asking_at_once_compile_once():
    """The bootstrap's blocks run in threads: the first ones to ask wait for one compile."""
    pytest.importorskip("numba")
    import threading
    from concurrent.futures import ThreadPoolExecutor

    warmed = []
    started = threading.Barrier(4)

    def _twice(x):
        return 2 * x

    def _warm(kernel):
        warmed.append(threading.get_ident())
        kernel(1.0)

    def ask(_):
        started.wait()
        return _jit.compiled(_twice, _warm)[0]

    with ThreadPoolExecutor(4) as pool:
        kernels = list(pool.map(ask, range(4)))
    assert len(warmed) == 1 and all(k is kernels[0] for k in kernels) and kernels[0](2.0) == 4.0

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

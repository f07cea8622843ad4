"""Optional compiled kernels: numba (the extra ``fast``) compiles a plain-Python loop the first
time a process asks for it; without numba, or if compiling fails, the caller keeps its numpy
form, which gives the same numbers (each kernel's tests say how exactly).

Two loops are compiled, each where numpy's one-pass-per-operation form is bound by memory
traffic rather than arithmetic: the bootstrap's pass over untied chunks
(:mod:`confeval.metrics._compiled`) and Adam's update of the small networks' parameters
(:mod:`confeval.conformal._mlp`). Nothing is cached on disk (``cache=False``): a command that
only reads never writes beside the installed package, at the price of compiling in each process
(0.5-2 s, so each caller uses its kernel only for work large enough to repay it).
``error_model="numpy"``: a division by zero gives inf/NaN as numpy's does, and no per-element
check keeps the loops from being vectorised.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

__all__ = ["compiled"]


_LOCK = threading.Lock()


def compiled(function: Callable, warm: Callable[[Callable], object]) -> tuple[Callable | None,
                                                                               str]:
    """``(kernel, "")`` with ``function`` compiled (``warm(kernel)`` calls it once on the
    argument types every call uses, so that it compiles now), or ``(None, why)``. Once per
    process: threads asking at the same time wait for the one compiling (``functools.cache``
    alone would let each compile)."""
    with _LOCK:
        return _compiled(function, warm)


@functools.cache
def _compiled(function: Callable, warm: Callable[[Callable], object]
              ) -> tuple[Callable | None, str]:
    try:
        import numba
    except ImportError:
        return None, "numba is not installed"
    try:
        kernel = numba.njit(nogil=True, cache=False, error_model="numpy")(function)
        warm(kernel)
    except Exception as exc:   # numba's errors have no common base class; never fatal
        return None, f"numba could not compile it ({type(exc).__name__}: {exc})"
    return kernel, ""

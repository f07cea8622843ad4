"""How closely float32 model outputs can be compared on any machine.

A forward pass in float32 gives results that differ in the last few bits between batch shapes
(padding, a shared key/value prefix), attention kernels (eager, SDPA) and BLAS thread counts:
each layer's sums are added in another order. Over a small model's handful of layers that stays
far below 1e-5 relative to a log-probability of size ~1-20, and 1e-5 absolute for a probability
or an attention weight, so those are the bounds every comparison of model outputs uses
(1e-9 passes on the machine it was written on and fails on the next).
"""

from __future__ import annotations

import pytest

REL = 1e-5
ABS = 1e-5


def f32_approx(expected):
    """``pytest.approx`` at float32 tolerances (module docstring)."""
    return pytest.approx(expected, rel=REL, abs=ABS)

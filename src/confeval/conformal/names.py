"""The names of the conformal methods, without importing them: what a command line, an
options class or a help text needs (the methods themselves load scikit-learn). Each tuple
equals its registry's keys (tested)."""

INTERVAL_METHOD_NAMES = ("naive", "cqr", "asym_cqr", "chr", "lvd", "boosted_cqr",
                         "boosted_lcp", "r2ccp", "ordinal_aps")
"""The keys of :data:`confeval.conformal.INTERVAL_METHODS`, in order."""

SCORES = ("lac", "aps", "aps_randomized", "raps", "raps_randomized", "margin")
"""The keys of :data:`confeval.conformal.SET_SCORES`, in order."""

BASE_MODELS = ("gbr", "hgb", "linear", "rf")
"""The base regressors of the interval methods that take one."""

DEFAULT_SCORES = ("lac", "aps", "raps", "margin")
"""The set scores a split-conformal evaluation reports by default."""

PROTOCOLS = ("exact", "vlm-bench")
"""The split-conformal evaluation protocols (:mod:`confeval.conformal.protocol`)."""

"""Package attributes imported when first used (PEP 562), so that importing a package for one
light part (a suite's options, to build the command line) does not import its heavy parts
(scoring: scipy, pandas, scikit-learn)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, exports: Mapping[str, Sequence[str]]
                    ) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps a submodule (relative, e.g.
    ``".scoring"``) to the names it provides; a name is imported from it on first access."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where[name], package)
        # every name of that module bound on the package at once: importing the module bound
        # its own name there (conformal.set_metrics, the module), where the package means the
        # function, as an eager import made it; and the next access costs nothing
        for other in exports[where[name]]:
            setattr(sys.modules[package], other, getattr(module, other))
        return getattr(module, name)

    return __getattr__

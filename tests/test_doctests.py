"""Run the examples in every module's docstrings against the installed package."""

import doctest
import importlib
import pkgutil

import pytest

import confeval

MODULES = sorted(m.name for m in pkgutil.walk_packages(confeval.__path__, "confeval.")
                 if not m.name.endswith(".__main__"))  # running it would exit


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"

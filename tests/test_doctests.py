"""Run the examples in every module's docstrings against the installed package."""

import doctest
import importlib
import pkgutil

import pytest

import confeval

MODULES = sorted(m.name for m in pkgutil.walk_packages(confeval.__path__, "confeval.")
                 if not m.name.endswith(".__main__"))  # running it would exit


OPTIONAL = {"inspect_ai": "inspect-ai", "lm_eval": "lm-eval"}
"""The optional tools a module of confeval.integrations is written for."""


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        tool = (exc.name or "").split(".")[0]
        if tool not in OPTIONAL:
            raise
        pytest.skip(f"{name} is written for {OPTIONAL[tool]}, which is not installed")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"

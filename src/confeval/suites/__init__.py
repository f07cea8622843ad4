"""Suites: one package per method, each wiring prompts -> backend -> parse -> score.

``confeval.suites.<name>`` holds ``inputs`` (record files -> arrays), ``scoring`` (the public
``score_<name>``) and ``live`` (its :class:`~confeval.suites.base.LiveSuite`). Adding a suite is
one entry in :data:`SUITES`.
"""

from __future__ import annotations

import importlib

from .base import LiveSuite, SuiteOptions

__all__ = ["SUITES", "LiveSuite", "SuiteOptions", "get_suite"]

SUITES = {"sets": "confeval.suites.sets.live", "intervals": "confeval.suites.intervals.live",
          "steps": "confeval.suites.steps.live", "measures": "confeval.suites.measures.live",
          "diagnose": "confeval.suites.diagnose.live"}
"""Suite name -> the module whose ``SUITE`` runs it live (imported on demand)."""


def get_suite(name: str) -> LiveSuite:
    """The live suite ``name``; a :class:`ValueError` lists the choices."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; live suites: {', '.join(SUITES)}")
    return importlib.import_module(SUITES[name]).SUITE

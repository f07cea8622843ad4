"""Suites: one module per method, wiring prompts -> backend -> parse -> score."""

from __future__ import annotations

import importlib

from .base import SUITES, LiveSuite

__all__ = ["LIVE_SUITES", "LiveSuite", "get_suite"]

LIVE_SUITES = {"sets": "confeval.suites.sets", "intervals": "confeval.suites.intervals",
               "steps": "confeval.suites.steps"}
"""Suites that can run live, and the module that registers each."""


def get_suite(name: str) -> LiveSuite:
    if name not in LIVE_SUITES:
        raise ValueError(f"unknown suite {name!r}; live suites: {', '.join(LIVE_SUITES)}")
    importlib.import_module(LIVE_SUITES[name])
    return SUITES[name]

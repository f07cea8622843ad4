"""Suites: one package per method, each wiring prompts -> backend -> parse -> score.

``confeval.suites.<name>`` holds ``options`` (every option, declared once), ``inputs`` (record
files -> arrays), ``scoring`` (the public ``score_<name>``) and ``live`` (its
:class:`~confeval.suites.base.LiveSuite`). A suite is one entry of :data:`SUITES`: what the
command line, ``confeval rerun`` and Python callers look up by name (modules are imported on
demand, so naming a suite costs nothing).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import LiveSuite, SuiteOptions

__all__ = ["SUITES", "LiveSuite", "SuiteEntry", "SuiteOptions", "get_suite", "suite_entry"]


@dataclass(frozen=True)
class SuiteEntry:
    """One suite: where its parts are, and the section its scoring command writes.

    ``options`` and ``score_file`` name attributes of the package (``None`` while the suite's
    scoring still has its own command-line options); ``section_title`` titles the run folder
    section of ``confeval <name> score``."""

    name: str
    options: str | None = None
    score_file: str | None = None
    section_title: str = ""

    @property
    def package(self) -> str:
        return f"confeval.suites.{self.name}"

    def _attribute(self, name: str | None) -> Any:
        if name is None:
            raise ValueError(f"the {self.name} suite's scoring is not declared in one options "
                             "class yet")
        return getattr(importlib.import_module(self.package), name)

    def options_class(self) -> type[SuiteOptions]:
        return self._attribute(self.options)

    def score(self, path: str | Path, options: SuiteOptions) -> dict:
        """``confeval <name> score`` on one record file or run folder."""
        return self._attribute(self.score_file)(path, options)

    def section(self, results: dict) -> dict:
        """The run-folder section of ``confeval <name> score`` over ``results`` by input."""
        return {"kind": self.name, "title": self.section_title, "results": results}

    def live(self) -> LiveSuite:
        return importlib.import_module(f"{self.package}.live").SUITE


SUITES: dict[str, SuiteEntry] = {
    "sets": SuiteEntry("sets", "SetsOptions", "score_sets_file", "Conformal prediction sets"),
    "intervals": SuiteEntry("intervals", "IntervalsOptions", "score_intervals_file",
                            "Conformal intervals for judge scores"),
    "steps": SuiteEntry("steps", "StepsOptions", "score_steps_file",
                        "Process-judge step confidence (ConfProBench)"),
    "measures": SuiteEntry("measures", "MeasuresOptions", "score_measures_file",
                           "Confidence measures (MCQA-Eval)"),
    "diagnose": SuiteEntry("diagnose", "DiagnoseOptions", "score_diagnosis_file",
                           "Error diagnosis (MMErroR)"),
}
"""Suite name -> its entry."""


def suite_entry(name: str) -> SuiteEntry:
    """The entry of suite ``name``; a :class:`ValueError` lists the choices."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; suites: {', '.join(SUITES)}")
    return SUITES[name]


def get_suite(name: str) -> LiveSuite:
    """The live suite ``name``; a :class:`ValueError` lists the choices."""
    return suite_entry(name).live()

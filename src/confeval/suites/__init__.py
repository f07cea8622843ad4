"""Suites: one package per method, each wiring prompts -> backend -> parse -> score.

``confeval.suites.<name>`` holds ``options`` (every option, declared once), ``inputs`` (record
files -> arrays), ``scoring`` (the public ``score_<name>``) and ``live`` (its
:class:`~confeval.suites.base.LiveSuite`). A suite is one entry of :data:`SUITES`: what the
command line, ``confeval rerun`` and Python callers look up by name (modules are imported on
demand, so naming a suite costs nothing).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.table import Table

from .._registry import Registry
from ..report.terminal import TERMINAL_TABLES
from .base import LiveSuite, SuiteOptions

__all__ = ["SCORING_COMMANDS", "SUITES", "LiveSuite", "ScoringCommand", "SuiteEntry",
           "SuiteOptions", "get_suite", "suite_entry"]


@dataclass(frozen=True)
class SuiteEntry:
    """One suite: its options, inputs, scoring, live part, report section and terminal table.

    ``options`` and ``score_file`` name attributes of the package; ``section_title`` titles
    the run folder section of ``confeval <name> score``."""

    name: str
    options: str
    score_file: str
    section_title: str

    @property
    def package(self) -> str:
        return f"confeval.suites.{self.name}"

    def options_class(self) -> type[SuiteOptions]:
        return getattr(importlib.import_module(self.package), self.options)

    def scoring(self) -> ScoringCommand:
        """``confeval <name> score``: its options, its one scoring function, its section."""
        return SCORING_COMMANDS[f"{self.name} score"]

    def live(self) -> LiveSuite:
        return importlib.import_module(f"{self.package}.live").SUITE

    def inputs(self) -> ModuleType:
        """The module that reads the suite's record files (and datasets) into arrays."""
        return importlib.import_module(f"{self.package}.inputs")

    def report_section(self) -> Callable[[Mapping[str, Any]], str]:
        """The HTML renderer of the suite's report section."""
        from ..report.html import SECTION_RENDERERS  # matplotlib: only when a report is made

        return SECTION_RENDERERS[self.name]

    def terminal_table(self) -> Callable[[dict], Table]:
        """The terminal table of the suite's results."""
        return TERMINAL_TABLES[self.name]


SUITES: Registry[SuiteEntry] = Registry("suite", {
    "sets": SuiteEntry("sets", "SetsOptions", "score_sets_file", "Conformal prediction sets"),
    "intervals": SuiteEntry("intervals", "IntervalsOptions", "score_intervals_file",
                            "Conformal intervals for judge scores"),
    "steps": SuiteEntry("steps", "StepsOptions", "score_steps_file",
                        "Process-judge step confidence (ConfProBench)"),
    "measures": SuiteEntry("measures", "MeasuresOptions", "score_measures_file",
                           "Confidence measures (MCQA-Eval)"),
    "diagnose": SuiteEntry("diagnose", "DiagnoseOptions", "score_diagnosis_file",
                           "Error diagnosis (MMErroR)"),
})
"""Suite name -> its entry."""


@dataclass(frozen=True)
class ScoringCommand:
    """A command that scores record files into a run folder's section, and that ``confeval
    rerun`` repeats from the folder's ``run.json``: its options class and its function
    scoring one input (``n_files`` files scored together: 2 for ``measures compare``), both
    named as ``module:attribute`` and imported on demand, and the section it writes.

    ``suite`` names the suite whose run folders it reads with their own options (a folder's
    options overridden only by those given on the command line); ``file_options`` the
    options that name a file, hashed into ``run.json`` like the inputs; ``after`` a
    ``fn(results, extra, options)`` run over all results with ``run.json``'s ``extra``
    (``diagnose score --pair``)."""

    command: str
    options: str
    score_file: str
    kind: str
    title: str
    suite: str | None = None
    n_files: int = 1
    file_options: tuple[str, ...] = ()
    after: str | None = None

    def options_class(self) -> type:
        return _resolve(self.options)

    def score(self, paths: Sequence[str | Path], options: Any, **kwargs: Any) -> dict:
        return _resolve(self.score_file)(*paths, options, **kwargs)

    def finish(self, results: dict, extra: Any, options: Any) -> None:
        if self.after is not None and extra:
            _resolve(self.after)(results, extra, options)

    def section(self, results: dict) -> dict:
        return {"kind": self.kind, "title": self.title, "results": results}


def _resolve(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _suite_command(entry: SuiteEntry, **extra: Any) -> ScoringCommand:
    return ScoringCommand(f"{entry.name} score", f"{entry.package}:{entry.options}",
                          f"{entry.package}:{entry.score_file}", entry.name,
                          entry.section_title, suite=entry.name, **extra)


_GENERIC = "confeval.suites.generic"
_STUDIES = "confeval.suites.measures.studies"
_MEASURES = "confeval.suites.measures.options"
SCORING_COMMANDS: Registry[ScoringCommand] = Registry("scoring command", {
    "score": ScoringCommand("score", f"{_GENERIC}:ConfidenceOptions",
                            f"{_GENERIC}:score_confidence_file", "confidence",
                            "Confidence vs correctness"),
    "agreement": ScoringCommand("agreement", f"{_GENERIC}:AgreementOptions",
                                f"{_GENERIC}:score_agreement_file", "agreement",
                                "Judge vs reference scores"),
    **{f"{name} score": _suite_command(entry) for name, entry in SUITES.items()
       if name != "diagnose"},
    "diagnose score": _suite_command(
        SUITES["diagnose"], file_options=("human",),
        after="confeval.suites.diagnose.scoring:add_epd_drops"),
    "measures thresholds": ScoringCommand(
        "measures thresholds", f"{_MEASURES}:ThresholdsOptions",
        f"{_STUDIES}:threshold_sensitivity_file", "measures_study",
        "Threshold sensitivity of the ranking"),
    "measures noise": ScoringCommand(
        "measures noise", f"{_MEASURES}:NoiseOptions", f"{_STUDIES}:label_noise_file",
        "measures_study", "Label noise and the ranking (Eq. 7)"),
    "measures compare": ScoringCommand(
        "measures compare", f"{_MEASURES}:CompareOptions", f"{_STUDIES}:compare_files",
        "measures_study", "MCQA-Eval against threshold-based evaluation", n_files=2),
})
"""Command -> how it scores: every command that writes a scoring run folder."""


def suite_entry(name: str) -> SuiteEntry:
    """The entry of suite ``name``; a :class:`ValueError` lists the choices."""
    return SUITES[name]


def get_suite(name: str) -> LiveSuite:
    """The live suite ``name``; a :class:`ValueError` lists the choices."""
    return suite_entry(name).live()

"""Suites: one package per method, each one :class:`~confeval.suites.base.Suite` object.

``confeval.suites.<name>`` exports ``SUITE``: its options (every option, declared once), its
one loader, scoring, comparison, decision, live part, layouts for other tools' files, report
section kind and demo entry. :data:`SUITES` is what the command line, the cross-suite commands
(:mod:`confeval.verbs`) and Python callers look up by name; registering a suite is one line
here. Naming a suite costs nothing: its heavy modules are imported by the methods that use
them.
"""

from __future__ import annotations

from .._registry import Registry
from . import agreement, diagnose, intervals, measures, score, sets, steps
from .base import Comparison, Decision, LiveSuite, ScoringCommand, Suite, SuiteOptions

__all__ = ["SUITES", "Comparison", "Decision", "LiveSuite", "ScoringCommand", "Suite",
           "SuiteOptions", "get_suite", "register"]

SUITES: Registry[Suite] = Registry("suite")
"""Suite name -> the suite."""


def register(suite: Suite) -> Suite:
    """Add ``suite`` to :data:`SUITES` under its name (once), with the report section and
    terminal table it brings (a suite of confeval's own has them in ``report/``)."""
    section, table = suite.report_section(), suite.terminal_table()
    if section is not None:
        from ..report import SECTION_RENDERERS

        SECTION_RENDERERS.add(suite.section_kind, section)
    if table is not None:
        from ..report.terminal import TERMINAL_TABLES

        TERMINAL_TABLES.add(suite.section_kind, table)
    return SUITES.add(suite.name, suite)


register(score.SUITE)
register(agreement.SUITE)
register(sets.SUITE)
register(intervals.SUITE)
register(steps.SUITE)
register(measures.SUITE)
register(diagnose.SUITE)


def get_suite(name: str) -> Suite:
    """The suite ``name``; a :class:`ValueError` lists the choices."""
    return SUITES[name]

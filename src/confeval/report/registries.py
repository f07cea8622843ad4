"""The report's two name -> renderer tables, filled by the section modules
(``report/sections/<kind>.py``) when first looked up: the package face
(:mod:`confeval.report`) says how, so that no module of the report imports them back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._registry import Registry

__all__ = ["SECTION_RENDERERS", "TERMINAL_TABLES"]

SECTION_RENDERERS: Registry[Callable[[Mapping[str, Any]], str]] = Registry("report section")
"""Section kind -> ``fn(section) -> html``."""

TERMINAL_TABLES: Registry[Callable[[dict], Any]] = Registry("terminal table")
"""Section kind -> ``fn(results) -> rich Table``."""

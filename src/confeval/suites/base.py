"""What a suite must provide to run live (prompts -> model -> parse -> records -> metrics)."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

from ..backends import Backend

__all__ = ["SUITES", "LiveSuite", "register_suite"]

SUITES: dict[str, LiveSuite] = {}


def register_suite(suite: LiveSuite) -> LiveSuite:
    SUITES[suite.name] = suite
    return suite


class LiveSuite(abc.ABC):
    """A suite that can query a model.

    ``run_item`` must never raise on bad model output: it returns a record with
    ``status = "unparseable"`` and a ``reason``. Backend failures (after retries) do raise
    :class:`~confeval.backends.BackendError`; the runner leaves such items for a rerun.
    """

    name: str = "abstract"
    default_data: str = ""

    @abc.abstractmethod
    def needs(self, backend: Backend, options: Mapping[str, Any]) -> list[str]:
        """Backend capabilities this run needs (checked before the first request)."""

    @abc.abstractmethod
    def load_items(self, data: str, n: int | None, seed: int) -> list[dict]:
        """Items with a unique ``item_id``, from ``builtin:NAME`` or a file."""

    @abc.abstractmethod
    async def run_item(self, item: dict, backend: Backend, options: Mapping[str, Any]) -> dict:
        """Query the backend for one item and return its record."""

    @abc.abstractmethod
    def score(self, records: list[dict], options: Mapping[str, Any]) -> dict:
        """Metrics (``{"title", "sections": [...]}``) from the records of a run."""

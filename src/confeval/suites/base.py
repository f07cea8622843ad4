"""What a suite must provide to run live, and the options every live run shares.

A suite is a package ``confeval.suites.<name>`` with ``inputs.py`` (record files and datasets
-> arrays or items), ``scoring.py`` (the public ``score_<name>``) and ``live.py`` (a
:class:`LiveSuite` instance named ``SUITE``). Its options are one frozen dataclass deriving
from :class:`SuiteOptions`: it validates itself on construction, and is written whole into the
run folder's ``run.json``, so a run cannot be resumed with other options.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ..backends import Backend
from .options import build, option, run_defaults, to_json

__all__ = ["ANSWER_MODES", "MAX_BOOTSTRAP", "READ_METHODS", "Items", "LiveSuite", "SuiteOptions",
           "answer_mode", "check_answer_mode", "distribution_needs", "read_method"]

MAX_BOOTSTRAP = 100_000
"""Most bootstrap resamples any command takes: 95% percentile intervals are stable to the
third decimal long before, and 10^8 would run for hours without saying why."""

READ_METHODS = ("auto", "score", "top_logprobs")
"""How a distribution over allowed answers is read: ``score`` (exact continuation scoring),
``top_logprobs`` (from a generated reply's top-k alternatives) or ``auto`` (the first the
backend can do)."""


def read_method(backend: Backend, method: str) -> str:
    """``score`` or ``top_logprobs``: ``method`` itself, or for ``auto`` what the backend can."""
    if method not in READ_METHODS:
        raise ValueError(f"--method must be one of {', '.join(READ_METHODS)}, got {method!r}")
    if method == "auto":
        return "score" if "score" in backend.capabilities else "top_logprobs"
    return method


ANSWER_MODES = ("auto", "scored", "generated")
"""How a live suite reads a model's answer: ``scored`` (a probability distribution over the
allowed answers, never parsed from text), ``generated`` (a reply read by the suite's parser), or
``auto`` (scored where the backend can score a continuation exactly)."""


def check_answer_mode(answer: str) -> None:
    """A :class:`ValueError` unless ``answer`` is one of :data:`ANSWER_MODES`."""
    if answer not in ANSWER_MODES:
        raise ValueError(f"--answer must be one of {', '.join(ANSWER_MODES)}, got {answer!r}")


def answer_mode(backend: Backend, answer: str) -> str:
    """``scored`` or ``generated``: ``answer`` itself, or for ``auto`` what the backend can."""
    check_answer_mode(answer)
    if answer != "auto":
        return answer
    return "scored" if "score" in backend.capabilities else "generated"


class Items(list):
    """Items of a live run, with the rows of the data file that could not become items,
    counted by reason (``excluded``) before any model call."""

    def __init__(self, items=(), excluded: dict | None = None) -> None:
        super().__init__(items)
        self.excluded: dict[str, int] = dict(excluded or {})


def distribution_needs(backend: Backend, method: str) -> list[str]:
    """The backend capabilities that reading a distribution over answers with ``method``
    needs: exact scoring, or generation with top-k log-probabilities."""
    return ["score"] if read_method(backend, method) == "score" else ["generate", "logprobs"]


@dataclasses.dataclass(frozen=True)
class SuiteOptions:
    """Options every live run has (a suite whose scoring also uses ``seed`` or ``bootstrap``
    declares them again for both stages). Suites derive their own (frozen, validated in
    ``__post_init__``, every field a JSON value, declared with
    :func:`~confeval.suites.options.option`): the one place the command line, ``run.json``
    and resume checks take them from."""

    method: str = option("auto", "auto | score | top_logprobs: how a distribution over the "
                         "allowed answers is read.", stages=("run",))
    top_k: int = option(20, "top_logprobs to ask for.", stages=("run",), minimum=1)
    seed: int = option(0, "Seed of every random step.", stages=("run",))
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=("run",), minimum=0)

    def __post_init__(self) -> None:
        if self.method not in READ_METHODS:
            raise ValueError(f"--method must be one of {', '.join(READ_METHODS)}, "
                             f"got {self.method!r}")
        if self.top_k < 1:
            raise ValueError("--top-k must be at least 1")
        if self.bootstrap < 0:
            raise ValueError("--bootstrap must be 0 or more")
        if self.bootstrap > MAX_BOOTSTRAP:
            raise ValueError(f"--bootstrap {self.bootstrap:,}: at most {MAX_BOOTSTRAP:,} "
                             "resamples")

    def to_dict(self) -> dict[str, Any]:
        """Every field as a JSON value (what ``run.json`` holds under ``options``)."""
        return to_json(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, suite: str | None = None
                  ) -> SuiteOptions:
        """The options from ``values`` (missing fields keep their defaults); a key that is no
        field is a :class:`ValueError` naming it, never ignored."""
        return build(cls, values, what=f"the {suite} suite" if suite else cls.__name__)


class LiveSuite(abc.ABC):
    """A suite that can query a model: prompts -> backend -> parse -> records -> metrics.

    ``run_item`` must never raise on bad model output: it returns a record with
    ``status = "unparseable"`` and a ``reason``. Backend failures (after retries) do raise
    :class:`~confeval.backends.BackendError`; the runner leaves such items for a rerun.
    """

    name: ClassVar[str] = "abstract"
    default_data: ClassVar[str] = ""
    Options: ClassVar[type[SuiteOptions]] = SuiteOptions
    record_layout: ClassVar[dict[str, Any]] = {}
    """Scoring options a live run fixes to its records' layout (column names, input kinds):
    written into ``run.json`` with the rest, so scoring the run folder again reads the
    records as the run did."""

    def default_options(self) -> SuiteOptions:
        """The options of a live run nobody set: the fields' defaults, with the lighter
        ``run_default`` where a field has one (as ``confeval SUITE run`` shows them)."""
        return build(self.Options, run_defaults(self.Options), what=f"the {self.name} suite")

    def for_records(self, options: SuiteOptions) -> SuiteOptions:
        """``options`` with :attr:`record_layout` in place (what a live run records)."""
        return dataclasses.replace(options, **self.record_layout)

    @abc.abstractmethod
    def needs(self, backend: Backend, options: SuiteOptions) -> list[str]:
        """Backend capabilities this run needs (checked before the first request)."""

    @abc.abstractmethod
    def load_items(self, data: str, n: int | None, seed: int) -> list[dict]:
        """Items with a unique ``item_id``, from ``builtin:NAME`` or a file."""

    @abc.abstractmethod
    async def run_item(self, item: dict, backend: Backend, options: SuiteOptions) -> dict:
        """Query the backend for one item and return its record."""

    def has_images(self, item: dict) -> bool:
        """Whether the item cannot be asked without its images (``image`` or ``images``)."""
        return bool(item.get("image") or item.get("images"))

    def excluded_record(self, item: dict, options: SuiteOptions, reason: str) -> dict:
        """The record of an item the model cannot be asked: ``needs_image`` (images, and a
        text-only model or a server that refused images once: never sent text-only) or
        ``prompt_too_long`` (longer than the model's context). Its plain fields are kept;
        suites may add their own."""
        plain = {k: v for k, v in item.items()
                 if isinstance(v, (str, int, float, bool)) or v is None}
        return {**plain, "status": "excluded", "reason": reason}

    def write_extras(self, run_dir: Path) -> str | None:
        """Write the suite's extra files into a finished run folder and say where (a line),
        or None: called by every live run, whoever drives it."""
        return None

    @abc.abstractmethod
    def score(self, records: list[dict], options: SuiteOptions, model_name: str) -> dict:
        """Metrics (``{"title", "sections": [...]}``) from the records of a run."""

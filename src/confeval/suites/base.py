"""The suite contract: what every suite provides, and all the cross-suite commands know.

A suite is a package ``confeval.suites.<name>`` exporting ``SUITE``, an instance of a
:class:`Suite` subclass: its options, its one loader, its scoring, its :class:`Comparison`,
its :class:`Decision`, its live part (a :class:`LiveSuite`), its layouts for other tools'
files, its report section kind and its demo entry. Inside the package, files by role:
``options.py`` (one frozen dataclass deriving from :class:`SuiteOptions` or
:class:`~confeval.suites.options.Options`: it validates itself on construction, and is
written whole into a run folder's ``run.json``, so a run cannot be resumed with other
options), ``inputs.py`` (records and datasets -> arrays or items), ``scoring.py``,
``compare.py``, ``decision.py``, ``ingest.py`` and ``live.py``.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .options import MAX_BOOTSTRAP, Options, build, option, run_defaults

# (the backends are for run commands only: --help and scoring never import them, nor asyncio
# and ssl with them)
if TYPE_CHECKING:
    import numpy as np

    from ..backends import Backend
    from ..ingest import Layout
    from ..records import RecordSet

__all__ = ["ANSWER_MODES", "MAX_BOOTSTRAP", "READ_METHODS", "Comparison", "ConformalStep",
           "Conformalised", "Decided", "Decision", "DemoEntry", "Items", "LiveSuite",
           "Predicted", "ScoringCommand", "Suite", "SuiteOptions",
           "answer_mode", "check_answer_mode", "distribution_needs", "read_method"]


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
class SuiteOptions(Options):
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
                            stages=("run",), minimum=0, maximum=MAX_BOOTSTRAP)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method not in READ_METHODS:
            raise ValueError(f"--method must be one of {', '.join(READ_METHODS)}, "
                             f"got {self.method!r}")

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
    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        """Items with a unique ``item_id``, from ``builtin:NAME`` or a file (image paths
        resolve inside ``image_root``, default the file's folder, for suites with images)."""

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
        """Metrics (``{"title", "sections": [...]}``) from the records of a run, with the
        options the run recorded (:meth:`for_records` applied once, by the runner)."""


# ------------------------------------------------------------------------ the suite contract
@dataclasses.dataclass(frozen=True)
class Comparison:
    """How one suite compares models (``confeval compare``).

    ``read(rs, options)`` returns the arrays of the usable rows of ``rs`` (each of length
    ``rs.mask.sum()`` after the read, which excludes and counts the rows it cannot use, as the
    suite's scoring does; values that are no array, such as the measures' names, are passed on
    as they are; ``item_id``, when given, is each row's item id in place of ``--id-col``'s);
    ``metrics(aligned, options)`` turns every model's arrays, aligned on the shared items, into
    ``{metric: PairedMetric}``. ``across``, when given, returns ``(key, {metric:
    PairedMetric})`` of a second comparison whose entries are not models (the measures,
    compared over all models at once), reported under ``key``. ``warnings(aligned,
    options)``, when given, returns sentences about the aligned models a reader must see
    beside the numbers (the comparison's ``warnings``). Which of the suite's options a
    comparison does not use is the suite's :attr:`Suite.not_compared`."""

    read: Callable[[RecordSet, Any], dict[str, Any]]
    metrics: Callable[[dict[str, dict[str, Any]], Any], dict]
    across: Callable[[dict[str, dict[str, Any]], Any], tuple[str, dict]] | None = None
    warnings: Callable[[dict[str, dict[str, Any]], Any], list[str]] | None = None


@dataclasses.dataclass(frozen=True)
class Decided:
    """One input's decisions as a suite certifies them: the records (unusable rows excluded
    and counted), each decision's confidence and correctness (0/1, or in [0, 1]), and the
    cluster of each decision (None: independent decisions)."""

    records: RecordSet
    confidence: np.ndarray
    correct: np.ndarray
    clusters: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class Decision:
    """What ``confeval guarantee`` certifies for a suite — MAPIE's risk object at suite scale:
    what "answer" means and what the confidence is.

    ``calibrate(rs, options, choice)`` gives the :class:`Decided` of a calibration input;
    ``confidence(rs, options, choice)`` each row's confidence for new records (NaN where the
    row is excluded or not decided on; no correctness needed); ``words(options, choice)`` says
    ``{"act", "item", "error"}`` for the promise's sentence and ``applies_to(options,
    choice)`` what ``policy.json`` says the confidence is. ``Options`` holds the decision's own
    choices (the judge's ``tolerance``, the measure ranked), offered by ``confeval guarantee``
    beside the suite's options; ``one_per_group``: apply marks rows without a confidence
    ``not_chosen`` (the measures decide one option per question); ``loss(options, choice)``,
    when given, names the 0/1 column ``--risk loss`` reads as a bad answer (the correctness
    :meth:`calibrate` reads, flipped); a decision without it has its own error only."""

    calibrate: Callable[[RecordSet, Any, Any], Decided]
    confidence: Callable[[RecordSet, Any, Any], np.ndarray]
    words: Callable[[Any, Any], dict[str, str]]
    applies_to: Callable[[Any, Any], dict[str, Any]]
    one_per_group: bool = False
    loss: Callable[[Any, Any], str] | None = None


@dataclasses.dataclass
class Conformalised:
    """Calibration records made into a conformal predictor: its ``state`` (plain JSON numbers
    and names — the score or method, alpha, q_hat, the scale — never a fitted model), each
    calibration item's label-free ``confidence`` and the nonconformity ``scores`` of its true
    label (what the validity checks test new records against), and the records."""

    records: RecordSet
    state: dict
    confidence: np.ndarray
    scores: np.ndarray


@dataclasses.dataclass
class Predicted:
    """New records through a stored conformal predictor: ``columns`` added to every row (its
    set or interval; None on excluded rows), each predicted row's index (``rows``) and
    label-free ``confidence``, and where rows carry the truth (``truth_rows``), its
    nonconformity ``scores`` and whether the prediction ``covered`` it (None, with
    ``no_truth`` saying why, when no row does)."""

    records: RecordSet
    columns: dict[str, list]
    rows: np.ndarray
    confidence: np.ndarray
    truth_rows: np.ndarray | None = None
    scores: np.ndarray | None = None
    covered: np.ndarray | None = None
    no_truth: str | None = None


@dataclasses.dataclass(frozen=True)
class ConformalStep:
    """A suite's conformal predictor as a calibrate → apply pair (``confeval NAME calibrate``
    writes ``conformal.json``; ``confeval NAME apply`` predicts new records with it and checks
    that its coverage promise still applies). ``Options`` holds the step's own choices (the
    score or method, alpha); ``calibrate(rs, options, choice)`` gives a :class:`Conformalised`;
    ``predict(rs, options, choice, state)`` a :class:`Predicted`; ``check(state)`` raises a
    :class:`ValueError` naming the field of a state that is not one it wrote; ``promise(state)``
    says the coverage promise in words; ``ignores``: the suite's scoring options calibrating
    does not use (its splits, its list of scores), not offered by ``calibrate``."""

    Options: type
    calibrate: Callable[[RecordSet, Any, Any], Conformalised]
    predict: Callable[[RecordSet, Any, Any, Mapping[str, Any]], Predicted]
    check: Callable[[Mapping[str, Any]], None]
    promise: Callable[[Mapping[str, Any]], str]
    ignores: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ScoringCommand:
    """A command that scores inputs into a run folder's section and that ``confeval rerun``
    repeats from the folder's ``run.json``: its options class, the function scoring one input
    (``score(paths, options)``: ``n_files`` paths scored together, e.g. 2 for ``measures
    compare``), and the section kind and title it writes.

    ``suite`` names the suite whose run folders it reads with their own options; ``files``
    the options naming a file, hashed into ``run.json`` like the inputs; ``finish`` a
    ``fn(results, extra, options)`` run over all results with ``run.json``'s ``extra``
    (``diagnose score --pair``); ``progress``: ``score`` takes a ``progress(done, total)``
    keyword (a long bootstrap); ``together``: every input is scored in one call
    (``score(inputs, options)``, ``steps consistency``), its result named so."""

    command: str
    Options: type
    score: Callable[..., dict]
    kind: str
    title: str
    suite: str | None = None
    n_files: int = 1
    files: tuple[str, ...] = ()
    finish: Callable[[dict, Any, Any], None] | None = None
    progress: bool = False
    together: str | None = None

    def section(self, results: dict) -> dict:
        return {"kind": self.kind, "title": self.title, "results": results}


@dataclasses.dataclass(frozen=True)
class DemoEntry:
    """A suite's part of ``confeval demo``'s live sections: the data, the number of items
    (None: the demo's ``--live-items``), options, what the model does and its chance level (in
    the section's words)."""

    data: str
    n: int | None
    options: Mapping[str, Any]
    what: str
    chance: str


class Suite:
    """One suite — one published method — as every cross-suite command sees it.

    A suite is a package ``confeval.suites.<name>`` whose ``__init__`` defines a subclass and
    exports its instance as ``SUITE``; registering it is one line of
    :data:`confeval.suites.SUITES`. The commands that work across suites (score, run, rerun,
    compare, guarantee, import, demo; :mod:`confeval.verbs`) call only these attributes and
    methods, never a suite's name. Heavy parts are imported by the methods that use them, so
    that naming a suite (the command line's flags) costs nothing.

    Attributes: ``name``; ``title`` of its scoring section; ``Options`` (every option, declared
    once); ``kind``, its report section and terminal table (default: ``name``); ``help``,
    ``score_help`` and ``run_help``, the command line's texts; ``top_level``: ``confeval NAME
    FILE...`` is its score command (``score``, ``agreement``), else ``confeval NAME
    score|run``; ``images``: its live items may hold images; ``files``: options naming a file
    (hashed into ``run.json``); ``demo``: its part of the demo's live sections; ``choice``:
    the options class of its decision's own choices (the judge's ``--tolerance``), offered by
    ``confeval guarantee`` beside the suite's options; ``not_compared``: its options
    ``confeval compare`` does not take.

    Whether a suite compares, certifies, runs live or reads other tools' files is whether it
    overrides :meth:`comparison`, :meth:`decision`, :meth:`live` or :meth:`layout`: the
    properties :attr:`compares`, :attr:`certifies`, :attr:`runs_live` and :attr:`ingests` say
    so without importing anything.
    """

    name: ClassVar[str] = "abstract"
    title: ClassVar[str] = ""
    Options: ClassVar[type] = Options
    kind: ClassVar[str] = ""
    help: ClassVar[str] = ""
    score_help: ClassVar[str] = ""
    run_help: ClassVar[str] = ""
    top_level: ClassVar[bool] = False
    images: ClassVar[bool] = False
    files: ClassVar[tuple[str, ...]] = ()
    demo: ClassVar[DemoEntry | None] = None
    progress: ClassVar[bool] = False
    """Whether :meth:`score` reports a long bootstrap's progress (``progress=`` keyword)."""
    choice: ClassVar[type] = Options
    not_compared: ClassVar[tuple[str, ...]] = ()
    """Its options a comparison does not use or replaces with its own (its bootstrap, its
    seed): neither offered by ``confeval compare`` nor required to agree across models."""
    card_aspects: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(aspect, metric) pairs its comparison gives a model's trust card (``*_x``: its first
    metric ending in ``_x``, e.g. its first set score's coverage); an aspect several suites
    measure is taken from the first suite registered."""

    @property
    def section_kind(self) -> str:
        return self.kind or self.name

    def _overrides(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(Suite, method)

    @property
    def compares(self) -> bool:
        return self._overrides("comparison")

    @property
    def certifies(self) -> bool:
        return self._overrides("decision")

    @property
    def runs_live(self) -> bool:
        return self._overrides("live")

    @property
    def ingests(self) -> bool:
        return self._overrides("layout")

    @property
    def conformalises(self) -> bool:
        return self._overrides("conformal")

    @property
    def command(self) -> str:
        """Its scoring command's name: ``NAME`` (top level) or ``NAME score``."""
        return self.name if self.top_level else f"{self.name} score"

    # ------------------------------------------------------------------ reading its inputs
    def layout(self) -> Layout | None:
        """How other tools' files become its records (None: it reads none)."""
        return None

    def load_own(self, path: Path) -> RecordSet:
        """Its own records: a record file, or a run folder's records
        (:meth:`RecordSet.read`); suites whose run records nest their rows unfold them."""
        from ..records import RecordSet

        return RecordSet.read(path)

    def load(self, path: str | Path, options: Any) -> RecordSet:
        """The one loader of an input — every command reads a file, a run folder or another
        tool's file through it: another tool's file in :meth:`layout` (the options'
        ``from_format``, ``normalise``, ``data_file`` and rating scale; recognised from its
        content for a suite whose options name no format, so that one it has no layout for
        is said as such), else :meth:`load_own`."""
        from ..ingest import rating_levels, read_records

        from_format = getattr(options, "from_format", "auto")
        rs = read_records(path, self.layout(), from_format,
                          getattr(options, "normalise", "none"),
                          data=getattr(options, "data_file", None),
                          levels=rating_levels(options), what=f"{self.name} records",
                          filter_name=getattr(options, "filter_name", None),
                          scorer=getattr(options, "scorer", None),
                          epochs=getattr(options, "epochs", "each")) \
            if from_format != "none" else None
        return rs if rs is not None else self.load_own(Path(path))

    # ------------------------------------------------------------------ what it computes
    def score(self, rs: RecordSet, options: Any, *,
              progress: Callable[[int, int], None] | None = None) -> dict:
        """The results of one input's records (``confeval NAME score``)."""
        raise NotImplementedError(f"the {self.name} suite does not score records")

    def finish(self, results: dict, extra: Any, options: Any) -> None:
        """Work over all inputs' results with a command's ``extra`` (``diagnose score
        --pair``); nothing by default."""

    def comparison(self) -> Comparison | None:
        """How ``confeval compare`` compares its models (None: it does not)."""
        return None

    def decision(self) -> Decision | None:
        """What ``confeval guarantee`` certifies on its records (None: nothing)."""
        return None

    def live(self) -> LiveSuite | None:
        """Its live part (``confeval NAME run``), or None."""
        return None

    def conformal(self) -> ConformalStep | None:
        """Its conformal predictor as a calibrate → apply pair (``confeval NAME calibrate``,
        ``confeval NAME apply``), or None."""
        return None

    def report_section(self) -> Callable[[Mapping[str, Any]], str] | None:
        """The HTML renderer of its section kind, for a kind the report does not render
        already (``report/sections/`` renders the suites shipped with confeval); None: the
        report's own."""
        return None

    def terminal_table(self) -> Callable[[dict], Any] | None:
        """Its results as a terminal table, for a kind the terminal does not print already;
        None: the terminal's own."""
        return None

    def extra_commands(self) -> tuple[ScoringCommand, ...]:
        """Its scoring commands besides ``score`` (each writes a run folder ``rerun``
        repeats)."""
        return ()

    def scoring_command(self) -> ScoringCommand:
        """``confeval NAME score``: :meth:`load`, then :meth:`score`."""
        def score(paths: Sequence[str | Path], options: Any, **kwargs: Any) -> dict:
            return self.score(self.load(paths[0], options), options, **kwargs)

        return ScoringCommand(self.command, self.Options, score, self.section_kind,
                              self.title, suite=self.name, files=self.files,
                              finish=self.finish if type(self).finish is not Suite.finish
                              else None, progress=self.progress)

    def __repr__(self) -> str:
        return f"<suite {self.name}>"

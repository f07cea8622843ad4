"""A suite's options, declared once.

Each suite has one frozen dataclass deriving from :class:`~confeval.suites.base.SuiteOptions`
whose fields are every option of its scoring *and* of its live run. A field is declared with
:func:`option`: its default, its help text, the stages it belongs to (``score``, ``run`` or
both), and for list-like values how a command-line text becomes the value (``parse``) and back
(``show``). From that one declaration

* the command line builds the ``--flags`` of ``confeval <suite> score`` and
  ``confeval <suite> run`` (:mod:`confeval.cli._options`);
* :func:`build` makes the options from a mapping (a ``run.json``, Python callers), refusing a
  key that is no field in one line naming it — never ignoring it;
* :func:`to_json` writes every field into ``run.json``, which resume checks and
  ``confeval rerun`` read back.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..runs import RunFolder

if TYPE_CHECKING:
    from ..backends import Backend, ResponseCache

__all__ = ["MAX_BOOTSTRAP", "MAX_RATINGS", "STAGES", "FormatOptions", "IngestOptions",
           "OptionSpec", "Options", "RunFlags", "build", "check_bounds", "comma_list", "flag_of",
           "option", "option_fields", "options_for_input", "run_defaults",
           "options_and_choice", "run_folder_options", "spec_of", "to_json"]

MAX_BOOTSTRAP = 100_000
"""Most bootstrap resamples any command takes: 95% percentile intervals are stable to the
third decimal long before, and 10^8 would run for hours without saying why."""

MAX_RATINGS = 100
"""Most points a judge's rating scale has (--min-score to --max-score): a wider one is a typo,
and every per-rating array would be built before anyone said so."""

STAGES = ("score", "run")
"""``score``: scoring records (files or run folders); ``run``: a live run (which also scores,
so scoring options belong to both)."""


@dataclass(frozen=True)
class OptionSpec:
    """How one option field appears on the command line."""

    help: str
    stages: tuple[str, ...] = STAGES
    flag: str | None = None
    short: str | None = None
    parse: Callable[[str], Any] | None = None
    show: Callable[[Any], str] | None = None
    minimum: float | None = None
    maximum: float | None = None
    multiple: bool = False
    run_default: Any = None


def comma_list(text: str) -> tuple[str, ...]:
    """``"lac, aps,"`` -> ``("lac", "aps")``: a comma list option's command-line text."""
    return tuple(s.strip() for s in str(text).split(",") if s.strip())


def option(default: Any, help: str, *, stages: tuple[str, ...] = STAGES,
           flag: str | None = None, short: str | None = None,
           parse: Callable[[str], Any] | None = None, show: Callable[[Any], str] | None = None,
           minimum: float | None = None, maximum: float | None = None,
           multiple: bool = False, run_default: Any = None, kw_only: bool = False) -> Any:
    """A dataclass field of a suite's options with its command-line description.

    ``flag`` defaults to ``--name-with-dashes`` (``"--a/--b"`` for a boolean pair); ``parse``
    turns the command line's text into the value and ``show`` a value into that text (list
    options such as ``--scores lac,aps`` or ``--seeds 1-10``); ``multiple`` makes a flag that
    may be repeated (a tuple of texts); ``run_default`` is the default of ``SUITE run`` where
    a live run wants a lighter one than scoring (``--seeds 1-5`` against ``1-10``);
    ``minimum``/``maximum`` bound a number: the command line refuses a value outside them, and
    so does :class:`Options` on construction (one check, where the option is declared);
    ``kw_only`` for the fields of a mixin that classes with required fields also take."""
    bad = set(stages) - set(STAGES)
    if bad or not stages:
        raise ValueError(f"stages must be among {STAGES}, got {stages}")
    return dataclasses.field(default=default, kw_only=kw_only, metadata={"confeval": OptionSpec(
        help, tuple(stages), flag, short, parse, show, minimum, maximum, multiple,
        run_default)})


@dataclass(frozen=True)
class Options:
    """The base of every options class: on construction each field declared with a
    ``minimum`` or ``maximum`` is checked against it (a :class:`ValueError` naming the flag),
    so a bound is enforced for Python callers and ``run.json`` alike, not only by the command
    line. Subclasses that validate more call ``super().__post_init__()`` first."""

    def __post_init__(self) -> None:
        check_bounds(self)

    def to_dict(self) -> dict[str, Any]:
        """Every field as a JSON value (what ``run.json`` holds under ``options``)."""
        return to_json(self)


def check_bounds(options: Any) -> None:
    """A :class:`ValueError` naming the first field of ``options`` outside its declared
    ``minimum``/``maximum``."""
    for f in dataclasses.fields(options):
        spec = spec_of(f)
        value = getattr(options, f.name)
        # a seed is a non-negative integer: numpy refuses a negative one with a message that
        # names no option ("expected non-negative integer")
        minimum = 0 if spec.minimum is None and f.name.endswith("seed") else spec.minimum
        if (minimum is None and spec.maximum is None) or value is None \
                or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if minimum is not None and not value >= minimum:
            raise ValueError(f"{flag_of(f)} must be at least {minimum:g}, got {value:g}")
        if spec.maximum is not None and not value <= spec.maximum:
            raise ValueError(f"{flag_of(f)} must be at most {spec.maximum:,g}, got {value:,g}")


@dataclass(frozen=True)
class FormatOptions(Options):
    """How a scoring command reads files other tools wrote (:mod:`confeval.ingest`): the
    format (``auto`` recognises it from the content; a file of no known format is read as
    confeval's own records) and, for OpenAI-compatible responses, the data they answer."""

    from_format: str = option("auto", "Read another tool's file: auto (recognised from the "
                              "content), lm-eval, inspect, openai, or none (confeval's own "
                              "columns).", stages=("score",), flag="--from", kw_only=True)
    data_file: str | None = option(None, "OpenAI-compatible responses: the data file they "
                                   "answer (the questions with their gold answers; matched by "
                                   "custom_id to its item_id or id, else by position).",
                                   stages=("score",), flag="--data", kw_only=True)


@dataclass(frozen=True)
class IngestOptions(FormatOptions):
    """:class:`FormatOptions` and, for lm-evaluation-harness log-likelihoods, the length
    normalisation lm-eval's ``acc_norm`` (chars) or ``acc_bytes`` (bytes) uses; the lm-eval
    filter or Inspect scorer read (``--filter``, ``--scorer``) and what becomes of Inspect's
    epochs (``--epochs``)."""

    normalise: str = option("none", "lm-eval log-likelihoods: none (acc), chars (acc_norm: "
                            "divided by the choice's length in characters) or bytes "
                            "(acc_bytes).", stages=("score",), kw_only=True)
    filter_name: str | None = option(None, "lm-eval samples scored under several filters "
                                     "(strict-match, flexible-extract, ...): the one to read "
                                     "(none named: `score` scores each on its own).",
                                     stages=("score",), flag="--filter", kw_only=True)
    scorer: str | None = option(None, "Inspect logs scored by several scorers: the one whose "
                                "verdict is read (none named: `score` scores each on its "
                                "own).", stages=("score",), kw_only=True)
    epochs: str = option("each", "Inspect epochs: each (one row per sample and epoch), first "
                         "(the first epoch's), or mean (one row per sample, its epochs "
                         "averaged).", stages=("score",), kw_only=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..ingest.reader import EPOCHS

        if self.epochs not in EPOCHS:
            raise ValueError(f"--epochs {self.epochs!r}: choose from {', '.join(EPOCHS)}")


def spec_of(field: dataclasses.Field) -> OptionSpec:
    """The command-line description of ``field`` (a plain field: both stages, no help)."""
    return field.metadata.get("confeval") or OptionSpec("")


def flag_of(field: dataclasses.Field) -> str:
    """The ``--flag`` of ``field`` (the first of a ``--a/--b`` pair)."""
    spec = spec_of(field)
    return (spec.flag or "--" + field.name.replace("_", "-")).split("/")[0]


def option_fields(cls: type, stage: str | None = None) -> list[dataclasses.Field]:
    """The fields of an options class, in declaration order; only ``stage``'s when given."""
    return [f for f in dataclasses.fields(cls)
            if stage is None or stage in spec_of(f).stages]


def field_types(cls: type) -> dict[str, Any]:
    """Each field's resolved type (the classes use postponed annotations)."""
    return typing.get_type_hints(cls)


def build(cls: type, values: Mapping[str, Any], *, what: str = "options") -> Any:
    """``cls(**values)`` where a value given as command-line text is parsed by its field's
    ``parse``; a key that is no field of ``cls``, or a value of the wrong kind (an edited
    ``run.json``: a text for a number, a list for a name), is a :class:`ValueError` naming its
    flag (``what`` says whose options they are)."""
    if not isinstance(values, Mapping):
        raise ValueError(f"the options of {what} are a {type(values).__name__}, not an object")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in values if k not in fields]
    if unknown:
        names = ", ".join("--" + str(k).replace("_", "-") for k in unknown)
        raise ValueError(f"{names}: not an option of {what}")
    types = field_types(cls)
    kwargs = {}
    for name, value in values.items():
        spec = spec_of(fields[name])
        if spec.multiple:
            value = tuple(value) if isinstance(value, (list, tuple)) else \
                value if value is None else (value,)
            value = value or ()
        elif spec.parse is not None and isinstance(value, str):
            value = spec.parse(value)
        elif isinstance(value, list):     # run.json's lists are the options' tuples
            value = tuple(value)
        _check_kind(fields[name], types[name], value, what)
        kwargs[name] = value
    return cls(**kwargs)


def _check_kind(field: dataclasses.Field, annotation: Any, value: Any, what: str) -> None:
    """A :class:`ValueError` naming the flag when ``value`` is not of the field's kind (a
    number, a name, a yes/no, a list of them, or none where the field allows none)."""
    if _is_kind(annotation, value):
        return
    raise ValueError(f"{flag_of(field)}: {value!r} is not {_kind_name(annotation)} "
                     f"({what})")


def _is_kind(annotation: Any, value: Any) -> bool:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_is_kind(a, value) for a in args)
    if annotation is type(None):
        return value is None
    if origin is tuple:
        item = args[0] if args else Any
        return isinstance(value, tuple) and all(_is_kind(item, v) for v in value)
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is str:
        return isinstance(value, str)
    return True   # a kind this check does not know: the class validates it


def _kind_name(annotation: Any) -> str:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is tuple:
        return "a list"
    if args and len(args) < len(typing.get_args(annotation)):
        return _kind_name(args[0]) + " (or none)"
    return {bool: "true or false", int: "a whole number", float: "a number",
            str: "a text"}.get(annotation, f"a {getattr(annotation, '__name__', annotation)}")


def run_defaults(cls: type) -> dict[str, Any]:
    """The ``run_default`` of each field that has one (a live run's lighter defaults)."""
    return {f.name: spec_of(f).run_default for f in dataclasses.fields(cls)
            if spec_of(f).run_default is not None}


def to_json(options: Any) -> dict[str, Any]:
    """Every field as a JSON value (tuples become lists)."""
    def plain(value):
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        return value
    return {f.name: plain(getattr(options, f.name)) for f in dataclasses.fields(options)}


def run_folder_options(path: str | Path, suite: str) -> dict[str, Any] | None:
    """The options a run folder of ``suite`` was made with (its ``run.json``), or None when
    ``path`` is no such folder (a file, or another suite's run)."""
    path = Path(path)
    if not (path.is_dir() and (path / RunFolder.RUN).is_file()):
        return None
    config = RunFolder(path, create=False).config()
    if config.get("suite") != suite or not isinstance(config.get("options"), dict):
        return None
    return dict(config["options"])


def options_for_input(cls: type, path: str | Path, values: Mapping[str, Any],
                      explicit: frozenset[str] | set[str], *, suite: str | None,
                      what: str | None = None) -> Any:
    """The options to score ``path`` with: ``values`` for a record file; for a run folder of
    ``suite``, the options it was made with, overridden only by those in ``explicit`` (set on
    the command line) — so scoring a run folder again gives the run's own numbers. ``what``
    names whose options they are in errors (default: the suite)."""
    what = what or f"the {suite} suite"
    own = run_folder_options(path, suite) if suite else None
    if own is None:
        return build(cls, values, what=what)
    return build(cls, {**own, **{k: values[k] for k in explicit}},
                 what=f"{what} (run.json of {path})")


def options_and_choice(options_cls: type, choice_cls: type, path: str | Path | None,
                       values: Mapping[str, Any], explicit: frozenset[str] | set[str], *,
                       suite: str, whose: str) -> tuple[Any, Any]:
    """(a suite's options, a command's own choices) from the values given to a command that
    takes both (``guarantee`` and its decision's choice, ``NAME calibrate`` and its step's):
    the suite's options as ``confeval SUITE score`` takes them (a run folder's own, overridden
    only by ``explicit``), the rest the choice's; a value that is neither is one error naming
    its flag and ``whose`` options it is not."""
    own = {f.name for f in option_fields(options_cls, "score")}
    chosen = {f.name for f in option_fields(choice_cls, "score")}
    unknown = [k for k in values if k not in own | chosen]
    if unknown:
        flags = ", ".join("--" + k.replace("_", "-") for k in unknown)
        raise ValueError(f"{flags}: not an option of {whose}")
    suite_values = {k: v for k, v in values.items() if k in own}
    suite_options = options_for_input(options_cls, path, suite_values, explicit,
                                      suite=suite) if path is not None else \
        build(options_cls, suite_values, what=f"the {suite} suite")
    choice = build(choice_cls, {k: v for k, v in values.items() if k in chosen},
                   what=whose)
    return suite_options, choice


_RUN = ("run",)


@dataclass(frozen=True)
class RunFlags(Options):
    """Where a live run's items come from and which model answers them: the flags every
    ``confeval SUITE run`` has, declared once (``image_root`` and ``text_only`` only for
    suites whose items may hold images)."""

    model: str | None = option(None, "openai:MODEL, hf:PATH, replay:RUN_DIR, or local "
                               "(default: the embedded SmolLM2-135M-Instruct).", stages=_RUN)
    data: str | None = option(None, "builtin:NAME (a built-in task, the same items whatever "
                              "--seed; builtin:NAME@SEED another draw) or a file in the "
                              "suite's input format (default: the suite's built-in task).",
                              stages=_RUN)
    n: int | None = option(None, "Items to use.", stages=_RUN, minimum=1)
    base_url: tuple[str, ...] = option((), "OpenAI-compatible endpoint; repeat to spread "
                                       "requests over several servers of the same model.",
                                       stages=_RUN, multiple=True)
    concurrency: int = option(8, "Requests in flight per endpoint.", stages=_RUN, minimum=1)
    threads: int | None = option(None, "Threads of an in-process model (local, hf:) (default: "
                                 "OMP_NUM_THREADS, else the cores not busy by the load "
                                 "average).", stages=_RUN, minimum=1)
    api_key_env: str = option("OPENAI_API_KEY", "Environment variable holding the API key.",
                              stages=_RUN)
    no_cache: bool = option(False, "Neither read nor write the response cache.", stages=_RUN)
    cache: str | None = option(None, "Cache file (default $CONFEVAL_CACHE or "
                               "~/.cache/confeval).", stages=_RUN)
    image_root: str | None = option(None, "Folder that image paths of --data resolve in and "
                                    "must stay inside (default: the data file's folder).",
                                    stages=_RUN)
    text_only: bool = option(False, "The model takes no images: items with an image are "
                             "counted as needs_image, never sent (a server refusing images is "
                             "found out at its first refusal anyway).", stages=_RUN)

    IMAGE_FLAGS: ClassVar[tuple[str, ...]] = ("image_root", "text_only")

    def backend(self) -> Backend:
        """The backend these flags name (a model load for ``local``/``hf``)."""
        from ..backends import get_backend

        backend = get_backend(self.model, base_urls=list(self.base_url) or None,
                              concurrency=self.concurrency, api_key_env=self.api_key_env,
                              threads=self.threads)
        if self.text_only:
            backend.capabilities = backend.capabilities - {"images"}
        return backend

    def response_cache(self) -> ResponseCache | None:
        """The response cache these flags name (None: ``--no-cache``)."""
        from ..backends import ResponseCache

        return None if self.no_cache else ResponseCache(self.cache)

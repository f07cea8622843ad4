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
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..runs import RunFolder

__all__ = ["STAGES", "FormatOptions", "IngestOptions", "OptionSpec", "build", "flag_of",
           "option", "option_fields", "options_for_input", "run_defaults", "run_folder_options",
           "spec_of", "to_json"]

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
    multiple: bool = False
    run_default: Any = None


def option(default: Any, help: str, *, stages: tuple[str, ...] = STAGES,
           flag: str | None = None, short: str | None = None,
           parse: Callable[[str], Any] | None = None, show: Callable[[Any], str] | None = None,
           minimum: float | None = None, multiple: bool = False,
           run_default: Any = None, kw_only: bool = False) -> Any:
    """A dataclass field of a suite's options with its command-line description.

    ``flag`` defaults to ``--name-with-dashes`` (``"--a/--b"`` for a boolean pair); ``parse``
    turns the command line's text into the value and ``show`` a value into that text (list
    options such as ``--scores lac,aps`` or ``--seeds 1-10``); ``multiple`` makes a flag that
    may be repeated (a tuple of texts); ``run_default`` is the default of ``SUITE run`` where
    a live run wants a lighter one than scoring (``--seeds 1-5`` against ``1-10``);
    ``kw_only`` for the fields of a mixin that classes with required fields also take."""
    bad = set(stages) - set(STAGES)
    if bad or not stages:
        raise ValueError(f"stages must be among {STAGES}, got {stages}")
    return dataclasses.field(default=default, kw_only=kw_only, metadata={"confeval": OptionSpec(
        help, tuple(stages), flag, short, parse, show, minimum, multiple, run_default)})


@dataclass(frozen=True)
class FormatOptions:
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
    normalisation lm-eval's ``acc_norm`` (chars) or ``acc_bytes`` (bytes) uses."""

    normalise: str = option("none", "lm-eval log-likelihoods: none (acc), chars (acc_norm: "
                            "divided by the choice's length in characters) or bytes "
                            "(acc_bytes).", stages=("score",), kw_only=True)


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
    ``parse``; a key that is no field of ``cls`` is a :class:`ValueError` naming its flag
    (``what`` says whose options they are)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in values if k not in fields]
    if unknown:
        names = ", ".join("--" + k.replace("_", "-") for k in unknown)
        raise ValueError(f"{names}: not an option of {what}")
    kwargs = {}
    for name, value in values.items():
        spec = spec_of(fields[name])
        if spec.multiple:
            value = tuple(value or ())
        elif spec.parse is not None and isinstance(value, str):
            value = spec.parse(value)
        elif isinstance(value, list):     # run.json's lists are the options' tuples
            value = tuple(value)
        kwargs[name] = value
    return cls(**kwargs)


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
    config = RunFolder(path, create=False).read_run().get("config") or {}
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

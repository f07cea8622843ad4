"""Command-line flags generated from a suite's options class (:mod:`confeval.suites.options`):
a command declares only what is its own (files, ``--out``, ``--json``); every suite option is
added from the one declaration, with its help, default and type."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import typer

from ..suites.options import field_types, flag_of, option_fields, spec_of

__all__ = ["Given", "with_options"]


@dataclasses.dataclass(frozen=True)
class Given:
    """The suite options of one command call: every value, and the names set on the command
    line (a run folder's own options fill in the rest)."""

    values: dict[str, Any]
    explicit: frozenset[str]

    def on_command_line(self) -> dict[str, Any]:
        return {k: v for k, v in self.values.items() if k in self.explicit}


def _cli_type(field: dataclasses.Field, resolved: Any) -> Any:
    """The type typer parses: text for options with a ``parse``, a list of texts for a
    repeated flag; ``X | None`` kept."""
    if spec_of(field).multiple:
        return list[str] | None
    if spec_of(field).parse is not None:
        return str | None if field.default is None else str
    return resolved


def _parameter(field: dataclasses.Field, resolved: Any, stage: str) -> inspect.Parameter:
    spec = spec_of(field)
    decls = [spec.flag or flag_of(field)]
    if spec.short:
        decls.append(spec.short)
    kwargs: dict[str, Any] = {"help": spec.help,
                              "show_default": field.default is not dataclasses.MISSING}
    # a bound (minimum=, maximum=) is checked where it is declared, by the options class
    # (confeval.suites.options.check_bounds): one message, for the command line and Python
    default = spec.run_default if stage == "run" and spec.run_default is not None \
        else field.default
    if default is dataclasses.MISSING:   # a required option (``confeval score -c``)
        default = ...
    elif spec.multiple:
        default = None
    elif spec.show is not None and default is not None and not isinstance(default, str):
        default = spec.show(default)
    elif isinstance(default, tuple):
        default = ",".join(map(str, default))
    annotation = Annotated[_cli_type(field, resolved), typer.Option(*decls, **kwargs)]
    return inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=annotation)


def _without_none(annotation: Any) -> Any:
    """``X | None`` -> ``X`` (two classes may declare one option optional in one only)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return args[0] if len(args) == 1 and type(None) in typing.get_args(annotation) \
        else annotation


def _beside(fields: list[dataclasses.Field], beside: Mapping[str, type], stage: str,
            ignored: Mapping[str, Sequence[str]]) -> tuple[list, dict[str, Any]]:
    """The fields of other options classes offered beside ``fields`` (``confeval compare``'s
    suite options): each name once, optional (None: the class's own default), its help
    prefixed by the classes that have it."""
    taken = {f.name for f in fields}
    found: dict[str, tuple[dataclasses.Field, Any, list[str]]] = {}
    for owner, cls in beside.items():
        resolved = field_types(cls)
        for f in option_fields(cls, stage):
            if f.name in taken or f.name in ignored.get(owner, ()):
                continue
            if f.name in found:
                if _without_none(found[f.name][1]) != _without_none(resolved[f.name]):
                    raise TypeError(f"--{f.name}: one flag, two types ({owner})")
                found[f.name][2].append(owner)
            else:
                found[f.name] = (f, resolved[f.name], [owner])
    extra, types = [], {}
    for name, (f, resolved, owners) in found.items():
        helps = {owner: spec_of(dataclasses.fields(beside[owner])[
            [g.name for g in dataclasses.fields(beside[owner])].index(name)]).help
            for owner in owners}
        if len(set(helps.values())) == 1:
            text = f"[{', '.join(owners)}] {spec_of(f).help}"
        else:
            text = " ".join(f"[{owner}] {help_}" for owner, help_ in helps.items())
        spec = dataclasses.replace(spec_of(f), help=text)
        optional = dataclasses.field(default=None, metadata={"confeval": spec})
        optional.name = name
        extra.append(optional)
        types[name] = _without_none(resolved) | None
    return extra, types


def with_options(options_cls: type, stage: str, *, beside: Mapping[str, type] | None = None,
                 ignored: Mapping[str, Sequence[str]] | None = None,
                 also: Sequence[type] = (), skip: Sequence[str] = ()
                 ) -> Callable[[Callable], Callable]:
    """Decorate a command ``fn(given: Given, **own)``: the returned command has ``fn``'s own
    parameters plus one ``--flag`` per option field of ``stage`` of ``options_cls`` and of the
    classes in ``also`` (e.g. the run flags; minus the names in ``skip``), and hands ``fn``
    those values gathered in a :class:`Given`. ``beside`` adds the fields of other classes (by
    owner name, minus ``ignored[owner]``) as optional flags whose value is None unless given.

    The flags are made when typer first reads the command's signature (:class:`_Command`),
    not when it is registered: a process builds only the command it runs
    (:func:`confeval.cli.app.app_for`), and reading ~500 fields' types and declarations for
    every command was ~40 ms of every start-up, ``confeval --help`` included."""
    def decorate(fn: Callable) -> Callable:
        return _Command(fn, functools.partial(_signature, fn, options_cls, stage, beside,
                                              ignored, also, skip))

    return decorate


class _Command:
    """A command function whose signature (and so its flags) is made on first use: typer reads
    it through ``inspect.signature`` and ``typing.get_type_hints``, which take an object's
    ``__signature__`` and ``__annotations__``; name and help are ``fn``'s from the start."""

    def __init__(self, fn: Callable, make: Callable[[], tuple[inspect.Signature, list[str]]]
                 ) -> None:
        # name, help and module (not __wrapped__: typer must read this signature, not fn's)
        functools.update_wrapper(self, fn, assigned=("__module__", "__name__", "__qualname__",
                                                     "__doc__"), updated=())
        self._fn, self._make, self._made = fn, make, None

    def _built(self) -> tuple[inspect.Signature, list[str]]:
        if self._made is None:
            self._made = self._make()
        return self._made

    @property
    def __signature__(self) -> inspect.Signature:
        return self._built()[0]

    @property
    def __annotations__(self) -> dict[str, Any]:
        return {p.name: p.annotation for p in self._built()[0].parameters.values()}

    def __call__(self, ctx: typer.Context, **kwargs: Any) -> Any:
        names = self._built()[1]
        values = {n: kwargs.pop(n) for n in names}
        # by name: click's enum, or the copy typer bundles
        explicit = frozenset(n for n in names if getattr(
            ctx.get_parameter_source(n), "name", "DEFAULT") != "DEFAULT")
        return self._fn(Given(values, explicit), **kwargs)


def _signature(fn: Callable, options_cls: type, stage: str, beside: Mapping[str, type] | None,
               ignored: Mapping[str, Sequence[str]] | None, also: Sequence[type],
               skip: Sequence[str]) -> tuple[inspect.Signature, list[str]]:
    """The signature of :func:`with_options`' command for ``fn`` and the names of its suite
    options."""
    fields = [f for cls in (options_cls, *also) for f in option_fields(cls, stage)
              if f.name not in skip]
    resolved = {k: v for cls in (options_cls, *also) for k, v in field_types(cls).items()}
    if beside:
        extra, types = _beside(fields, beside, stage, ignored or {})
        fields, resolved = fields + extra, {**resolved, **types}
    names = [f.name for f in fields]
    own = [p for p in inspect.signature(fn, eval_str=True).parameters.values()
           if p.name != "given"]
    clash = {p.name for p in own} & set(names)
    if clash:
        raise TypeError(f"{fn.__name__}: {sorted(clash)} are suite options already")
    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  annotation=typer.Context)
    params = [ctx_param,
              *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
                if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD else p for p in own),
              *(_parameter(f, resolved[f.name], stage) for f in fields)]
    return inspect.Signature(params), names

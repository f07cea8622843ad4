"""Each suite's options are declared once: the flags of ``SUITE score`` and ``SUITE run`` are
generated from its options class (one flag per field of the stage, each mapping back to its
field), ``run.json`` holds every field, and a key that is no field is refused by name."""

from __future__ import annotations

import dataclasses

import pytest

from confeval.cli.app import app as APP
from confeval.suites import SUITES
from confeval.suites.options import RunFlags, build, flag_of, option_fields, spec_of, to_json
from confeval.verbs.run import live_part as get_suite
from confeval.verbs.score import scoring_commands

SCORING_COMMANDS = scoring_commands()
LIVE = sorted(name for name, suite in SUITES.items() if suite.runs_live)


def _command(suite: str, verb: str):
    group = next(g.typer_instance for g in APP.registered_groups if g.name == suite)
    return next(c.callback for c in group.registered_commands if c.name == verb)


@pytest.mark.parametrize("suite", LIVE)
@pytest.mark.parametrize("verb", ["score", "run"])
def test_every_flag_of_a_suite_command_is_a_field_and_every_field_a_flag(suite, verb):
    import inspect

    options = SUITES[suite].Options
    params = inspect.signature(_command(suite, verb)).parameters
    fields = {f.name for f in option_fields(options, verb)}
    assert fields <= set(params)
    own = set(params) - fields - {"ctx"}
    # what is left is the command's own (inputs, output) and the run flags, declared once
    assert not own & {f.name for f in dataclasses.fields(options)}
    if verb == "run":
        assert own - {"out_dir"} == {f.name for f in dataclasses.fields(RunFlags)} - (
            set() if SUITES[suite].images else set(RunFlags.IMAGE_FLAGS))
    for f in option_fields(options, verb):
        assert spec_of(f).help, f"{suite}.{f.name} has no help text"
        assert flag_of(f).startswith("--")


@pytest.mark.parametrize("suite", LIVE)
def test_run_json_holds_every_field_and_unknown_keys_are_refused(suite):
    live = get_suite(suite)
    options = live.for_records(live.default_options())
    written = to_json(options)
    assert set(written) == {f.name for f in dataclasses.fields(live.Options)}
    assert build(live.Options, written) == options  # read back whole
    with pytest.raises(ValueError, match="--epsilon-prime: not an option of"):
        build(live.Options, {"epsilon_prime": 0.1})


def _scoring_callback(command: str):
    """The function behind ``confeval COMMAND`` (``score``) or ``confeval GROUP VERB``."""
    group, _, verb = command.rpartition(" ")
    if not group:
        return next(c.callback for c in APP.registered_commands
                    if (c.name or c.callback.__name__) == verb)
    return _command(group, verb)


@pytest.mark.parametrize("command", sorted(SCORING_COMMANDS))
def test_every_scoring_command_takes_its_flags_from_its_options_class(command):
    """Generated over the registry: each field of the command's options class is a flag of
    the command, no flag of the command duplicates a field, and the whole options (defaults
    of every field) go into run.json and read back."""
    import inspect

    cls = SCORING_COMMANDS[command].Options
    params = inspect.signature(_scoring_callback(command)).parameters
    fields = {f.name for f in option_fields(cls, "score")}
    assert fields and fields <= set(params)
    assert not (set(params) - fields) & {f.name for f in dataclasses.fields(cls)}
    required = {f.name: "x" for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING}
    options = build(cls, required)
    assert set(to_json(options)) == {f.name for f in dataclasses.fields(cls)}
    assert build(cls, to_json(options)) == options
    with pytest.raises(ValueError, match="--epsilon-prime: not an option of"):
        build(cls, {**required, "epsilon_prime": 0.1})

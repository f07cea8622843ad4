"""The one name -> implementation table style: every registry of the package is a Registry,
and an unknown name is one error listing the choices, whichever table it is."""

import pytest

from confeval._registry import Registry, UnknownName
from confeval.conformal import INTERVAL_METHODS, SET_SCORES
from confeval.measures import MEASURES
from confeval.perturb.image import IMAGE_TRANSFORMS
from confeval.report import SECTION_RENDERERS, TERMINAL_TABLES, VERDICTS
from confeval.report.verdicts import RESULTS_OF
from confeval.simulate import simulate
from confeval.suites import SUITES
from confeval.tasks.builtin import BUILTIN_TASKS
from confeval.taxonomy import TAXONOMIES

SHIPPED = ("score", "agreement", "sets", "intervals", "steps", "measures", "diagnose")

ALL = [INTERVAL_METHODS, SET_SCORES, MEASURES, IMAGE_TRANSFORMS, SECTION_RENDERERS,
       TERMINAL_TABLES, VERDICTS, RESULTS_OF, SUITES, BUILTIN_TASKS, TAXONOMIES]


@pytest.mark.parametrize("registry", ALL, ids=lambda r: r.what)
def test_every_table_is_a_registry_and_refuses_an_unknown_name_listing_the_choices(registry):
    assert isinstance(registry, Registry) and len(registry) > 0
    with pytest.raises(UnknownName) as info:
        registry["no-such-name"]
    message = str(info.value)
    assert message.startswith(f"unknown {registry.what} 'no-such-name'; choose from ")
    assert message.endswith(", ".join(registry))
    assert isinstance(info.value, ValueError) and isinstance(info.value, KeyError)
    assert registry.get("no-such-name") is None


def test_every_suite_has_its_parts_and_every_printed_kind_a_table():
    for name, suite in SUITES.items():
        assert suite.name == name and suite.Options.__name__.endswith("Options")
        assert suite.scoring_command().Options is suite.Options
        assert callable(SECTION_RENDERERS[suite.section_kind])
        assert callable(TERMINAL_TABLES[suite.section_kind])
        # every suite shipped opens its section with a verdict (one outside may add its own)
        assert name not in SHIPPED or callable(VERDICTS[suite.section_kind])
        # what a suite says it has, it has (the properties import nothing)
        assert suite.runs_live == (suite.live() is not None)
        if suite.runs_live:
            assert suite.live().name == name and suite.live().Options is suite.Options
        assert suite.compares == (suite.comparison() is not None)
        assert suite.certifies == (suite.decision() is not None)
        assert suite.ingests == (suite.layout() is not None)


def test_a_name_registers_once():
    table = Registry("colour", {"red": 1})
    with pytest.raises(ValueError, match="colour 'red' is registered twice"):
        table.add("red", 2)
    with pytest.raises(UnknownName, match="unknown kind 'dice'"):
        simulate("dice", 3)

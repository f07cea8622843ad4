"""One module per suite's report section kind; importing this package registers them all
(:func:`confeval.report.register_section`)."""

from . import (
    compare,
    conformal,
    diagnose,
    guarantee,
    intervals,
    judge_card,
    judge_mean,
    judge_tests,
    measures,
    sets,
    steps,
    validity,
)

__all__ = ["compare", "conformal", "diagnose", "guarantee", "intervals", "judge_card", "judge_mean",
           "judge_tests", "measures", "sets", "steps", "validity"]

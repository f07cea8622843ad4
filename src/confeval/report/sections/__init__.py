"""One module per suite's report section kind; importing this package registers them all
(:func:`confeval.report.register_section`)."""

from . import intervals, sets, steps

__all__ = ["intervals", "sets", "steps"]

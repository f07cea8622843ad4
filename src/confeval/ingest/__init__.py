"""Reading the files other tools already wrote, into a suite's record layout.

:func:`read_records` is the one entry: a scoring command's input is recognised from its
content (``--from auto``) or named (``--from lm-eval``), and turned into the record set the
suite's own reader takes — the suite's default columns, so that no column flag is needed (given
ones still override) — with every unusable line an excluded row under a named reason. A file
of no known format is read as confeval's own records.

Formats (:mod:`.formats`, one reader module each): :mod:`.lm_eval` — lm-evaluation-harness
``--log_samples`` files; :mod:`.inspect_log` — Inspect logs (multiple choice and generation,
each scorer on its own);
:mod:`.openai` — OpenAI-compatible responses (batch output, response objects), read with the
data file they answer (``--data``, :mod:`.matching`).

Which rows a sample becomes is the suite's: each suite hands its
:class:`~confeval.ingest.layout.Layout` (format -> rows of one sample) to :func:`read_records`;
the layouts are documented in the suites' ``ingest`` modules
(:mod:`confeval.suites.score.ingest`, :mod:`confeval.suites.sets.ingest`,
:mod:`confeval.suites.measures.ingest`, :mod:`confeval.suites._judge`). Every row also holds
``model`` when the file (or the results file beside it) names one.
"""

from __future__ import annotations

from .formats import FORMATS, READERS, Format, detect
from .layout import (
    CONFIDENCE_SOURCES,
    CORRECTNESS_METRICS,
    Layout,
    option_letters,
    softmax_top,
)
from .reader import (
    EPOCHS,
    NoLayout,
    SeveralVariants,
    import_records,
    rating_levels,
    read_records,
)

__all__ = ["CONFIDENCE_SOURCES", "CORRECTNESS_METRICS", "EPOCHS", "FORMATS", "READERS",
           "Format", "Layout", "NoLayout", "SeveralVariants", "detect", "import_records",
           "option_letters", "rating_levels", "read_records", "softmax_top"]

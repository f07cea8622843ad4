"""The diagnose suite (MMErroR): can a model name the type of the one error in a reasoning chain
(ETC), and first tell whether there is one (EPD)? Parsing in :mod:`confeval.parse.diagnosis`,
inputs in :mod:`.inputs`, scoring in :mod:`.scoring`; ``SUITE`` is the suite as every command
sees it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._lazy import lazy_attributes
from ..base import DemoEntry, Suite
from .options import PROTOCOL_TYPES, DiagnoseOptions, DiagnosisChoice

if TYPE_CHECKING:
    from ...records import RecordSet
    from ..base import Comparison, Decision, LiveSuite

__all__ = ["PROTOCOL_TYPES", "SUITE", "DiagnoseOptions", "DiagnoseSuite", "DiagnosisInputs",
           "epd_drop", "epd_drop_files", "load_mmerror_items", "normalise_type",
           "read_diagnosis_records", "score_diagnosis", "score_diagnosis_file",
           "score_diagnosis_records"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".inputs": (
        "DiagnosisInputs", "load_mmerror_items", "normalise_type", "read_diagnosis_records"),
    ".scoring": (
        "epd_drop", "epd_drop_files", "score_diagnosis", "score_diagnosis_file",
        "score_diagnosis_records"),
})


class DiagnoseSuite(Suite):
    """A model's diagnosis of the error type in a reasoning chain, and the gold type."""

    name = "diagnose"
    title = "Error diagnosis (MMErroR)"
    Options = DiagnoseOptions
    choice = DiagnosisChoice
    images = True
    files = ("human",)
    help = "Can a model tell why a reasoning chain is wrong (MMErroR)."
    score_help = ("Score diagnoses: strict and parsed accuracy, by domain and subdomain with "
                  "intervals, by type, confusion, macro-F1, kappa, baselines; the EPD drop for "
                  "paired runs (a run folder is scored with its own options unless "
                  "overridden).")
    run_help = ("Ask a model why each reasoning chain is wrong (ETC), or whether and why "
                "(EPD), and score it (records.jsonl, metrics.json, report.html; resumable).")
    demo = DemoEntry(
        "builtin:arith-diagnose", 24, {"protocol": "epd", "permute": True},
        "says whether a reasoning chain has an error and of which type (two-stage EPD); the "
        "answer is the most probable option, from exact scores of the letters, offered in a "
        "seeded order per chain so that a preference for one letter is not one for one type "
        "(the pick rates show it)",
        "random guessing: 1/8 on an erroneous chain, 1/2 on an error-free one (see baselines)")

    def load_own(self, path: Path) -> RecordSet:
        """A record file, a run folder's records or the authors' ``latest.json``."""
        from .inputs import load_diagnoses

        return load_diagnoses(path)

    def score(self, rs: RecordSet, options: DiagnoseOptions) -> dict:
        from .scoring import read_human_row, score_diagnosis_records

        if not options.human:
            return score_diagnosis_records(rs, options)
        human, left_out = read_human_row(options.human)
        result = score_diagnosis_records(rs, options, human=human)
        if left_out:  # rows of the human file that are no accuracy: counted, not gone
            result["baselines"]["human_rows_excluded"] = left_out
        return result

    def finish(self, results: dict, extra: Any, options: DiagnoseOptions) -> None:
        """``diagnose score --pair ETC,EPD``: the EPD drop of each pair."""
        from .scoring import add_epd_drops

        add_epd_drops(results, extra, options)

    not_compared = ("bootstrap", "seed", "n_simulations", "human", "alpha")
    card_aspects = (("diagnosis", "accuracy_strict"),)

    def comparison(self) -> Comparison:
        from .compare import COMPARISON

        return COMPARISON

    def decision(self) -> Decision:
        from .decision import DECISION

        return DECISION

    def live(self) -> LiveSuite:
        from .live import LIVE

        return LIVE


SUITE = DiagnoseSuite()

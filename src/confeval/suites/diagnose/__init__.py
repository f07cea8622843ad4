"""The diagnose suite (MMErroR): can a model name the type of the one error in a reasoning chain
(ETC), and first tell whether there is one (EPD)? Parsing in :mod:`confeval.parse.diagnosis`,
inputs in :mod:`.inputs`, scoring in :mod:`.scoring`."""

from __future__ import annotations

from ..._lazy import lazy_attributes
from .options import PROTOCOL_TYPES, DiagnoseOptions

__all__ = ["PROTOCOL_TYPES", "DiagnoseOptions", "DiagnosisInputs", "epd_drop", "epd_drop_files",
           "load_mmerror_items", "normalise_type", "read_diagnosis_records",
           "score_diagnosis", "score_diagnosis_file", "score_diagnosis_records"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".inputs": (
        "DiagnosisInputs", "load_mmerror_items", "normalise_type", "read_diagnosis_records"),
    ".scoring": (
        "epd_drop", "epd_drop_files", "score_diagnosis", "score_diagnosis_file",
        "score_diagnosis_records"),
})

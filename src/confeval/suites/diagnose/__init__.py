"""The diagnose suite (MMErroR): can a model name the type of the one error in a reasoning chain
(ETC), and first tell whether there is one (EPD)? Parsing in :mod:`confeval.parse.diagnosis`,
inputs in :mod:`.inputs`, scoring in :mod:`.scoring`."""

from .inputs import DiagnosisInputs, load_mmerror_items, normalise_type, read_diagnosis_records
from .options import PROTOCOL_TYPES, DiagnoseOptions
from .scoring import (
    epd_drop,
    epd_drop_files,
    score_diagnosis,
    score_diagnosis_file,
    score_diagnosis_records,
)

__all__ = ["PROTOCOL_TYPES", "DiagnoseOptions", "DiagnosisInputs", "epd_drop", "epd_drop_files",
           "load_mmerror_items", "normalise_type", "read_diagnosis_records",
           "score_diagnosis", "score_diagnosis_file", "score_diagnosis_records"]

"""Parsers for untrusted model output (regular expressions only; nothing is evaluated)."""

from ._tokens import DEFAULT_FLOOR, MAX_REPLY_CHARS, TOKENIZER_MARKERS
from .diagnosis import DIAGNOSIS_PROTOCOLS, DiagnosisParse, parse_diagnosis
from .literal import LiteralError, read_literal
from .option_tokens import extract_from_tokens, normalise_token
from .score_tokens import (
    ScoreExtraction,
    extract_score,
    extract_score_from_text,
    normalise_rating_token,
)
from .stated import StatedConfidence, parse_stated_confidence
from .steps import StepVerdict, normalise_error_type, parse_step_judgement

__all__ = ["DEFAULT_FLOOR", "DIAGNOSIS_PROTOCOLS", "MAX_REPLY_CHARS", "TOKENIZER_MARKERS",
           "DiagnosisParse", "LiteralError", "parse_diagnosis",
           "ScoreExtraction", "StatedConfidence", "parse_stated_confidence",
           "StepVerdict", "extract_from_tokens", "extract_score", "extract_score_from_text",
           "normalise_error_type", "normalise_rating_token", "normalise_token",
           "parse_step_judgement", "read_literal"]

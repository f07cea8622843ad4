"""Parsers for untrusted model output (regular expressions only; nothing is evaluated)."""

from .literal import LiteralError, read_literal
from .score_tokens import (
    DEFAULT_FLOOR,
    ScoreExtraction,
    extract_score,
    extract_score_from_text,
    normalise_rating_token,
)
from .steps import StepVerdict, normalise_error_type, parse_step_judgement

__all__ = ["DEFAULT_FLOOR", "LiteralError", "ScoreExtraction", "StepVerdict", "extract_score",
           "extract_score_from_text", "normalise_error_type", "normalise_rating_token",
           "parse_step_judgement", "read_literal"]

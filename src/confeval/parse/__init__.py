"""Parsers for untrusted model output (regular expressions only; nothing is evaluated)."""

from .score_tokens import (
    DEFAULT_FLOOR,
    ScoreExtraction,
    extract_score,
    extract_score_from_text,
    normalise_rating_token,
)

__all__ = ["DEFAULT_FLOOR", "ScoreExtraction", "extract_score", "extract_score_from_text",
           "normalise_rating_token"]

"""What every parser of generated tokens shares: the floor given to an answer missing from a
token's top-k alternatives, and the tokenizer markers stripped before comparing tokens."""

from __future__ import annotations

import math

__all__ = ["DEFAULT_FLOOR", "MAX_REPLY_CHARS", "TOKENIZER_MARKERS"]

DEFAULT_FLOOR = math.log(1e-5)
"""ln 1e-5 = -11.51: the log-probability of an answer the top-k did not list (counted)."""

TOKENIZER_MARKERS = "\u2581\u0120 \t\n"
"""SentencePiece ▁, byte-level BPE Ġ, and whitespace."""

MAX_REPLY_CHARS = 1_000_000
"""A model reply longer than this (in characters) is not parsed: it is unparseable with the
reason ``reply_too_long`` (counted). Every parser here is linear in the reply's length up to
this cap, in time and memory."""

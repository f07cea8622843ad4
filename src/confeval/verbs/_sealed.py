"""Sealed JSON documents a user hands back to confeval — ``policy.json`` (``guarantee``) and
``conformal.json`` (``sets``/``intervals calibrate``): read with a size cap and checked JSON,
sealed by a digest of their content, and carrying calibration summaries checked as the validity
tests read them. Untrusted: every failure is one :class:`ValueError` naming the file (and the
field, and the command that writes the file again)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._untrusted import DuplicateKeyError, loads_unique

__all__ = ["MAX_SEALED_BYTES", "check_summary", "digest", "field_error", "load_document"]

MAX_SEALED_BYTES = 1 << 20
"""A policy is at most a few hundred KB (two calibration summaries of 5,000 values); a larger
file is none (and is not parsed)."""


def digest(document: Mapping[str, Any]) -> str:
    """The SHA-256 of a document's content (every key but ``digest``, canonical JSON): an edit
    anywhere changes it."""
    from ..runs import to_jsonable

    body = {k: v for k, v in document.items() if k != "digest"}
    text = json.dumps(to_jsonable(body), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def field_error(path: Path, name: str, why: str, rewrite: str) -> ValueError:
    """One line: the file, the field, what is wrong, and the command that writes it again."""
    return ValueError(f"{path}: field {name!r} {why}; write the {rewrite}")


def load_document(path: str | Path, what: str) -> Any:
    """The JSON of ``path`` (at most :data:`MAX_SEALED_BYTES`), else one error saying it is no
    ``what``."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise ValueError(f"{path}: a folder, not a {what} file")
        if size > MAX_SEALED_BYTES:
            raise ValueError(f"{path}: {size:,} bytes is no {what} (at most "
                             f"{MAX_SEALED_BYTES:,})")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except OSError as exc:   # permissions, a special file: said as every reader says it
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a {what} file (no valid JSON: {exc})") from None
    try:
        return loads_unique(text)
    except DuplicateKeyError as exc:   # json keeps the last value, another reader the first
        raise ValueError(f"{path}: not a {what} file: {exc}") from None
    except ValueError as exc:   # not UTF-8, no JSON, a 5,000-digit number
        raise ValueError(f"{path}: not a {what} file (no valid JSON: {exc})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a {what} file (JSON nested too deeply)") from None


def check_summary(summary: Any, path: Path, name: str, rewrite: str) -> None:
    """A calibration summary (:func:`confeval.validity.summarise_calibration`) checked as the
    validity tests read it: format, version, sorted finite values, as many as it says, at most
    the cap, n at least that many."""
    from ..validity import MAX_CAP, calibration_values

    if not isinstance(summary, dict):
        raise field_error(path, name, "is no calibration summary", rewrite)
    try:
        values = calibration_values(summary)
    except ValueError as exc:
        raise field_error(path, name, f"is no calibration summary ({exc})", rewrite) from None
    n = summary.get("n")
    if values.size > MAX_CAP or isinstance(n, bool) or not isinstance(n, int) \
            or n < values.size:
        raise field_error(path, name, f"holds {values.size} values of n = {n!r}", rewrite)

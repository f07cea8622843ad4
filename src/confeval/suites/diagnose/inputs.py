"""Inputs of the diagnose suite (MMErroR): the authors' dataset layout -> items for live runs,
and record files of diagnoses -> arrays for scoring.

Dataset (:func:`load_mmerror_items`): a folder of one JSON file per item (``question_id``,
``question``, ``correct_answer``, ``error_reason`` — the erroneous chain —, ``label``,
``domain``, ``subdomain``; also in a ``jsons/`` subfolder; a file holding a list of items is
read item by item) and ``images/{question_id}.{png,jpg,jpeg,webp}``. An item without a usable
label (``missing_label``, ``unknown_label``) or without its image (``missing_image``) is counted
and left out — never sent text-only; an image path that would leave the dataset folder
(``image_outside_dataset``) likewise.

Records (:func:`read_diagnosis_records`): JSONL/CSV/Parquet rows with the gold type
(``--gold-col``; type keys, the authors' labels such as ``B_Reasoning_Error``, or any alias)
and either the predicted type (``--pred-col``: a type key or label; empty = unparseable) or the
raw reply (``--reply-col``, parsed with :func:`confeval.parse.parse_diagnosis`).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._untrusted import DuplicateKeyError, loads_unique
from ...images import ImageError, check_image
from ...parse.diagnosis import DiagnosisParse, default_letters, parse_diagnosis
from ...records import NA_TEXT, RecordSet
from ...taxonomy import MMERROR_AUTHOR_LABELS, error_types, normalise
from ..base import Items
from .options import DiagnoseOptions

__all__ = ["IMAGE_SUFFIXES", "DiagnosisInputs", "load_diagnoses", "load_mmerror_items",
           "normalise_type", "read_diagnoses",
           "parse_replies",
           "read_diagnosis_records"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
_BY_LABEL = {label.lower(): key for key, label in MMERROR_AUTHOR_LABELS.items()}
_NA = frozenset(t.lower() for t in NA_TEXT)


def normalise_type(value: Any) -> str | None:
    """An MMErroR type key from a key, an authors' label or an alias; ``None`` if unknown.

    Examples
    --------
    >>> normalise_type("D_Knowledge_Deployment_Error"), normalise_type("KAE")
    ('kde', 'kde')
    >>> normalise_type("banana") is None
    True
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip()
    if not text or text.lower() in _NA:
        return None
    keys = error_types("mmerror")
    if text.lower() in keys:
        return text.lower()
    if text.lower() in _BY_LABEL:
        return _BY_LABEL[text.lower()]
    short = {"vpe": "vpe", "re": "re", "qce": "qce", "kde": "kde", "kae": "kde",
             "noerror": "no_error", "e_noerror": "no_error"}
    if text.lower() in short:
        return short[text.lower()]
    key, known = normalise(text, "mmerror")
    return key if known and key else None


def _item_files(folder: Path) -> list[Path]:
    base = folder / "jsons" if (folder / "jsons").is_dir() else folder
    return sorted(p for p in base.glob("*.json") if p.name != "MMErroR_all.json")


def _image(folder: Path, question_id: str, image_root: Path | None
           ) -> tuple[str | None, str | None]:
    """The item's image in ``images/`` beside the JSON files (or in the dataset folder's
    parent, the authors' release), checked and confined by
    :func:`~confeval.images.check_image`."""
    for images in (folder / "images", folder.parent / "images"):
        for suffix in IMAGE_SUFFIXES:
            path = images / f"{question_id}{suffix}"
            if path.is_file() or path.is_symlink():
                root = image_root or (folder if images.parent == folder else folder.parent)
                try:
                    return check_image(str(path.absolute()), root), None
                except ImageError as exc:
                    return None, exc.reason
    return None, "missing_image"


def load_mmerror_items(folder: str | Path, n: int | None = None, *,
                       require_images: bool = True, image_root: str | Path | None = None
                       ) -> Items:
    """Items ``{item_id, question, chain, gold_type, domain, subdomain, correct_answer,
    image}`` from the authors' layout (module docstring), with counted exclusions; images
    must lie inside ``image_root`` (default: the dataset folder, or its parent when the
    images sit there)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder (the MMErroR layout is a folder of JSON files "
                         "and images/)")
    root = Path(image_root) if image_root else None
    items, excluded, skipped = Items(), Counter(), []
    for path in _item_files(folder):
        try:
            loaded = loads_unique(path.read_text(encoding="utf-8-sig"))
        except DuplicateKeyError as exc:   # which value the authors meant, none can say
            excluded["duplicate_key_file"] += 1
            skipped.append(f"{path.name} ({exc})")
            continue
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            excluded["unreadable_file"] += 1
            skipped.append(f"{path.name} ({type(exc).__name__})")
            continue
        for raw in loaded if isinstance(loaded, list) else [loaded]:
            item, reason = _item(raw, folder, require_images, root)
            if reason:
                excluded[reason] += 1
            else:
                items.append(item)
    items.excluded = dict(excluded)
    if skipped:
        _warn_skipped(folder, skipped)
    if n:
        del items[n:]
    return items


def _warn_skipped(folder: Path, skipped: list[str], most: int = 3) -> None:
    """One warning naming the item files left out (the first ``most`` of them): the counts
    say how many, this says which, so they can be fixed."""
    more = f"; and {len(skipped) - most} more" if len(skipped) > most else ""
    warnings.warn(f"{folder}: {len(skipped)} item file(s) could not be read and are left "
                  f"out: {'; '.join(skipped[:most])}{more}", stacklevel=3)


def _item(raw: Any, folder: Path, require_images: bool, image_root: Path | None
          ) -> tuple[dict | None, str | None]:
    if not isinstance(raw, dict):
        return None, "not_an_item"
    qid = str(raw.get("question_id") or "").strip()
    if not qid or "/" in qid or "\\" in qid or qid.startswith("."):
        return None, "missing_question_id"
    if not str(raw.get("label") or "").strip():
        return None, "missing_label"
    gold = normalise_type(raw.get("label"))
    if gold is None:
        return None, "unknown_label"
    image, why = _image(folder, qid, image_root)
    if image is None and (require_images or why != "missing_image"):
        return None, why
    return {"item_id": qid, "question": str(raw.get("question") or ""),
            "chain": str(raw.get("error_reason") or ""), "gold_type": gold,
            "domain": str(raw.get("domain") or "") or None,
            "subdomain": str(raw.get("subdomain") or "") or None,
            "correct_answer": raw.get("correct_answer"), "image": image}, None


@dataclass
class DiagnosisInputs:
    """Gold type keys, predicted keys (``None`` = unparseable), why each prediction failed,
    groups, item ids, and the record set with its counts."""

    gold: np.ndarray
    pred: np.ndarray
    failures: Counter
    domains: np.ndarray | None
    subdomains: np.ndarray | None
    ids: np.ndarray | None
    records: RecordSet


def read_diagnosis_records(rs: RecordSet, *, gold_col: str = "gold_type",
                           pred_col: str | None = "pred_type", reply_col: str | None = None,
                           protocol: str = "etc", domain_col: str | None = "domain",
                           subdomain_col: str | None = "subdomain",
                           id_col: str | None = None) -> DiagnosisInputs:
    """Validated diagnoses of ``rs`` (module docstring). Rows without a known gold type are
    excluded and counted (``missing_gold``, ``unknown_gold``, ``duplicate_item``: an
    ``id_col`` value seen before, the first row kept); a prediction that is not a type key,
    label or alias counts as unparseable (``unknown_prediction``)."""
    frame = rs.frame
    if gold_col not in frame:
        raise ValueError(f"{rs.source}: no gold column {gold_col!r}; have "
                         f"{', '.join(map(str, rs.frame.columns[:12]))}")
    gold = np.array([normalise_type(v) for v in frame[gold_col]], dtype=object)
    missing = np.array([_missing(v) for v in frame[gold_col]], dtype=bool)
    rs.exclude(missing, "missing_gold")
    rs.exclude((gold == None) & rs.mask, "unknown_gold")  # noqa: E711
    if id_col and id_col in frame:  # an item twice would weigh double: the first is kept
        usable = np.flatnonzero(rs.mask)
        repeated = np.zeros(len(frame), dtype=bool)
        repeated[usable[frame[id_col].iloc[usable].astype(str).duplicated().to_numpy()]] = True
        rs.exclude(repeated, "duplicate_item")
    pred, failures = _predictions(rs, pred_col, reply_col, protocol)
    keep = rs.mask
    def group(col):
        return None if not col or col not in frame else \
            frame[col].astype(str).where(frame[col].notna(), "(none)").to_numpy()[keep]
    return DiagnosisInputs(gold[keep], pred[keep], Counter(failures[keep][failures[keep] != ""]),
                           group(domain_col), group(subdomain_col), group(id_col), rs)


def _predictions(rs: RecordSet, pred_col, reply_col, protocol) -> tuple[np.ndarray, np.ndarray]:
    frame = rs.frame
    n = len(frame)
    pred, failures = np.full(n, None, dtype=object), np.full(n, "", dtype=object)
    if reply_col:
        if reply_col not in frame:
            raise ValueError(f"{rs.source}: no reply column {reply_col!r}")
        for i, reply in enumerate(frame[reply_col]):
            got: DiagnosisParse = parse_diagnosis(None if _missing(reply) else str(reply),
                                                  protocol)
            pred[i], failures[i] = got.value, got.failure or ""
        return pred, failures
    if not pred_col or pred_col not in frame:
        raise ValueError(f"{rs.source}: no prediction column {pred_col!r} (or give "
                         "--reply-col to parse raw replies)")
    for i, value in enumerate(frame[pred_col]):
        if _missing(value):
            failures[i] = "unparseable"
            continue
        key = normalise_type(value)
        if key is None:
            failures[i] = "unknown_prediction"
        pred[i] = key
    return pred, failures


def _missing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return True
    return str(value).strip().lower() in _NA


def parse_replies(rs: RecordSet, *, reply_col: str = "reply", protocol: str = "etc",
                  letters_col: str | None = "letters"):
    """Every row of ``rs`` with its reply parsed (the contract of ``confeval diagnose parse``):
    ``pred_type`` (a type key or ``None``; for ``presence``: ``pred_presence`` = ``present``,
    ``absent`` or ``None``), ``parse_rule`` or ``parse_failure``, and ``parse_flags``. A row's
    ``letters`` (a letter -> type mapping, as a permuted live run stores it) overrides the
    protocol's fixed order; a row whose ``letters`` is present but not such a mapping (not
    JSON, a letter twice, a value that is no type of the protocol, the wrong number of
    letters) is not parsed: ``invalid_letters``. Returns (frame, summary counts)."""
    import pandas as pd

    frame = rs.frame.drop(columns=[c for c in rs.frame.columns if str(c).startswith("_")])
    if reply_col not in frame:
        raise ValueError(f"{rs.source}: no reply column {reply_col!r}; have "
                         f"{', '.join(map(str, frame.columns[:12]))}")
    has_letters = bool(letters_col) and letters_col in frame
    values, rules, failures, flags = [], [], [], []
    for i, reply in enumerate(frame[reply_col].tolist()):
        letters = _letters(frame[letters_col].iat[i], protocol) if has_letters else None
        if letters is INVALID_LETTERS:  # never the fixed order for a row that gave its own
            got = DiagnosisParse(None, failure="invalid_letters")
        else:
            got = parse_diagnosis(None if _missing(reply) else str(reply), protocol, letters)
        values.append(got.value)
        rules.append(got.rule)
        failures.append(got.failure)
        flags.append(",".join(got.flags) or None)
    column = "pred_presence" if protocol == "presence" else "pred_type"
    out = frame.assign(**{column: values, "parse_rule": rules, "parse_failure": failures,
                          "parse_flags": flags})
    counts = Counter(f for f in failures if f)
    summary = {"source": str(rs.source), "replies": len(out),
               "parsed": int(sum(v is not None for v in values)), "unparseable": dict(counts),
               "rules": dict(Counter(r for r in rules if r)), "protocol": protocol}
    return pd.DataFrame(out), summary


INVALID_LETTERS: dict[str, str] = {}
"""What :func:`_letters` returns for a mapping that is present but unusable."""


def _letters(value: Any, protocol: str) -> dict[str, str] | None:
    """A row's letter -> type key mapping: None when the row has none (the protocol's fixed
    order applies), :data:`INVALID_LETTERS` when it has one that cannot be trusted."""
    if not isinstance(value, dict) and _missing(value):
        return None
    if isinstance(value, str):
        try:
            value = loads_unique(value)
        # a number past the digit limit, a letter named twice (DuplicateKeyError) too
        except (ValueError, RecursionError):
            return INVALID_LETTERS
    if not isinstance(value, dict):
        return INVALID_LETTERS
    expected = default_letters(protocol)
    letters = {str(k).strip().upper(): normalise_type(v) if protocol != "presence" else v
               for k, v in value.items()}
    types = list(letters.values())
    if (len(letters) != len(value) or len(letters) != len(expected)
            or not all(len(k) == 1 and k.isalpha() for k in letters)
            or sorted(map(str, types)) != sorted(expected.values())):
        return INVALID_LETTERS
    return letters


def load_diagnoses(path: Path) -> RecordSet:
    """A record file, a run folder's records or the authors' ``latest.json``."""
    path = Path(path)
    if path.suffix.lower() == ".json" and path.is_file():
        return _authors_results(path)
    return RecordSet.read(path)


def _drop_excluded(rs: RecordSet) -> RecordSet:
    """A live run's rows with ``status`` ``excluded`` (an image item asked text-only, an
    error-free chain under ETC) left out under their ``reason``: they were never asked."""
    if "status" in rs.frame and "reason" in rs.frame:
        status = rs.frame["status"].astype(str).to_numpy()
        for reason in sorted(set(rs.frame.loc[status == "excluded", "reason"].astype(str))):
            rs.exclude((status == "excluded") & (rs.frame["reason"].astype(str) == reason)
                       .to_numpy(), reason)
    return rs


def read_diagnoses(rs: RecordSet, options: DiagnoseOptions) -> DiagnosisInputs:
    """The diagnoses of ``rs`` read with the suite's options — a live run's excluded rows
    left out (:func:`_drop_excluded`), the authors' column names where ours are absent —
    as scoring, comparing and certifying all read them."""
    _drop_excluded(rs)
    protocol = "etc" if options.protocol == "epd" and options.reply_col else options.protocol
    gold_col = _fallback(rs, options.gold_col, "gold_type", ("gt_label", "label"))
    pred_col = _fallback(rs, options.pred_col, "pred_type", ("pred_label",))
    return read_diagnosis_records(
        rs, gold_col=gold_col, pred_col=pred_col, reply_col=options.reply_col,
        protocol="epd5" if protocol == "epd" else protocol, domain_col=options.domain_col,
        subdomain_col=options.subdomain_col,
        id_col=options.id_col if options.id_col in rs.frame else None)


def _fallback(rs, column: str | None, default: str, others: tuple[str, ...]) -> str | None:
    """The authors' column names (``gt_label``, ``pred_label``) when ours are absent and the
    default was not changed."""
    if column != default or column in rs.frame:
        return column
    return next((c for c in others if c in rs.frame), column)


def _authors_results(path: Path):
    """The authors' ``latest.json``: a document whose ``results`` list holds one record per
    item (``gt_label``, ``pred_label``, ``status``, ``domain``, ...); failed items (status not
    ``ok``) keep a null prediction, so they count as wrong under strict accuracy."""

    import pandas as pd

    from ...records import RecordsError

    try:
        document = loads_unique(path.read_text(encoding="utf-8-sig"))
    except DuplicateKeyError as exc:
        raise RecordsError(f"{path}: {exc}; not the authors' latest.json as written") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        # ValueError: a JSONDecodeError, or a number past Python's digit limit
        raise RecordsError(f"{path}: not a readable JSON document ({exc})") from None
    rows = document.get("results") if isinstance(document, dict) else document
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise RecordsError(f"{path}: expected the authors' latest.json (a 'results' list of "
                           "records) or a JSON list of records")
    frame = pd.DataFrame([{**r, "pred_label": r.get("pred_label")
                           if r.get("status", "ok") == "ok" else None} for r in rows])
    frame["_row"] = range(1, len(frame) + 1)
    return RecordSet.from_frame(frame, str(path))

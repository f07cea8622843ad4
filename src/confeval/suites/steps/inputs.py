"""Inputs of the steps suite: step datasets -> items for a live run, raw judge replies -> step
records, and step record files -> the frame :func:`~confeval.suites.steps.scoring.score_steps`
takes.

Datasets (``confeval steps run --data``): ``builtin:arith-steps`` or a JSONL/Parquet/CSV file,
one row per (problem, variant): ``item_id``, ``problem``, ``final_answer``, ``steps`` (a list of
step texts; JSON in CSV), ``labels`` (1/0 per step), ``error_types`` (per step, empty on correct
steps; :mod:`confeval.taxonomy` keys), optional ``variant`` (default ``original``), ``images``
(list of local paths or ``data:`` URLs) and metadata columns (``difficulty``, ``subject``, ...)
carried into the records. A perturbed dataset written by ``confeval steps perturb`` has the same
format.

Step records (``confeval steps score``): one row per (item, step, variant) with ``item_id``,
``step``, ``variant``, ``p_correct``, ``label`` and ``error_type``. Unusable rows are excluded
and counted (``non_integer_step`` besides the generic reasons).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...images import checked_images
from ...parse.steps import CONSISTENCY_POLICIES, parse_step_judgement
from ...records import RUN_RECORDS, RecordsError, RecordSet, as_list
from ...tasks import load_builtin
from ..base import Items

__all__ = ["ORIGINAL", "load_step_items", "load_steps", "parse_step_replies", "step_frame",
           "step_rows", "variant_name",
           "verdict_records"]

ORIGINAL = "original"
"""The variant name of an unperturbed chain."""


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and np.isnan(value))


def variant_name(value: Any) -> str:
    """A variant cell as stripped text; ``original`` where empty or missing."""
    if not _present(value) or not str(value).strip():
        return ORIGINAL
    return str(value).strip()


def load_step_items(data: str, n: int | None = None, seed: int = 0, *,
                    image_root: str | Path | None = None) -> Items:
    """Problems with steps from ``builtin:arith-steps`` or a file (module docstring). Image
    references are checked by :func:`~confeval.images.check_image` inside
    ``image_root`` (default: the file's folder); an item with an unusable image is left out
    and counted under the image's reason (``Items.excluded``), never sent without it."""
    root = Path(image_root) if image_root else Path(data).parent
    if data.startswith("builtin:"):
        items = load_builtin(data.split(":", 1)[1], n or 200, seed)
    else:
        rs = RecordSet.read(Path(data))
        need = ("problem", "final_answer", "steps", "labels")
        missing = [c for c in need if c not in rs.frame.columns]
        if missing:
            raise RecordsError(f"{data}: column(s) {missing} not found; step data needs "
                               f"{', '.join(need)} (+ error_types, variant, images)")
        items = [{k: v for k, v in row.items() if k != "_row"}
                 for row in rs.frame.to_dict(orient="records")]
        for row, item in zip(rs.frame["_row"], items):
            item.setdefault("item_id", f"row-{row}")
    out, excluded = Items(), {}
    for item in items[:n] if n else items:
        item_id = str(item.get("item_id"))
        steps = [str(s) for s in as_list(item["steps"], "steps", item_id)]
        labels = [int(v) for v in as_list(item["labels"], "labels", item_id)]
        types = item.get("error_types")
        types = ["" if t is None else str(t)
                 for t in (as_list(types, "error_types", item_id) if types is not None
                           and not (isinstance(types, float)) else [""] * len(steps))]
        if not len(steps) == len(labels) == len(types):
            raise RecordsError(f"{item_id}: steps, labels and error_types differ in length")
        variant = variant_name(item.get("variant"))
        images = item.get("images")
        images = [] if images is None or isinstance(images, float) else \
            as_list(images, "images", item_id)
        images, why = checked_images(images, root)
        if why:
            excluded[why] = excluded.get(why, 0) + 1
            continue
        out.append({**item, "item_id": item_id, "steps": steps, "labels": labels,
                    "error_types": types, "variant": variant, "images": images,
                    "run_id": f"{item_id}::{variant}"})
    out.excluded = excluded
    return out


def verdict_records(item: Mapping[str, Any], reply: str | None, *,
                    consistency: str = "flag") -> list[dict]:
    """One record per step of ``item`` from the judge's ``reply`` (None: no reply)."""
    verdicts = parse_step_judgement(reply, len(item["steps"]), consistency=consistency)
    meta = {k: v for k, v in item.items()
            if k not in ("steps", "labels", "error_types", "images", "problem", "final_answer",
                         "run_id") and not isinstance(v, (list, dict))}
    return [{**meta, "item_id": item["item_id"], "variant": item["variant"], "step": v.step,
             "p_correct": v.p_correct, "label": item["labels"][v.step],
             "error_type": item["error_types"][v.step], "pred_label": v.pred_label,
             "pred_error_type": v.pred_error_type, "status": v.status, "reason": v.reason,
             "flags": v.flags} for v in verdicts]


def parse_step_replies(rs: RecordSet, *, id_col: str | None = None,
                       consistency: str = "flag") -> tuple[pd.DataFrame, dict]:
    """Raw judge replies (one row per (item, variant) with ``raw_output``, ``labels``,
    ``error_types`` and optionally ``n_steps``, ``variant``, metadata) -> step records (one per
    step, unreadable steps kept with a reason) and a summary of what was parsed. Replies are
    never evaluated. A row that cannot be matched to steps is skipped and counted in
    ``skipped_replies``: ``missing_item_id``, ``labels_not_a_list``, ``no_steps``,
    ``labels_not_0_or_1`` (e.g. 0.5), ``error_types_length_mismatch``,
    ``n_steps_mismatch``."""
    if consistency not in CONSISTENCY_POLICIES:
        raise ValueError(f"--consistency must be one of {', '.join(CONSISTENCY_POLICIES)}")
    frame = rs.frame
    key = id_col or ("problem_id" if "problem_id" in frame.columns else "item_id")
    rs.columns([key, "raw_output", "labels"], what="column")
    rows: list[dict] = []
    skipped: dict[str, int] = {}
    for record in frame.to_dict(orient="records"):
        why, item = _reply_item(record, key)
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        raw_text = record["raw_output"] if isinstance(record["raw_output"], str) else None
        rows.extend(verdict_records(item, raw_text, consistency=consistency))
    if not rows:
        raise RecordsError(f"{rs.source}: no reply could be read (skipped: {skipped or 'none'})")
    steps = pd.DataFrame(rows)
    steps["flags"] = steps["flags"].map(lambda f: ";".join(f))
    reasons = steps.loc[steps.status != "ok", "reason"].str.split(":").str[0].value_counts()
    flags = pd.Series([f.split(":")[0] for fl in steps["flags"] for f in fl.split(";") if f])
    summary = {"source": str(rs.source), "replies": len(frame), "skipped_replies": skipped,
               "steps": len(steps),
               "parsed": int((steps.status == "ok").sum()),
               "unparseable": {str(k): int(v) for k, v in reasons.items()},
               "flags": {str(k): int(v) for k, v in flags.value_counts().items()},
               "consistency": consistency}
    return steps, summary


MAX_STEP = 1_000_000
"""A step index above this is no step (and 1e300 would overflow an integer): excluded."""


def _reply_item(record: Mapping[str, Any], key: str) -> tuple[str | None, dict | None]:
    """(reason to skip the reply, None) or (None, the item its verdicts belong to)."""
    if not _present(record.get(key)) or not str(record[key]).strip():
        return "missing_item_id", None
    try:
        labels = as_list(record["labels"], "labels", f"row {record['_row']}")
        types = (as_list(record["error_types"], "error_types", f"row {record['_row']}")
                 if _present(record.get("error_types")) else [""] * len(labels))
    except RecordsError:
        return "labels_not_a_list", None
    if not labels:
        return "no_steps", None
    as_int = [_label_value(v) for v in labels]
    if any(v is None for v in as_int):
        return "labels_not_0_or_1", None
    if len(types) != len(labels):
        return "error_types_length_mismatch", None
    n = record.get("n_steps")
    if _present(n) and (not isinstance(n, (int, float)) or n != len(labels)):
        return "n_steps_mismatch", None
    item = {k: v for k, v in record.items()
            if k not in ("_row", "raw_output", "labels", "error_types", "n_steps", "steps",
                         "item_id", "problem_id", "text") and not isinstance(v, list)}
    item.update(item_id=str(record[key]).strip(), labels=as_int,
                error_types=["" if t is None else str(t) for t in types],
                steps=[None] * len(labels), variant=variant_name(record.get("variant")))
    return None, item


def _label_value(value: Any) -> int | None:
    """A step label as 0 or 1 (1, 1.0, "1", True), or None (0.5, "x", null: not a label)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


def step_frame(rs: RecordSet, p_col: str = "p_correct", label_col: str = "label",
               group_cols: Sequence[str] = ()) -> pd.DataFrame:
    """Validated step rows (invalid ones excluded and counted in ``rs``) as the frame
    :func:`confeval.suites.steps.scoring.score_steps` takes. Reasons besides the generic ones:
    ``missing_item_id``, ``step_out_of_range`` (negative or above :data:`MAX_STEP`),
    ``non_integer_step``, ``missing_group`` (a group column's value is null or empty)."""
    rs.columns(["item_id", "step", label_col], what="column")
    item_ids = rs.groups("item_id", what="item_id")
    p = rs.numeric(p_col, lo=0.0, hi=1.0, what="p_correct")[:, 0]
    step = rs.numeric("step", lo=0.0, hi=MAX_STEP, what="step")[:, 0]
    rs.exclude(np.isfinite(step) & (np.mod(step, 1) != 0), "non_integer_step")
    labels = rs.labels(label_col, allowed=["0", "1"], what="label")
    groups = {col: rs.groups(col) for col in group_cols}
    keep = rs.mask
    frame = rs.frame.loc[keep].copy()
    frame["item_id"] = item_ids[keep]
    for col, text in groups.items():
        frame[col] = text[keep]
    frame["p_correct"] = p[keep]
    frame["step"] = step[keep].astype(np.int64)
    frame["label"] = labels[keep].astype(np.int64)
    variant = frame["variant"] if "variant" in frame.columns else ORIGINAL
    series = pd.Series(variant, index=frame.index) if not isinstance(variant, pd.Series) \
        else variant
    text = series.fillna(ORIGINAL).astype(str).str.strip()
    frame["variant"] = text.where(text != "", ORIGINAL)
    if "error_type" not in frame.columns:
        frame["error_type"] = ""
    return frame


def step_rows(records: Sequence[dict], source: str = RUN_RECORDS) -> RecordSet:
    """The step rows of live run records (each record's ``steps``, with its answer mode)."""
    rows = [{**step, "answer": r.get("answer", "generated")}
            for r in records for step in r.get("steps") or []]
    if not rows:
        raise ValueError(f"{source}: no step records (not a `steps run` folder?)")
    return RecordSet.from_records(rows, source)


def load_steps(path: Path) -> RecordSet:
    """Step rows of a step record file, or of a ``steps run`` folder (its records' steps)."""
    from ...runs import load_run_records

    path = Path(path)
    if path.is_dir():
        return step_rows(load_run_records(path / RUN_RECORDS), str(path))
    return RecordSet.read(path)

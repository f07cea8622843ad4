"""Another tool's file -> a suite's records: :func:`read_records` with the suite's
:class:`~confeval.ingest.layout.Layout`, every unusable sample an excluded row under its
reason, and every sample logged again (the same lm-eval ``doc_id`` under the same filter and
metrics, Inspect ``(id, epoch)``, OpenAI ``custom_id``: a line repeated, a retried response
appended) after its first usable copy an excluded row under ``duplicate_sample`` — the one
place every layout, ``confeval import`` and every scoring command read other tools' files
through."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .formats import FORMATS, READERS, SampleKey, detect, samples_of
from .layout import Layout

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["NoLayout", "import_records", "rating_levels", "read_records"]


class NoLayout(ValueError):
    """A file of a known format the suite has no layout for (``format``: which one), so that
    a caller who knows every suite can say which of them read it."""

    def __init__(self, message: str, fmt: str) -> None:
        super().__init__(message)
        self.format = fmt


def read_records(path: str | Path, layout: Layout | None, from_format: str = "auto",
                 normalise: str = "none", *, data: str | None = None,
                 levels: tuple[int, ...] = (1, 2, 3, 4, 5),
                 what: str = "records of this command") -> RecordSet | None:
    """``path`` in ``layout`` when it is a file of a known format (``auto``: recognised from
    the content), with each unusable sample an excluded row under its reason; None when it is
    confeval's own records (``none``, or no known format under ``auto``). A named format the
    file is not is a :class:`ValueError` naming the file, and a format ``layout`` does not
    read (or no layout: ``what`` names the records wanted) a :class:`NoLayout`."""
    from ..records import RecordSet
    from .lm_eval import NORMALISATIONS

    if from_format not in FORMATS:
        raise ValueError(f"--from {from_format!r}: choose from {', '.join(FORMATS)}")
    if normalise not in NORMALISATIONS:
        raise ValueError(f"--normalise {normalise!r}: choose from {', '.join(NORMALISATIONS)}")
    found = None if from_format == "none" else detect(path)
    if data and found != "openai":
        raise ValueError(f"{path}: --data names the data OpenAI-compatible responses answer; "
                         f"this is {'an ' + found + ' file' if found else 'no response file'}")
    if found is None and from_format in ("auto", "none"):
        return None
    if from_format != "auto" and found != from_format:
        raise ValueError(f"{path}: not an {from_format} file (its content is no "
                         f"{from_format} output)")
    if layout is None or found not in layout.rows:
        raise NoLayout(f"{path}: an {found} file has no "
                       f"{layout.what if layout is not None else what}", found)
    samples, sample_reasons, model, notes = samples_of(path, found, layout, data, levels)
    rows, reasons = _rows(samples, sample_reasons, layout.rows[found], normalise,
                          key="item_id" if found == "openai" else layout.key, model=model,
                          identity=READERS[found].key)
    if not rows:
        raise ValueError(f"{path}: an {found} file without a sample")
    rs = RecordSet.from_records(rows, str(path))
    rs.fmt = found
    rs.notes.update(notes)
    if "gold_in_top_logprobs" in rs.frame.columns:
        rs.notes.update(_letters_missing(rs, reasons))
    key = "item_id" if found == "openai" else layout.key   # the data's ids name responses
    if layout.aligns and not rs.frame[key].duplicated().any():
        rs.id_col = key   # unique document ids align models (an Inspect epoch repeats them)
    reasons_array = np.array(reasons, dtype=object)
    for reason in sorted(set(reasons) - {""}):
        rs.exclude(reasons_array == reason, reason)
    return rs


def _rows(samples: list, sample_reasons: list[str], rows_of, normalise: str, *, key: str,
          model: str | None, identity: SampleKey) -> tuple[list[dict], list[str]]:
    """Every sample's rows (an unusable one: a placeholder row naming its line) and each
    row's reason ("" for a usable one). A sample whose ``identity`` a usable sample before it
    had is ``duplicate_sample``: the first usable copy is kept, so a failed request retried
    keeps the retry."""
    rows, reasons = [], []
    kept: set = set()
    for line, (sample, reason) in enumerate(zip(samples, sample_reasons), start=1):
        same = identity(sample) if sample is not None else None
        if same is not None and same in kept:
            made: list[dict] | str = "duplicate_sample"
        else:
            made = rows_of(sample, normalise) if sample is not None else reason
        if isinstance(made, str):
            rows.append({key: f"sample-{line}"})
            reasons.append(made)
            continue
        if same is not None:
            kept.add(same)
        if model:
            for row in made:
                row["model"] = model
        rows.extend(made)
        reasons.extend([""] * len(made))
    return rows, reasons


def _letters_missing(rs: RecordSet, reasons: list[str]) -> dict:
    """How many usable samples' top log-probs lack an option letter, and the gold one: those
    letters are given the floor log-probability (``log 1e-5``) rather than dropped, so a
    sample whose gold letter is missing keeps a near-zero probability of the right answer."""
    usable = np.array([not r for r in reasons])
    lacking = (rs.frame["n_missing"].to_numpy() > 0) & usable
    gold = (rs.frame["gold_in_top_logprobs"].to_numpy() == 0) & usable
    return {"letters_not_in_top_logprobs": {
        "samples_lacking_a_letter": int(lacking.sum()), "samples_lacking_the_gold_letter":
        int(gold.sum()), "given_log_probability": "log(1e-5)"}}


def rating_levels(options: Any) -> tuple[int, ...]:
    """The rating scale of a judge's replies: ``min_score`` to ``max_score`` of the options
    (default 1-5)."""
    low = getattr(options, "min_score", 1)
    high = getattr(options, "max_score", None)
    high = low + 4 if high is None else high
    return tuple(range(low, high + 1))


def import_records(path: str | Path, layout: Layout, from_format: str = "auto",
                   normalise: str = "none", *, data: str | None = None,
                   levels: tuple[int, ...] = (1, 2, 3, 4, 5)) -> tuple[Any, dict]:
    """(the usable rows of another tool's file in ``layout``, the counts ``{n_read, n_used,
    excluded}``) — what ``confeval import`` writes; a file of no known format is a
    :class:`ValueError` (there is nothing to import)."""
    rs = read_records(path, layout, from_format, normalise, data=data, levels=levels)
    if rs is None:
        raise ValueError(f"{path}: no known format (lm-eval samples, an Inspect log, "
                         "OpenAI-compatible responses); confeval reads it as it is")
    from ..records import ROW_COLUMN

    frame = rs.frame[rs.mask].drop(columns=[ROW_COLUMN]).reset_index(drop=True)
    return frame, {"n_read": rs.n_read, "n_used": int(rs.mask.sum()),
                   "excluded": rs.excluded, **({"notes": rs.notes} if rs.notes else {})}

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

from .formats import FORMATS, READERS, WARNINGS, SampleKey, Variants, detect, samples_of
from .layout import CONFIDENCE_SOURCES, Layout

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["EPOCHS", "NoLayout", "SeveralVariants", "import_records", "rating_levels",
           "read_records"]

EPOCHS = ("each", "first", "mean")
"""``--epochs``: one row per sample and epoch (``each``), the first epoch's only, or one row
per sample averaging its epochs (``mean``, Inspect's default reducer)."""


class SeveralVariants(ValueError):
    """A file scoring its samples under several filters or scorers (``names``) and none named:
    each is read on its own (``confeval score`` scores each; other commands say so in one
    line), never pooled. ``variants`` says which option names one."""

    def __init__(self, path: str | Path, variants: Variants, names: list[str]) -> None:
        super().__init__(f"{path}: {len(names)} {variants.kind}s, each scored on its own "
                         f"({', '.join(names)}): name one with {variants.flag} NAME")
        self.path = str(path)
        self.variants = variants
        self.names = names


class NoLayout(ValueError):
    """A file of a known format the suite has no layout for (``format``: which one), so that
    a caller who knows every suite can say which of them read it."""

    def __init__(self, message: str, fmt: str) -> None:
        super().__init__(message)
        self.format = fmt


def read_records(path: str | Path, layout: Layout | None, from_format: str = "auto",
                 normalise: str = "none", *, data: str | None = None,
                 levels: tuple[int, ...] = (1, 2, 3, 4, 5),
                 what: str = "records of this command", filter_name: str | None = None,
                 scorer: str | None = None, epochs: str = "each",
                 every_variant: bool = False) -> RecordSet | None:
    """``path`` in ``layout`` when it is a file of a known format (``auto``: recognised from
    the content), with each unusable sample an excluded row under its reason; None when it is
    confeval's own records (``none``, or no known format under ``auto``). A named format the
    file is not is a :class:`ValueError` naming the file, and a format ``layout`` does not
    read (or no layout: ``what`` names the records wanted) a :class:`NoLayout`.

    A file scoring each sample under several lm-eval filters or Inspect scorers is read under
    the one named (``filter_name``, ``scorer``; a name the file lacks is a
    :class:`ValueError` listing those it has); with several and none named, a
    :class:`SeveralVariants` (``every_variant``: all of them, each row naming its own —
    what ``confeval import`` writes). ``epochs`` (:data:`EPOCHS`) says what becomes of an Inspect
    sample's epochs. Where the rows bring no ``confidence`` column, the first of the
    layout's ``confidences`` the file holds becomes it, named in ``notes["confidence"]``."""
    from ..records import RecordSet
    from .lm_eval import NORMALISATIONS

    if from_format not in FORMATS:
        raise ValueError(f"--from {from_format!r}: choose from {', '.join(FORMATS)}")
    if normalise not in NORMALISATIONS:
        raise ValueError(f"--normalise {normalise!r}: choose from {', '.join(NORMALISATIONS)}")
    if epochs not in EPOCHS:
        raise ValueError(f"--epochs {epochs!r}: choose from {', '.join(EPOCHS)}")
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
    fmt = READERS[found]
    if epochs == "mean" and fmt.epoch is not None and not layout.averaged:
        raise ValueError(f"--epochs mean: {layout.what} cannot be averaged over epochs "
                         "(--epochs first or each)")
    for given, flag, reads in ((filter_name, "--filter", "lm-eval"),
                               (scorer, "--scorer", "inspect")):
        if given is not None and found != reads:
            raise ValueError(f"{path}: {flag} names what an {reads} file scores under; this "
                             f"is an {found} file")
    samples, sample_reasons, model, notes, variants = samples_of(path, found, layout, data,
                                                                 levels)
    chosen = None
    if fmt.variants is not None:
        named = {"filter_name": filter_name, "scorer": scorer}[fmt.variants.option]
        if named is None and not layout.verdicts:   # the same rows under each: the first
            named = next((v for v in variants if v is not None), None)
        if named is not None or not every_variant:
            samples, sample_reasons, chosen = _one_variant(path, fmt.variants, samples,
                                                           sample_reasons, variants, named)
    if epochs == "first" and fmt.epoch is not None:
        samples, sample_reasons = _first_epochs(samples, sample_reasons, fmt.epoch)
    key = "item_id" if found == "openai" else layout.key   # the data's ids name responses
    rows, reasons = _rows(samples, sample_reasons, layout.rows[found], normalise,
                          key=key, model=model, identity=fmt.key)
    if epochs == "mean" and fmt.epoch is not None:
        rows, reasons = _mean_over_epochs(rows, reasons, key, layout.averaged)
    if not rows:
        raise ValueError(f"{path}: an {found} file without a sample")
    rs = RecordSet.from_records(rows, str(path))
    rs.fmt = found
    rs.warnings.extend(notes.pop(WARNINGS, ()))
    rs.notes.update(notes)
    if chosen is not None and layout.verdicts and (found == "inspect" or chosen != "none"):
        rs.notes[fmt.variants.kind] = chosen
    if "gold_in_top_logprobs" in rs.frame.columns:
        rs.notes.update(_letters_missing(rs, reasons))
    if "letter_imputed" in rs.frame.columns:
        rs.warnings.extend(_letters_said(rs, reasons))
    _name_the_confidence(rs, layout, found, reasons)
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


def _one_variant(path: str | Path, spec: Variants, samples: list, reasons: list[str],
                 variants: list, named: str | None) -> tuple[list, list[str], str | None]:
    """The samples of the one filter or scorer ``named`` (lines naming none — a line that is
    no JSON object, a sample without scores — are counted under each), or of the file's only
    one; several and none named is :class:`SeveralVariants`."""
    names = list(dict.fromkeys(v for v in variants if v is not None))
    if named is None:
        if len(names) > 1:
            raise SeveralVariants(path, spec, names)
        return samples, reasons, (names[0] if names else None)
    if named not in names:
        raise ValueError(f"{path}: no {spec.kind} {named!r} ({spec.flag}; its {spec.kind}s: "
                         f"{', '.join(names) or 'none'})")
    keep = [v is None or v == named for v in variants]
    return ([s for s, k in zip(samples, keep) if k], [r for r, k in zip(reasons, keep) if k],
            named)


def _first_epochs(samples: list, reasons: list[str], epoch_of) -> tuple[list, list[str]]:
    """The samples of each id's first epoch (unusable ones naming no epoch kept, counted)."""
    first: dict = {}
    for sample in samples:
        if sample is not None:
            doc, epoch = epoch_of(sample)
            first[doc] = min(first.get(doc, epoch), epoch)
    keep = [s is None or epoch_of(s)[1] == first[epoch_of(s)[0]] for s in samples]
    return ([s for s, k in zip(samples, keep) if k], [r for r, k in zip(reasons, keep) if k])


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and bool(np.isfinite(value))


def _mean_over_epochs(rows: list[dict], reasons: list[str], key: str,
                      averaged: tuple[str, ...]) -> tuple[list[dict], list[str]]:
    """One row per sample id: the first usable epoch's row with each ``averaged`` column the
    mean over its usable epochs (``n_epochs`` of them); unusable epochs stay excluded rows."""
    groups: dict = {}
    for i, row in enumerate(rows):   # a sample under one scorer (import keeps every one)
        groups.setdefault((row.get(key), row.get("scorer")), []).append(i)
    out_rows, out_reasons = [], []
    for members in groups.values():
        usable = [i for i in members if not reasons[i]]
        if usable:
            row = {k: v for k, v in rows[usable[0]].items() if k != "epoch"}
            for column in averaged:
                values = [rows[i][column] for i in usable if _finite_number(rows[i].get(column))]
                if column in row or values:
                    row[column] = float(np.mean(values)) if values else None
            row["n_epochs"] = len(usable)
            out_rows.append(row)
            out_reasons.append("")
        for i in members:
            if reasons[i]:
                out_rows.append(rows[i])
                out_reasons.append(reasons[i])
    return out_rows, out_reasons


def _name_the_confidence(rs: RecordSet, layout: Layout, found: str, reasons: list[str]) -> None:
    """The rows' ``confidence``, named in ``notes["confidence"]``: the first of
    ``layout.confidences`` (the scorer's own) where at least half the usable rows hold it,
    else the column the rows bring (``layout.confidence_of``; then kept as ``p_letter`` when
    replaced), else the first of ``layout.confidences`` that at least half the usable rows
    hold (none does: the one most hold), copied into ``confidence``; none held: no
    ``confidence`` column, and the scoring names the flag that picks one."""
    import pandas as pd

    frame = rs.frame
    usable = np.array([not r for r in reasons])
    held = {column: float(np.isfinite(pd.to_numeric(frame[column], errors="coerce")
                                      .to_numpy(np.float64)[usable]).mean())
            for column in layout.confidences if column in frame.columns and usable.any()}
    held = {column: share for column, share in held.items() if share > 0}
    own = layout.confidences[:1]   # the scorer's own confidence comes before the rows'
    if "confidence" in frame.columns and not (own and held.get(own[0], 0) >= 0.5):
        if found in layout.confidence_of:
            rs.notes["confidence"] = layout.confidence_of[found]
        return
    if not held:
        return
    column = next((c for c, share in held.items() if share >= 0.5),
                  max(held, key=lambda c: held[c]))
    if "confidence" in frame.columns:
        frame["p_letter"] = frame["confidence"]   # the letters' reading, kept beside it
    frame["confidence"] = frame[column]
    what = CONFIDENCE_SOURCES.get(column, column)
    if column == "task_confidence" and "task_confidence_of" in frame.columns:
        what += f": {frame['task_confidence_of'].dropna().iloc[0]}"
    rs.notes["confidence"] = f"{column} ({what})"


def _letters_said(rs: RecordSet, reasons: list[str]) -> list[str]:
    """What an Inspect multiple-choice file's confidences are about, said where it matters: a
    letter imputed (the scorer named none: the most likely one stands for the answer), and
    confidences about the gold letter while the scorer said wrong (or about another letter
    while it said right) — the confidence and the verdict are then about different answers."""
    frame = rs.frame
    usable = np.array([not r for r in reasons]) & frame["letter"].notna().to_numpy()
    n = int(usable.sum())
    if not n:
        return []
    imputed = int((frame["letter_imputed"].to_numpy() == 1)[usable].sum())
    on_gold = (frame["letter"] == frame["target"]).to_numpy()
    correct = frame["correct"].to_numpy(np.float64)
    gold_wrong = int((usable & on_gold & (correct == 0)).sum())
    other_right = int((usable & ~on_gold & (correct == 1)).sum())
    said = []
    if imputed:
        said.append(f"{imputed} of {n} confidences are about an imputed letter: the scorer "
                    "named no letter, so the most likely option letter stands for the answer")
    if gold_wrong:
        said.append(f"{gold_wrong} of {n} rows have a confidence about the gold letter while "
                    "the scorer says wrong (it read another answer, or none)")
    if other_right:
        said.append(f"{other_right} of {n} rows have a confidence about a wrong letter while "
                    "the scorer says right")
    rs.notes["letters_read"] = {"rows": n, "letter_imputed": imputed,
                                "confidence_on_gold_scored_wrong": gold_wrong,
                                "confidence_on_other_scored_right": other_right}
    return said


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
                   levels: tuple[int, ...] = (1, 2, 3, 4, 5), filter_name: str | None = None,
                   scorer: str | None = None, epochs: str = "each") -> tuple[Any, dict]:
    """(the usable rows of another tool's file in ``layout``, the counts ``{n_read, n_used,
    excluded}``) — what ``confeval import`` writes: every lm-eval filter and Inspect scorer
    unless one is named, each row naming its own (``filter``, ``scorer``); a file of no known
    format is a :class:`ValueError` (there is nothing to import)."""
    rs = read_records(path, layout, from_format, normalise, data=data, levels=levels,
                      filter_name=filter_name, scorer=scorer, epochs=epochs,
                      every_variant=True)
    if rs is None:
        raise ValueError(f"{path}: no known format (lm-eval samples, an Inspect log, "
                         "OpenAI-compatible responses); confeval reads it as it is")
    from ..records import ROW_COLUMN

    frame = rs.frame[rs.mask].drop(columns=[ROW_COLUMN]).reset_index(drop=True)
    return frame, {"n_read": rs.n_read, "n_used": int(rs.mask.sum()),
                   "excluded": rs.excluded, **({"notes": rs.notes} if rs.notes else {}),
                   **({"warnings": rs.warnings} if rs.warnings else {})}

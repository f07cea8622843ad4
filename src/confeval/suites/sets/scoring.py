"""Scoring of multiple-choice records with conformal prediction sets (``confeval sets score``):
a record set read by :func:`~confeval.suites.sets.inputs.read_sets`, then the split-conformal
protocol of :mod:`confeval.conformal.protocol` (``exact`` or ``vlm-bench``, documented there)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...conformal.protocol import aggregate_seeds, score_sets, score_split
from ...records import RecordSet
from .inputs import read_sets
from .options import SetsOptions

__all__ = ["aggregate_seeds", "score_sets", "score_sets_file", "score_sets_records",
           "score_split"]

def score_sets_records(rs: RecordSet, options: SetsOptions | None = None) -> dict:
    """:func:`score_sets` on a record set (see :mod:`.inputs`) — the one path of ``confeval
    sets score`` on files and run folders and of a live run's sets section — with its row
    counts (``n_read``, ``n_used``, ``excluded``), its option letters and, where the records
    have it, the mean probability mass a model put outside the option letters."""
    options = options or SetsOptions()
    data = read_sets(rs, options)
    try:
        res = score_sets(data.probs, data.labels, alpha=options.alpha,
                         split_seed=options.split_seed, seeds=options.seeds,
                         scores=options.scores, protocol=options.protocol, groups=data.groups,
                         lam=options.lam, k_reg=options.k_reg, allow_empty=options.allow_empty)
    except ValueError as exc:
        raise ValueError(f"{rs.source}: {exc} (excluded: {rs.excluded or 'none'})") from None
    out = {**rs.summary(), "options": data.letters, **res}
    _note_tied_top(out, data.probs)
    if "mass_outside" in rs.frame.columns:
        outside = rs.numeric(["mass_outside"], what="mass_outside", allow_missing=True)[:, 0]
        used = outside[rs.mask]
        used = used[np.isfinite(used)]
        out["mean_mass_outside"] = float(used.mean()) if used.size else None
    return out


def _note_tied_top(out: dict, probs: np.ndarray) -> None:
    """Count the rows whose highest probability two options share in
    ``notes["tied_top_option"]``, with :func:`tied_top_warning`'s warning."""
    tied, warning = tied_top_warning(probs)
    if tied:
        out.setdefault("notes", {})["tied_top_option"] = tied
        out.setdefault("warnings", []).append(warning)


def tied_top_warning(probs: np.ndarray) -> tuple[int, str | None]:
    """(the rows whose highest probability two options share — all-equal logits, or equal
    after the float32 softmax — and a warning saying so, or None): accuracy and calibration
    take the first of them as the prediction, as numpy's argmax and the published protocol
    do, so on such rows the option order decides. Counted over every row used (each seed's
    test half is a share of them)."""
    top = probs.max(axis=1, keepdims=True)
    tied = int(((probs == top).sum(axis=1) > 1).sum())
    if not tied:
        return 0, None
    return tied, (f"{tied:,} of {probs.shape[0]:,} rows have a tied top option: their "
                  "prediction is the first tied option in column order (as argmax takes it)")


def score_sets_file(path: str | Path, options: SetsOptions | None = None) -> dict:
    """:func:`score_sets_records` on one record file or run folder.

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> from confeval.simulate import simulate
    >>> path = os.path.join(tempfile.mkdtemp(), "mcq.csv")
    >>> simulate("mcq", 400, seed=1).to_csv(path, index=False)
    >>> res = score_sets_file(path, SetsOptions(alpha=0.1, scores=("lac",)))
    >>> res["n_used"], res["scores"]["lac"]["coverage"] >= 0.85
    (400, True)
    """
    from . import SUITE

    options = options or SetsOptions()
    return score_sets_records(SUITE.load(path, options), options)

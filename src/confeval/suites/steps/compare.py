"""``confeval compare`` of process judges: CRS, CSS, CCS and their average on the items
(chains) every judge judged, from the same item resamples for every judge."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...metrics.bootstrap import resample_counts
from ...metrics.steps import encode_error_types, step_confidence
from ...records import RecordSet
from ..base import Comparison
from .inputs import ORIGINAL, step_frame
from .options import StepsOptions
from .scoring import _pairs, replicates_from_counts, score_steps

__all__ = ["COMPARISON", "compare_steps_metrics"]

_COMPARED_STEPS = {"crs": True, "css": True, "ccs": True, "avg": True}
"""ConfProBench's three scores and their average (all higher is better)."""


def _read_for_compare(rs: RecordSet, options: StepsOptions) -> dict:
    """The validated step rows; items (chains) are the unit: the item ids, one each."""
    frame = step_frame(rs, options.p_col, options.label_col, ())
    if not len(frame):
        raise ValueError(f"{rs.source}: no usable step rows (excluded: "
                         f"{rs.excluded or 'none'})")
    items = np.asarray(pd.unique(frame["item_id"].astype(str)), dtype=str)
    return {"item_id": items, "items": items, "frame": frame}


def compare_steps_metrics(aligned: dict[str, dict], options: StepsOptions) -> dict:
    """Every model's CRS, CSS, CCS and their average on the items (chains) all models judged,
    each as ``steps score`` reports it on those items; intervals, ranks and pairwise tests
    from the same resamples of items for every model (the suite's own item bootstrap, one
    matrix product per model; compare's --bootstrap and --seed are the options' here)."""
    from ...metrics.compare import PairedMetric

    shared = next(iter(aligned.values()))["items"]
    position = {item: i for i, item in enumerate(shared.tolist())}
    counts = np.concatenate(list(resample_counts(
        len(shared), options.bootstrap, np.random.default_rng(options.seed))))
    values: dict[str, dict] = {}
    reps: dict[str, dict] = {}
    for model, a in aligned.items():
        frame = a["frame"]
        frame = frame[frame["item_id"].astype(str).isin(position)].copy()
        res = score_steps(frame, config=options, n_resamples=0)
        values[model] = res
        frame["variant"] = frame["variant"].astype(str)
        frame["pred"], frame["c"] = step_confidence(frame.p_correct.to_numpy())
        frame["label"] = frame["label"].astype(np.int64)
        frame["_item"] = frame["item_id"].astype(str).map(position).to_numpy()
        frame["_type"], names = encode_error_types(frame.error_type.to_numpy(dtype=object),
                                                   frame.label.to_numpy())
        pairs, _ = _pairs(frame)
        reps[model] = replicates_from_counts(frame[frame.variant == ORIGINAL], pairs, options,
                                             names.size, counts)
    metrics = {}
    for metric, higher in _COMPARED_STEPS.items():
        if all(values[m].get(metric) is not None and metric in reps[m] for m in aligned):
            metrics[metric] = PairedMetric(
                None, {m: [] for m in aligned}, higher,
                values={m: values[m][metric] for m in aligned},
                replicates={m: reps[m][metric] for m in aligned}, units=len(shared))
    return metrics


COMPARISON = Comparison(_read_for_compare, compare_steps_metrics)
"""``confeval compare --suite steps``."""

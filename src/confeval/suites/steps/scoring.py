"""Scoring process-judge step records (``confeval steps score``): ConfProBench's CRS, CSS,
CCS, macro F1 and their average, overall, per perturbation type and per metadata group, with
bootstrap intervals that resample items (a chain's steps are not independent).

Records: one row per (item, step, variant) with ``item_id``, ``step``, ``variant``
(``original`` or a perturbation name), ``p_correct``, ``label`` (1 correct, 0 incorrect) and
``error_type`` (on incorrect steps). CSS, CCS and macro F1 use the original rows; CRS pairs
every perturbed row with the original row of the same (item, step). A perturbed row with no
original is *unpaired*: counted, not used. Two original rows for one (item, step) are an
error (the pairing would be ambiguous).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ...metrics import macro_f1
from ...metrics.bootstrap import percentile_interval, resample_counts
from ...metrics.calibration import uniform_bin_indices
from ...metrics.steps import (
    THRESHOLD_TOL,
    ccs_from_parts,
    confidence_calibration,
    confidence_robustness,
    crs_from_parts,
    encode_error_types,
    sensitivity_from_codes,
    step_confidence,
)
from ...records import RecordSet
from .inputs import ORIGINAL, step_frame, step_rows
from .options import StepsOptions

__all__ = ["generator_consistency", "score_generator_consistency", "score_step_rows",
           "score_steps", "score_steps_file", "step_rows"]



def _pairs(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Perturbed rows joined to their original (item, step); and the unpaired count."""
    original = frame[frame.variant == ORIGINAL]
    dup = original.duplicated(["item_id", "step"])
    if dup.any():
        first = original[dup].iloc[0]
        raise ValueError(f"{int(dup.sum())} duplicate original row(s), e.g. item "
                         f"{first.item_id!r} step {first.step}: CRS pairs would be ambiguous")
    perturbed = frame[frame.variant != ORIGINAL]
    pairs = perturbed.merge(original[["item_id", "step", "c", "_item"]],
                            on=["item_id", "step"], how="inner", suffixes=("", "_orig"))
    return pairs, int(len(perturbed) - len(pairs))


def _core(orig: pd.DataFrame, pairs: pd.DataFrame, cfg: StepsOptions, n_types: int,
          w_orig: np.ndarray | None = None, w_pairs: np.ndarray | None = None) -> dict:
    """Every headline metric on (optionally weighted) original rows and pairs."""
    p, y = orig.p_correct.to_numpy(), orig.label.to_numpy()
    out: dict = {}
    if len(pairs) and (w_pairs is None or w_pairs.sum() > 0):
        out.update(confidence_robustness(pairs.c_orig.to_numpy(), pairs.c.to_numpy(),
                                         epsilon=cfg.epsilon, delta=cfg.delta,
                                         scale=cfg.crs_scale, weights3=cfg.weights,
                                         weights=w_pairs))
    else:
        out.update(crs=None, ccr=None, accm=None, sccr=None)
    w = np.ones(len(orig)) if w_orig is None else w_orig
    if len(orig) and w.sum() > 0:
        sens = sensitivity_from_codes(p, y, orig._type.to_numpy(), n_types, w)
        out["css"], out["_delta"] = sens["css"], sens["delta"]
        out.update(confidence_calibration(p, y, n_bins=cfg.n_bins, scale=cfg.ccs_scale,
                                          weights=w))
    else:
        out.update(css=None, _delta=np.full(n_types, np.nan), ece=None, ece_correct=None,
                   ece_incorrect=None, delta_ece=None, ccs=None)
    parts = [out.get(k) for k in ("crs", "css", "ccs")]
    out["avg"] = (float(np.mean(parts)) if all(v is not None and np.isfinite(v)
                                                for v in parts) else None)
    return out


def _clean(values: dict) -> dict:
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v)
            for k, v in values.items()}


def _headline(orig, pairs, cfg, names) -> dict:
    core = _core(orig, pairs, cfg, names.size)
    delta = core.pop("_delta")
    core["delta_p"] = {n: float(d) for n, d in zip(names.tolist(), delta) if np.isfinite(d)}
    core["macro_f1"] = (macro_f1(orig.label.to_numpy(), orig.pred.to_numpy(), labels=[0, 1])
                        if len(orig) else None)
    core["n_original_rows"], core["pairs"] = len(orig), len(pairs)
    core.update(_judge_labels(orig, names))
    return _clean(core)


def _judge_labels(orig: pd.DataFrame, names: np.ndarray) -> dict:
    """With the optional ``pred_error_type`` / ``pred_label`` columns: how often the judge
    names the right error type on the typed incorrect steps it flags (l̂ = 0), and how often
    its own label agrees with l̂ from its probability."""
    out: dict = {}
    if "pred_error_type" in orig.columns:
        from ...parse.steps import normalise_error_type

        flagged = orig[(orig._type >= 0) & (orig.pred == 0)]
        if len(flagged):
            truth = names[flagged._type.to_numpy()]
            raw = flagged.pred_error_type.fillna("").astype(str)
            # one normalisation per distinct spelling, not per row
            pred = raw.map({v: normalise_error_type(v)[0] for v in raw.unique()}).to_numpy()
            out["error_type_accuracy"] = float(np.mean(pred == truth))
            out["n_error_type"] = len(flagged)
    if "pred_label" in orig.columns:
        given = pd.to_numeric(orig.pred_label, errors="coerce")
        known = given.notna().to_numpy()
        if known.any():
            out["label_agreement"] = float(np.mean(given.to_numpy()[known]
                                                   == orig.pred.to_numpy()[known]))
    return out


def _item_sums(item: np.ndarray, columns: list[np.ndarray], n_items: int) -> np.ndarray:
    """(n_items, len(columns)): each column summed over the rows of each item."""
    return np.stack([np.bincount(item, weights=c, minlength=n_items) for c in columns], axis=1)


def _bootstrap(orig, pairs, cfg, n_types, n_resamples, seed, level) -> dict:
    """Percentile intervals over resamples of items.

    Every metric here is a ratio of sums over rows, so a resample that draws item i k_i
    times changes each sum to sum_i k_i * (item i's sum). The item sums are computed once and
    all resamples are one matrix product: (resamples x items) @ (items x sums).
    """
    rng = np.random.default_rng(seed)
    n_items = int(max(orig._item.max() if len(orig) else -1,
                      pairs._item.max() if len(pairs) else -1)) + 1
    counts = np.concatenate(list(resample_counts(n_items, n_resamples, rng)))
    out = {}
    for k, arr in replicates_from_counts(orig, pairs, cfg, n_types, counts).items():
        low, high, n_undefined = percentile_interval(arr, level)
        if n_undefined < arr.size:
            out[k] = {"low": low, "high": high, "n_undefined": n_undefined}
    return out


def replicates_from_counts(orig, pairs, cfg, n_types, counts: np.ndarray
                           ) -> dict[str, np.ndarray]:
    """Every headline metric (but macro F1) on each resample of items: ``counts[r, i]`` is
    how often resample r drew item i (``_item`` codes index the columns)."""
    n_resamples, n_items = counts.shape
    out_reps: dict[str, np.ndarray] = {}
    if len(pairs):
        diff = np.abs(pairs.c_orig.to_numpy() - pairs.c.to_numpy())
        changed = (diff > cfg.epsilon + THRESHOLD_TOL).astype(np.float64)
        big = (diff > cfg.delta + THRESHOLD_TOL).astype(np.float64)
        S = counts @ _item_sums(pairs._item.to_numpy(),
                                [np.ones(diff.size), changed, diff * changed, big], n_items)
        with np.errstate(invalid="ignore", divide="ignore"):
            ccr, sccr = S[:, 1] / S[:, 0], S[:, 3] / S[:, 0]
            accm = np.where(S[:, 1] > 0, S[:, 2] / S[:, 1], 0.0)
        out_reps.update(ccr=ccr, accm=accm, sccr=sccr,
                        crs=crs_from_parts(ccr, accm, sccr, scale=cfg.crs_scale,
                                           weights3=cfg.weights))
    if len(orig):
        p, y = orig.p_correct.to_numpy(), orig.label.to_numpy()
        item = orig._item.to_numpy()
        ok = (y == 1).astype(np.float64)
        codes = orig._type.to_numpy()
        cols = [p * ok, ok]
        for t in range(n_types):
            typed = (codes == t).astype(np.float64)
            cols += [p * typed, typed]
        S = counts @ _item_sums(item, cols, n_items)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_ok = S[:, 0] / S[:, 1]
            deltas = np.stack([p_ok - S[:, 2 + 2 * t] / S[:, 3 + 2 * t]
                               for t in range(n_types)], axis=1) if n_types else \
                np.empty((n_resamples, 0))
            with warnings.catch_warnings():  # a resample with no correct step: NaN, counted
                warnings.simplefilter("ignore", RuntimeWarning)
                out_reps["css"] = (np.nanmean(deltas, axis=1) if n_types
                                   else np.full(n_resamples, np.nan))
        pred, conf = step_confidence(p)
        gap = (pred == y).astype(np.float64) - conf
        bins = uniform_bin_indices(conf, cfg.n_bins)
        eces = []
        for rows in (np.ones(y.size, bool), y == 1, y == 0):
            cols = [rows.astype(np.float64)] + [gap * (rows & (bins == m))
                                               for m in range(cfg.n_bins)]
            S = counts @ _item_sums(item, cols, n_items)
            with np.errstate(invalid="ignore", divide="ignore"):
                eces.append(np.abs(S[:, 1:]).sum(axis=1) / S[:, 0])
        out_reps["ece"], ece_c, ece_i = eces
        out_reps["delta_ece"] = np.abs(ece_c - ece_i)
        out_reps["ccs"] = ccs_from_parts(out_reps["ece"], out_reps["delta_ece"],
                                         scale=cfg.ccs_scale)
    if all(k in out_reps for k in ("crs", "css", "ccs")):
        out_reps["avg"] = (out_reps["crs"] + out_reps["css"] + out_reps["ccs"]) / 3
    return out_reps


def score_steps(records: pd.DataFrame, *, config: StepsOptions | None = None,
                group_cols: Sequence[str] = (), n_resamples: int = 1000, seed: int = 0,
                confidence_level: float = 0.95) -> dict:
    """All metrics of the steps suite from validated records (module docstring).

    ``records`` needs ``item_id, step, variant, p_correct, label, error_type`` with valid
    values (the CLI excludes and counts invalid rows first); optional ``pred_error_type`` and
    ``pred_label`` add ``error_type_accuracy`` and ``label_agreement``. Returns the headline
    metrics, ``delta_p``, ``by_perturbation``, ``by_group`` ({column: {value: metrics}}),
    ``unpaired_rows`` and, with ``n_resamples`` > 0, ``ci`` (item bootstrap, percentile).
    """
    config = config or StepsOptions()
    frame = records.copy()
    frame["variant"] = frame["variant"].astype(str)
    frame["pred"], frame["c"] = step_confidence(frame.p_correct.to_numpy())
    frame["label"] = frame["label"].astype(np.int64)
    frame["_item"] = pd.factorize(frame.item_id)[0]
    frame["_type"], names = encode_error_types(frame.error_type.to_numpy(dtype=object),
                                               frame.label.to_numpy())
    orig = frame[frame.variant == ORIGINAL]
    pairs, unpaired = _pairs(frame)
    out = _headline(orig, pairs, config, names)
    out["unpaired_rows"] = unpaired
    out["by_perturbation"] = {}
    for variant, part in pairs.groupby("variant", sort=True):
        r = confidence_robustness(part.c_orig.to_numpy(), part.c.to_numpy(),
                                  epsilon=config.epsilon, delta=config.delta,
                                  scale=config.crs_scale, weights3=config.weights)
        out["by_perturbation"][str(variant)] = {**r, "pairs": len(part)}
    out["by_group"] = {}
    for col in group_cols:
        if col not in frame.columns:
            raise ValueError(f"group column {col!r} not in the records")
        # a pair belongs to the group of its original row
        keyed = pairs.drop(columns=[col], errors="ignore").merge(
            orig[["item_id", "step", col]], on=["item_id", "step"])
        out["by_group"][col] = {
            str(value): _headline(orig[orig[col] == value], keyed[keyed[col] == value], config,
                                  names)
            for value in sorted(orig[col].dropna().unique(), key=str)}
    if n_resamples > 0:
        out["ci"] = _bootstrap(orig, pairs, config, names.size, n_resamples, seed,
                               confidence_level)
        out["ci_method"] = (f"percentile, {n_resamples} resamples of items "
                            f"({frame._item.nunique()} items), seed {seed}")
    return out


def generator_consistency(first: dict, second: dict,
                          metrics: Sequence[str] = ("crs", "css", "ccs")) -> dict:
    """Do two perturbation generators rank judges alike? (the paper's Appendix H).

    ``first`` and ``second`` map a judge's name to its results (any mapping with the
    ``metrics`` keys) on a dataset perturbed by one generator and by the other. Returns, per
    metric, the Pearson and Spearman correlations across the judges both contain, and the
    judges' paired values.

    Examples
    --------
    >>> a = {"j1": {"crs": .58}, "j2": {"crs": .78}, "j3": {"crs": .71}}
    >>> b = {"j1": {"crs": .57}, "j2": {"crs": .77}, "j3": {"crs": .71}}
    >>> round(generator_consistency(a, b, ["crs"])["crs"]["pearson"], 4)
    0.9985
    """
    from ...metrics import pearson, spearman

    judges = sorted(set(first) & set(second), key=str)
    if len(judges) < 3:
        raise ValueError(f"need at least 3 judges scored on both datasets, got {len(judges)}")
    out: dict = {"judges": judges}
    for m in metrics:
        pairs = [(first[j].get(m), second[j].get(m)) for j in judges]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
        xs, ys = np.array(pairs, dtype=np.float64).T if pairs else (np.array([]),) * 2
        out[m] = {"pearson": pearson(xs, ys) if len(pairs) >= 3 else None,
                  "spearman": spearman(xs, ys) if len(pairs) >= 3 else None,
                  "n_judges": len(pairs),
                  "values": {j: [first[j].get(m), second[j].get(m)] for j in judges}}
    return out


def score_step_rows(rs: RecordSet, options: StepsOptions | None = None) -> dict:
    """:func:`score_steps` on step rows (see :mod:`.inputs`) — the one path of ``confeval
    steps score`` on files and run folders and of a live run — with the rows' counts
    (``n_read``, ``n_used``, ``excluded``, ``invalid_rows``)."""
    options = options or StepsOptions()
    frame = step_frame(rs, options.p_col, options.label_col, options.group_cols)
    if not len(frame):
        raise ValueError(f"{rs.source}: no usable step rows (excluded: "
                         f"{rs.excluded or 'none'})")
    try:
        res = score_steps(frame, config=options, group_cols=options.group_cols,
                          n_resamples=options.bootstrap, seed=options.seed)
    except ValueError as exc:
        raise ValueError(f"{rs.source}: {exc}") from None
    summary = rs.summary()
    return {**summary, "invalid_rows": int(summary["n_read"] - summary["n_used"]), **res}


def score_steps_file(path: str | Path, options: StepsOptions | None = None) -> dict:
    """:func:`score_step_rows` on one step record file or a ``steps run`` folder (its
    records' steps). Two runs of one judge on the same items — scored and generated answers,
    say — are compared in one report by scoring both folders in one command."""
    from . import SUITE

    return score_step_rows(SUITE.load_own(Path(path)), options)


def score_generator_consistency(pairs: Sequence[str]) -> dict:
    """:func:`generator_consistency` from ``JUDGE=RECORDS_A,RECORDS_B`` specs: each judge's step
    records on the dataset perturbed by generator A and by generator B; ``inputs`` gives every
    file's rows read, used and excluded by reason."""
    first, second, inputs = {}, {}, {}
    for spec in pairs:
        judge, sep, files = spec.partition("=")
        paths = files.split(",")
        if not sep or len(paths) != 2 or not judge:
            raise ValueError(f"--pair {spec!r}: use JUDGE=RECORDS_A,RECORDS_B")
        for target, path, side in zip((first, second), paths, "AB"):
            rs = RecordSet.read(Path(path))
            frame = step_frame(rs)
            try:
                target[judge] = score_steps(frame, n_resamples=0)
            except ValueError as exc:
                raise ValueError(f"{path}: {exc} (excluded: {rs.excluded or 'none'})") from None
            summary = rs.summary()
            inputs.setdefault(judge, {})[side] = {k: summary[k] for k in (
                "source", "n_read", "n_used", "excluded")}
    return {**generator_consistency(first, second), "inputs": inputs}

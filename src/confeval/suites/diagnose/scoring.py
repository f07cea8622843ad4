"""Scoring error diagnoses (MMErroR): accuracy as the paper reports it, and what it hides.

* ``accuracy_strict`` — correct / all items, an unparseable reply counting as wrong: the
  paper's Total (every printed Total is k / 1,997). ``accuracy_parsed`` — correct / parsed, with
  ``parse_rate``; the two diverge exactly on models that disobey the format.
* Per domain and subdomain: ``{n, correct, accuracy, ci}`` (strict; Wilson 95% interval from
  scipy's ``binomtest``: CM has only 159 items, so cells are wide).
* Per gold type: recall (= the type's accuracy), precision, F1; ``macro_f1`` over the types
  present in gold or predictions; ``confusion`` gold -> predicted (``unparseable`` a column of
  its own); Cohen's ``kappa`` against gold (scikit-learn; unparseable a category of its own),
  which corrects for the skewed prior (KDE is 44% of MMErroR).
* ``baselines``: random guessing — its expectation (ETC 1/4, single-prompt EPD 1/5, two-stage
  EPD 1/2 x 1/4 = 1/8 on an erroneous chain and 1/2 on an error-free one) and a seeded
  simulation of ``n_simulations`` random guessers over the same items (mean and 95% percentile
  interval); the majority class (always the most frequent gold type); an optional human row.
* :func:`epd_drop` for paired ETC and EPD runs on the same items: the drop EPD - ETC with a
  paired bootstrap interval and p-value over items, split into missed detections (ETC right,
  EPD said "no error"), changed types (ETC right, EPD another type), EPD replies that could not
  be parsed, and gains (ETC wrong, EPD right); the detection rate and the type accuracy given
  detection; on error-free chains the false-positive rate, TPR and balanced accuracy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ... import metrics as M
from ...records import RecordSet
from ...taxonomy import MMERROR_LETTER_ORDER
from .inputs import load_diagnoses, read_diagnoses
from .options import PROTOCOL_TYPES, DiagnoseOptions

__all__ = ["ablation_summary", "add_epd_drops", "epd_drop", "epd_drop_files", "presence_rates",
           "read_human_row",
           "score_diagnosis", "score_diagnosis_file", "score_diagnosis_records"]


UNPARSEABLE = "unparseable"


def _cells(correct: np.ndarray, groups: np.ndarray | None) -> dict | None:
    if groups is None:
        return None
    out = {}
    for g in sorted(set(groups.tolist()), key=str):
        sel = groups == g
        k, n = int(correct[sel].sum()), int(sel.sum())
        out[str(g)] = {"n": n, "correct": k, "accuracy": k / n, "ci": M.proportion_ci(k, n)}
    return out


def _by_type(gold: np.ndarray, pred: np.ndarray, types: Sequence[str]) -> tuple[dict, float]:
    out, f1s = {}, []
    for t in types:
        n, predicted = int((gold == t).sum()), int((pred == t).sum())
        if n == 0 and predicted == 0:
            continue
        hit = int(((gold == t) & (pred == t)).sum())
        recall = hit / n if n else None
        precision = hit / predicted if predicted else None
        f1 = 2 * hit / (n + predicted)
        out[t] = {"n": n, "correct": hit, "recall": recall, "precision": precision, "f1": f1,
                  "n_predicted": predicted}
        f1s.append(f1)
    return out, float(np.mean(f1s)) if f1s else float("nan")


def _confusion(gold: np.ndarray, labels: np.ndarray, types: Sequence[str]) -> dict:
    columns = [*types, UNPARSEABLE]
    present = [t for t in types if (gold == t).any()]
    return {g: {p: int(((gold == g) & (labels == p)).sum()) for p in columns} for g in present}


def _random_baseline(gold: np.ndarray, protocol: str, n_simulations: int, seed: int) -> dict:
    types = PROTOCOL_TYPES[protocol]
    erroneous = gold != "no_error"
    if protocol == "epd":  # stage 1 P/N at random, then one of four types
        expected = float(np.where(erroneous, 1 / 8, 1 / 2).mean())
    else:
        expected = 1 / len(types)
    out = {"expected": expected, "n_simulations": n_simulations, "seed": seed}
    if n_simulations:
        rng = np.random.default_rng(seed)
        codes = np.array([list(MMERROR_LETTER_ORDER).index(g) for g in gold])
        if protocol == "epd":
            says_error = rng.random((n_simulations, gold.size)) < 0.5
            guess = rng.integers(0, 4, size=(n_simulations, gold.size))
            hit = np.where(erroneous, says_error & (guess == codes), ~says_error)
        else:
            hit = rng.integers(0, len(types), size=(n_simulations, gold.size)) == codes
        acc = hit.mean(axis=1)
        low, high, _ = M.percentile_interval(acc, 0.95)
        out.update(mean=float(acc.mean()), ci={"low": low, "high": high})
    return out


def _majority(gold: np.ndarray) -> dict:
    counts = Counter(gold.tolist())
    top = max(sorted(counts), key=lambda t: counts[t])
    return {"type": top, "accuracy": counts[top] / gold.size,
            "shares": {t: c / gold.size for t, c in sorted(counts.items())}}


def score_diagnosis(gold: Sequence, pred: Sequence, *, protocol: str = "etc",
                    domains: Sequence | None = None, subdomains: Sequence | None = None,
                    failures: Mapping[str, int] | None = None, human: Mapping | None = None,
                    n_simulations: int = 1000, seed: int = 0) -> dict:
    """Every metric of the module docstring for gold and predicted type keys (``None`` =
    unparseable) of one run.

    Examples
    --------
    >>> r = score_diagnosis(["re", "kde", "kde", "vpe"], ["re", "kde", None, "re"],
    ...                     n_simulations=0)
    >>> r["accuracy_strict"], r["accuracy_parsed"], r["parse_rate"]
    (0.5, 0.6666666666666666, 0.75)
    """
    if protocol not in PROTOCOL_TYPES:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOL_TYPES)}")
    gold = np.asarray(list(gold), dtype=object)
    pred = np.asarray(list(pred), dtype=object)
    if gold.size != pred.size or gold.size == 0:
        raise ValueError("need one prediction per gold type, and at least one item")
    types = PROTOCOL_TYPES[protocol]
    bad = sorted(set(gold.tolist()) - set(types))
    if bad:
        raise ValueError(f"gold types {bad} are not answers of protocol {protocol!r} "
                         f"({', '.join(types)}); error-free chains need an EPD protocol")
    parsed = np.array([p is not None for p in pred])
    correct = (gold == pred) & parsed
    labels = np.where(parsed, pred, UNPARSEABLE)
    n, k, n_parsed = gold.size, int(correct.sum()), int(parsed.sum())
    by_type, macro_f1 = _by_type(gold, labels, types)
    result = {
        "protocol": protocol, "n": n, "correct": k, "n_parsed": n_parsed,
        "accuracy_strict": k / n, "ci": M.proportion_ci(k, n),
        "accuracy_parsed": k / n_parsed if n_parsed else None, "parse_rate": n_parsed / n,
        "failures": dict(failures or {}),
        "by_domain": _cells(correct, None if domains is None else np.asarray(domains)),
        "by_subdomain": _cells(correct, None if subdomains is None else np.asarray(subdomains)),
        "by_type": by_type, "macro_f1": macro_f1,
        "confusion": _confusion(gold, labels, types), "kappa": M.cohen_kappa(gold, labels),
        "baselines": {"random": _random_baseline(gold, protocol, n_simulations, seed),
                      "majority": _majority(gold)},
    }
    if result["by_domain"]:
        result["macro_domain_accuracy"] = float(np.mean(
            [c["accuracy"] for c in result["by_domain"].values()]))
    if human is not None:
        result["baselines"]["human"] = dict(human)
    return result


def epd_drop(ids_etc: Sequence, gold_etc: Sequence, pred_etc: Sequence, ids_epd: Sequence,
             gold_epd: Sequence, pred_epd: Sequence, *, bootstrap: int = 1000,
             seed: int = 0) -> dict:
    """The ETC -> EPD comparison on the items both runs have (module docstring).

    Examples
    --------
    >>> d = epd_drop(["a", "b", "c", "d"], ["re"] * 4, ["re", "re", "re", "kde"],
    ...              ["a", "b", "c", "d"], ["re"] * 4, ["re", "no_error", "kde", "re"],
    ...              bootstrap=0)
    >>> d["drop"], d["split"]["missed_detection"], d["split"]["type_changed"], d["split"]["gained"]
    (-0.25, 1, 1, 1)
    """
    etc = {str(i): (g, p) for i, g, p in zip(ids_etc, gold_etc, pred_etc)}
    epd = {str(i): (g, p) for i, g, p in zip(ids_epd, gold_epd, pred_epd)}
    common = [i for i in etc if i in epd]
    if not common:
        raise ValueError("the ETC and EPD runs share no item id")
    conflicting = [i for i in common if etc[i][0] != epd[i][0]]
    if conflicting:
        raise ValueError(f"{len(conflicting)} item(s) have different gold types in the two "
                         f"runs, e.g. {conflicting[0]!r}")
    gold = np.array([etc[i][0] for i in common], dtype=object)
    p_etc = np.array([etc[i][1] for i in common], dtype=object)
    p_epd = np.array([epd[i][1] for i in common], dtype=object)
    c_etc = (p_etc == gold).astype(float)
    c_epd = (p_epd == gold).astype(float)
    lost = (c_etc == 1) & (c_epd == 0)
    out = {"n_paired": len(common), "n_only_etc": len(etc) - len(common),
           "n_only_epd": len(epd) - len(common),
           "etc_accuracy": float(c_etc.mean()), "epd_accuracy": float(c_epd.mean()),
           "drop": float(c_epd.mean() - c_etc.mean()),
           "split": {"missed_detection": int((lost & (p_epd == "no_error")).sum()),
                     "type_changed": int((lost & (p_epd != "no_error")
                                          & np.array([p is not None for p in p_epd])).sum()),
                     "unparseable": int((lost & np.array([p is None for p in p_epd])).sum()),
                     "gained": int(((c_etc == 0) & (c_epd == 1)).sum())}}
    if bootstrap:
        diff = M.paired_bootstrap(np.mean, (c_epd,), (c_etc,), n_resamples=bootstrap, seed=seed)
        out["ci"] = {"low": diff.low, "high": diff.high}
        out["p_value"] = diff.p_value
    out.update(presence_rates(gold, p_epd))
    return out


def presence_rates(gold: np.ndarray, pred: np.ndarray) -> dict:
    """Detection on erroneous chains and false positives on error-free ones (parsed replies)."""
    parsed = np.array([p is not None for p in pred])
    erroneous = (gold != "no_error") & parsed
    says_error = np.array([p not in (None, "no_error") for p in pred])
    out = {}
    if erroneous.any():
        detected = erroneous & says_error
        out["detection_rate"] = float(detected.sum() / erroneous.sum())
        out["type_accuracy_given_detection"] = (
            float(((pred == gold) & detected).sum() / detected.sum()) if detected.any() else None)
    clean = (gold == "no_error") & parsed
    if clean.any():
        fpr = float((clean & says_error).sum() / clean.sum())
        out["false_positive_rate"] = fpr
        if "detection_rate" in out:
            out["balanced_accuracy"] = (out["detection_rate"] + 1 - fpr) / 2
    return out


def score_diagnosis_records(rs: RecordSet, options: DiagnoseOptions | None = None, *,
                            human: Mapping | None = None) -> dict:
    """:func:`score_diagnosis` on a record set — the one path of ``confeval diagnose score``
    on files, run folders and the authors' ``latest.json``, and of a live run — with its row
    counts; ``human`` an optional human row ``{domain or "total": accuracy}``.

    Records of a live run carry more, and whatever a record set has is scored: a ``status``
    of ``excluded`` leaves the row out under its ``reason``; a failed row's ``reason`` names
    its failure; ``answer`` (the answer modes), ``p_error_present`` (AUROC of telling
    erroneous from error-free chains) and presence rates on EPD protocols, ``letters`` and
    ``probs`` (letter and type pick rates, class-wise ECE, multi-class Brier, conformal sets
    over the types at ``options.alpha``: marginal, Mondrian by gold type and by domain) and
    ``answers`` (the ablation)."""
    options = options or DiagnoseOptions()
    data = read_diagnoses(rs, options)
    try:
        res = score_diagnosis(data.gold, data.pred, protocol=options.protocol,
                              domains=data.domains, subdomains=data.subdomains,
                              failures=data.failures, n_simulations=options.n_simulations,
                              seed=options.seed, human=human)
    except ValueError as exc:
        raise ValueError(f"{rs.source}: {exc} (excluded: {rs.excluded or 'none'})") from None
    rows = _plain_rows(rs)
    if "answer" in rs.frame:
        res["answer"] = sorted({str(r["answer"]) for r in rows if r.get("answer")})
    if options.protocol != "etc":
        res["presence"] = presence_rates(data.gold, data.pred)
        if "p_error_present" in rs.frame:
            auroc = _presence_auroc(rs, data.gold)
            res.update(auroc)
            res["presence"].update(auroc)
    res.update(_letters_and_probabilities(rows, options.protocol))
    sets = _type_sets(rows, options)
    if sets:
        res["conformal_sets"] = sets
    if "answers" in rs.frame:
        res["ablation"] = ablation_summary(rows, bootstrap=options.bootstrap, seed=options.seed)
    summary = rs.summary()
    return {"n_read": summary["n_read"], "n_used": summary["n_used"],
            "excluded": summary["excluded"], **res}


def score_diagnosis_file(path: str | Path, options: DiagnoseOptions | None = None) -> dict:
    """:func:`score_diagnosis_records` on one record file, run folder or the authors'
    ``latest.json``, with the human row of ``options.human`` when given (the suite's scoring
    path)."""
    from . import SUITE

    options = options or DiagnoseOptions()
    return SUITE.score(SUITE.load(path, options), options)


def read_human_row(path: str | Path) -> tuple[dict[str, float], dict[str, int]]:
    """A human row ``{domain or "total": accuracy}`` from a CSV/JSONL with ``domain`` and
    ``accuracy`` (fractions in [0, 1]), and the rows left out by reason (a text, a
    percentage, a missing domain); none usable is an error naming the file."""
    rs = RecordSet.read(Path(path))
    values = rs.numeric(["accuracy"], lo=0.0, hi=1.0, what="accuracy")[:, 0]
    domains = rs.groups("domain", what="domain")
    keep = rs.mask
    if not keep.any():
        raise ValueError(f"{path}: no usable human accuracy (fractions in [0, 1]); "
                         f"excluded: {rs.excluded}")
    return {str(d): float(v) for d, v in zip(domains[keep], values[keep])}, rs.excluded


def add_epd_drops(results: dict[str, dict], pairs, options: DiagnoseOptions) -> None:
    """``--pair ETC_FILE,EPD_FILE`` of ``confeval diagnose score``: the EPD drop of each pair,
    under its ETC file's results."""
    for spec in pairs:
        etc_file, _, epd_file = str(spec).partition(",")
        if not epd_file:
            raise ValueError(f"--pair must be ETC_FILE,EPD_FILE, got {spec!r}")
        results.setdefault(etc_file, {})["epd_drop"] = epd_drop_files(etc_file, epd_file,
                                                                      options)


def _plain_rows(rs: RecordSet) -> list[dict]:
    """The usable rows as records (missing cells as None, lists and dicts as they are)."""
    frame = rs.frame.loc[rs.mask]
    return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def _presence_auroc(rs: RecordSet, gold: np.ndarray) -> dict:
    """AUROC of P(error present) for telling erroneous from error-free chains (both
    needed)."""
    p = np.asarray(_numeric(rs.frame["p_error_present"]))[rs.mask]
    erroneous = (gold != "no_error").astype(float)
    ok = np.isfinite(p)
    if not ok.any() or not 0 < erroneous[ok].mean() < 1:
        return {}
    return {"auroc_p_error_present": M.auroc(p[ok], erroneous[ok])}


def _letters_and_probabilities(rows: list[dict], protocol: str) -> dict:
    """How often each offered letter and each type was chosen (under ``--permute`` a letter
    preference shows as an even letter rate with an uneven type rate, or the reverse), and the
    class-wise ECE and multi-class Brier score of the type probabilities when recorded."""
    picked = [r for r in rows if r.get("pred_type") and isinstance(r.get("letters"), dict)]
    out: dict = {}
    if picked:
        letters: dict[str, int] = {}
        types: dict[str, int] = {}
        for r in picked:
            by_type = {t: k for k, t in r["letters"].items()}
            letter = by_type.get(r["pred_type"], "E" if r["pred_type"] == "no_error" else "?")
            letters[letter] = letters.get(letter, 0) + 1
            types[r["pred_type"]] = types.get(r["pred_type"], 0) + 1
        out["letter_pick_rate"] = {k: v / len(picked) for k, v in sorted(letters.items())}
        out["type_pick_rate"] = {k: v / len(picked) for k, v in sorted(types.items())}
    probs, labels, _ = _type_probabilities(rows, protocol)
    if probs is not None and len(labels) >= 2:
        out["classwise_ece"] = M.classwise_calibration_error(probs, labels)
        out["multiclass_brier"] = M.multiclass_brier_score(probs, labels)
    return out


def _type_probabilities(rows: list[dict], protocol: str):
    """The recorded probabilities over the protocol's types, the gold indices and the rows
    they come from (rows with a confidence: a distribution was read)."""
    with_probs = [r for r in rows if isinstance(r.get("probs"), dict)
                  and r.get("confidence") is not None]
    if not with_probs:
        return None, np.array([], dtype=int), []
    order = list(PROTOCOL_TYPES[protocol])
    probs = np.array([[float(r["probs"].get(t, 0.0)) for t in order] for r in with_probs])
    labels = np.array([order.index(r["gold_type"]) for r in with_probs])
    return probs, labels, with_probs


def _type_sets(rows: list[dict], options: DiagnoseOptions) -> dict:
    """Conformal sets over the types from the recorded probabilities (the sets suite's exact
    protocol at ``options.alpha``): marginal, and Mondrian by gold type and by domain."""
    from ...conformal.protocol import score_sets

    probs, labels, used = _type_probabilities(rows, options.protocol)
    if probs is None or len(used) < 8:
        return {}
    results = {}
    for name, groups in (("marginal", None),
                         ("Mondrian by gold type", np.array([r["gold_type"] for r in used])),
                         ("Mondrian by domain", np.array([str(r.get("domain")) for r in used]))):
        try:
            with np.errstate(all="ignore"):
                results[name] = {**score_sets(probs, labels, alpha=options.alpha,
                                              split_seed=options.seed + 42, groups=groups),
                                 "n_used": len(used)}
        except ValueError as exc:
            results[name] = {"error": str(exc)}
    return results


def _numeric(values) -> np.ndarray:
    """A column as floats, NaN where a cell is not a number."""
    import pandas as pd

    return pd.to_numeric(values, errors="coerce").to_numpy(np.float64)


def epd_drop_files(etc_path: str | Path, epd_path: str | Path,
                   config: DiagnoseOptions | None = None) -> dict:
    """:func:`epd_drop` between an ETC and an EPD record file (items joined on ``id_col``)."""
    from dataclasses import replace

    config = config or DiagnoseOptions()
    etc = read_diagnoses(load_diagnoses(Path(etc_path)), replace(config, protocol="etc"))
    epd = read_diagnoses(load_diagnoses(Path(epd_path)), replace(config, protocol="epd5"))
    if etc.ids is None or epd.ids is None:
        raise ValueError(f"pairing ETC and EPD runs needs an item id column ({config.id_col!r})")
    return epd_drop(etc.ids, etc.gold, etc.pred, epd.ids, epd.gold, epd.pred,
                    bootstrap=config.bootstrap, seed=config.seed)


def _gap(answer: np.ndarray, diagnosed: np.ndarray) -> float:
    right, wrong = answer[diagnosed == 1], answer[diagnosed == 0]
    return float(right.mean() - wrong.mean()) if right.size and wrong.size else float("nan")


def ablation_summary(records: Sequence[Mapping], *, bootstrap: int = 1000, seed: int = 0
                     ) -> dict:
    """Answer accuracy per input condition (``records[i]["answers"][condition]["correct"]``;
    unreadable answers count as wrong) with Wilson intervals, and the diagnosis <-> answer
    link: plain-question accuracy on items diagnosed right vs wrong, and its difference with a
    bootstrap interval over items.

    Examples
    --------
    >>> recs = [{"correct": 1, "answers": {"question": {"correct": 1}}},
    ...         {"correct": 0, "answers": {"question": {"correct": 0}}}]
    >>> ablation_summary(recs, bootstrap=0)["link"]["difference"]
    1.0
    """
    by_condition: dict[str, list[int]] = {}
    for r in records:
        for condition, a in (r.get("answers") or {}).items():
            by_condition.setdefault(condition, []).append(int(a.get("correct") or 0))
    out: dict = {"conditions": {c: {"n": len(v), "correct": int(sum(v)),
                                    "accuracy": sum(v) / len(v), "ci": M.proportion_ci(sum(v),
                                                                                     len(v))}
                                for c, v in by_condition.items()}}
    pairs = [(int((r.get("answers") or {}).get("question", {}).get("correct") or 0),
              int(r["correct"] or 0)) for r in records
             if "question" in (r.get("answers") or {}) and r.get("correct") is not None]
    if pairs:
        answer, diagnosed = (np.array(x, dtype=float) for x in zip(*pairs))
        link: dict = {"n_diagnosed_right": int(diagnosed.sum()),
                      "n_diagnosed_wrong": int((1 - diagnosed).sum()),
                      "accuracy_if_right": float(answer[diagnosed == 1].mean())
                      if diagnosed.any() else None,
                      "accuracy_if_wrong": float(answer[diagnosed == 0].mean())
                      if (1 - diagnosed).any() else None,
                      "difference": _gap(answer, diagnosed)}
        if bootstrap and diagnosed.any() and (1 - diagnosed).any():
            ci = M.bootstrap_ci(_gap, answer, diagnosed, n_resamples=bootstrap, seed=seed)
            link["ci"] = {"low": ci.low, "high": ci.high}
        out["link"] = link
    return out

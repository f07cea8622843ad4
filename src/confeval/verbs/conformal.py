"""``confeval NAME calibrate`` and ``confeval NAME apply`` for every suite with a conformal
predictor (:meth:`confeval.suites.base.Suite.conformal`: the sets suite's prediction sets, the
intervals suite's rating intervals) — written once against the suite object.

Calibrate: every usable row of the input calibrates the suite's step with the suite's own
options (a run folder's, overridden only by those given) and the step's choices; the result is
``conformal.json`` — the suite, its options and choices, the predictor's state (numbers and
names only: the score or method, alpha, q_hat), the promise in words, the calibration file's
SHA-256, two calibration summaries for the validity checks (each item's label-free confidence,
and its true label's nonconformity score; :func:`confeval.validity.summarise_calibration`) and
a digest of all of it.

Apply: ``conformal.json`` checked in full, then each new file predicted (a set or an interval
per row), and the promise checked (:mod:`confeval.verbs.promise`): when every file carries the
truth, its nonconformity scores are tested against the calibration's — exactly the
exchangeability the coverage rests on — and the realised miscoverage is watched by an
anytime-valid confidence sequence with an alarm when its lower bound reaches alpha; otherwise
the label-free confidences are tested.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..suites import SUITES
from ..suites.base import Suite
from ..suites.options import build, options_and_choice, to_json
from ._sealed import check_summary, digest, field_error, load_document
from .promise import (
    Observed,
    ValidityOptions,
    batch_files,
    check_validity,
    distributions,
    watch_risk,
)
from .score import load

__all__ = ["CONFORMAL_FILE", "CONFORMAL_VERSION", "Calibrated", "Predictions",
           "apply_conformal", "apply_result", "calibrate_input", "conformal_config",
           "conformal_section", "conformal_suites", "read_conformal", "rerun_conformal"]

CONFORMAL_VERSION = 1
CONFORMAL_FILE = "conformal.json"
"""The file ``NAME calibrate --out DIR`` writes into its run folder."""


def conformal_suites() -> dict[str, Suite]:
    """The suites with a conformal predictor to calibrate and apply, by name."""
    return {name: suite for name, suite in SUITES.items() if suite.conformalises}


def _rewrite(suite: str) -> str:
    return f"predictor again with `confeval {suite} calibrate --out`"


@dataclasses.dataclass
class Calibrated:
    """One input calibrated: ``conformal.json`` (``document``) and the command's JSON result."""

    document: dict
    result: dict


def _options(suite: Suite, path: str | Path, values: Mapping[str, Any],
             explicit: frozenset[str] | set[str]) -> tuple[Any, Any]:
    """(the suite's options, the step's choice) from the values given."""
    return options_and_choice(suite.Options, suite.conformal().Options, path, values,
                              explicit, suite=suite.name,
                              whose=f"`confeval {suite.name} calibrate`")


def calibrate_input(suite: Suite, path: str | Path, values: Mapping[str, Any],
                    explicit: frozenset[str] | set[str] = frozenset()) -> Calibrated:
    """Calibrate ``suite``'s conformal step on every usable row of ``path``."""
    from .. import __version__
    from .._validation import record_file
    from ..runs import file_sha256
    from .guarantee import validity_summary

    step = suite.conformal()
    suite_options, choice = _options(suite, path, values, explicit)
    done = step.calibrate(load(suite, path, suite_options), suite_options, choice)
    data = record_file(path)
    n = int(done.scores.size)
    document = {
        "conformal_version": CONFORMAL_VERSION, "suite": suite.name,
        "applies_to": {"options": to_json(suite_options), "choice": to_json(choice)},
        "state": done.state, "promise": step.promise(done.state), "n_calibration": n,
        "calibration_data": {"file": str(Path(path).name if data == Path(path) else
                                         Path(Path(path).name) / data.name),
                             "sha256": file_sha256(data)},
        "validity": {"confidence": validity_summary(done.confidence),
                     "scores": validity_summary(done.scores)},
        "confeval_version": __version__}
    document["digest"] = digest(document)
    summary = done.records.summary()
    result = {"suite": suite.name, "state": done.state, "promise": document["promise"],
              "n_calibration": n,
              **{k: v for k, v in summary.items() if k in ("n_read", "n_used", "excluded")}}
    return Calibrated(document, result)


def read_conformal(path: str | Path) -> dict:
    """A ``conformal.json`` checked in full — its version, its suite, its options and
    choices, its state (by the suite's step), its calibration summaries and its digest — else
    one :class:`ValueError` naming the file and the field."""
    path = Path(path)
    doc = load_document(path, "conformal predictor")
    if not isinstance(doc, dict) or doc.get("conformal_version") != CONFORMAL_VERSION:
        raise ValueError(f"{path}: not a confeval conformal predictor (written by `confeval "
                         f"SUITE calibrate --out`, conformal_version {CONFORMAL_VERSION})")
    suites = conformal_suites()
    name = doc.get("suite")
    if name not in suites:
        raise field_error(path, "suite", f"is {name!r}, not one of {', '.join(suites)}",
                          "predictor again with `confeval SUITE calibrate --out`")
    rewrite = _rewrite(name)
    if doc.get("digest") != digest(doc):
        raise field_error(path, "digest", "does not match the content (it was edited after "
                          "it was written)", rewrite)
    state = doc.get("state")
    try:
        if not isinstance(state, dict):
            raise ValueError("is no object")
        suites[name].conformal().check(state)
    except ValueError as exc:
        raise field_error(path, "state", str(exc), rewrite) from None
    validity = doc.get("validity")
    if not isinstance(validity, dict):
        raise field_error(path, "validity", "is no object", rewrite)
    for key in ("confidence", "scores"):
        check_summary(validity.get(key), path, f"validity.{key}", rewrite)
    return doc


def _policy_options(doc: Mapping[str, Any], suite: Suite, path: Path) -> tuple[Any, Any]:
    target = doc.get("applies_to")
    try:
        if not isinstance(target, dict):
            raise ValueError("is no object")
        return (build(suite.Options, target.get("options") or {}, what="its options"),
                build(suite.conformal().Options, target.get("choice") or {},
                      what="its choice"))
    except (TypeError, ValueError) as exc:
        raise field_error(path, "applies_to", str(exc), _rewrite(suite.name)) from None


@dataclasses.dataclass
class Predictions:
    """A predictor applied to one or more files: the records with their predictions (a
    ``batch`` column naming the file when several), the counts over all and per file, the
    validity check (the command's ``validity``) and the files of a folder skipped."""

    frame: Any
    counts: dict
    batches: list[dict]
    validity: dict
    skipped: list[str]
    distributions: dict


def apply_conformal(policy_path: str | Path, records: Sequence[str | Path],
                    options: ValidityOptions | None = None) -> Predictions:
    """Predict ``records`` (one file, several, or a folder of them: a stream, in order) with
    a ``conformal.json`` and check its promise (module docstring)."""
    import pandas as pd

    from ..records import ROW_COLUMN

    options = options or ValidityOptions()
    path = Path(policy_path)
    doc = read_conformal(path)
    suite = SUITES[doc["suite"]]
    suite_options, choice = _policy_options(doc, suite, path)
    files, skipped = batch_files(records)
    frames, counts, predicted = [], [], []
    for file in files:
        got = suite.conformal().predict(load(suite, file, suite_options), suite_options,
                                        choice, doc["state"])
        frame = got.records.frame.drop(columns=[ROW_COLUMN]).copy()
        for column, values in got.columns.items():
            frame[column] = values
        frame["excluded_reason"] = got.records.row_reasons()
        if len(files) > 1:
            frame["batch"] = str(file)
        frames.append(frame)
        counts.append({"file": str(file), "n_read": got.records.n_read,
                       "predicted": int(got.rows.size), "excluded": dict(got.records.excluded),
                       "labelled": 0 if got.scores is None else int(got.scores.size)})
        predicted.append((file, got))
    validity, dist = _validity(doc, predicted, options)
    total = {"n_read": sum(c["n_read"] for c in counts),
             "predicted": sum(c["predicted"] for c in counts),
             "labelled": sum(c["labelled"] for c in counts),
             "excluded": _summed([c["excluded"] for c in counts])}
    return Predictions(pd.concat(frames, ignore_index=True), total, counts, validity, skipped,
                       dist)


def _summed(dicts: list[dict]) -> dict:
    out: dict[str, int] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _validity(doc: Mapping[str, Any], predicted: list, options: ValidityOptions
              ) -> tuple[dict, dict]:
    """The nonconformity scores tested when every file carries the truth, else the
    label-free confidences; the miscoverage watched wherever the truth is."""
    from ..validity import calibration_values, monitor_risk

    labelled = all(got.scores is not None for _, got in predicted)
    key = "scores" if labelled else "confidence"
    quantity = "nonconformity score of the true label" if labelled else \
        "label-free confidence (the top probability)"
    observed = [Observed(Path(file), got.scores if labelled else got.confidence,
                         got.truth_rows if labelled else got.rows)
                for file, got in predicted]
    notes = [] if labelled else [f"{file}: {got.no_truth}: the label-free confidence is tested"
                                 for file, got in predicted if got.no_truth][:1]
    validity = check_validity(doc["validity"][key], observed, options, quantity=quantity,
                              notes=notes)
    covered = [got.covered for _, got in predicted if got.covered is not None]
    validity["risk"] = None
    if covered:
        hits = np.concatenate(covered).astype(np.float64)
        monitor = monitor_risk(hits, target=float(doc["state"]["alpha"]), alpha=options.alpha)
        validity["risk"] = watch_risk(monitor, "miscoverage of the labelled items")
    dist = distributions(calibration_values(doc["validity"][key]),
                         np.concatenate([o.values for o in observed]))
    return validity, dist


def conformal_section(suite: str, kind: str, results: Mapping[str, Any]) -> dict:
    """The report section of a calibration (``kind`` ``conformal``) or of an application
    (``validity``)."""
    title = {"conformal": f"Conformal predictor ({suite})",
             "validity": "Does the promise still apply?"}[kind]
    return {"kind": kind, "title": title, "results": dict(results)}


def conformal_config(command: str, inputs: Sequence[str | Path], options: Any,
                     given: Mapping[str, Any] | None = None,
                     policy: str | Path | None = None) -> dict:
    """The ``run.json`` config of a calibrate or apply folder: every input (and the
    predictor applied) with its SHA-256, and the options — what ``confeval rerun`` needs."""
    from ..runs import file_sha256

    config = {"command": command, "cwd": os.getcwd(),
              "inputs": [{"path": str(p), "sha256": file_sha256(p)} for p in inputs]}
    if policy is not None:
        config["policy"] = {"path": str(policy), "sha256": file_sha256(policy)}
        config["validity_options"] = to_json(options)
    else:
        config["given"] = dict(given or {})
    return config


def apply_result(predictions: Predictions) -> dict:
    """One application as its report section's result."""
    return {"counts": predictions.counts, "batches": predictions.batches,
            "validity": predictions.validity, "distributions": predictions.distributions}


def rerun_conformal(config: Mapping[str, Any]) -> dict:
    """The metrics of a calibrate or apply folder computed again from its ``run.json``."""
    from .score import check_unchanged

    command = str(config.get("command", ""))
    name, _, verb = command.partition(" ")
    if name not in conformal_suites() or verb not in ("calibrate", "apply"):
        raise ValueError(f"cannot rerun `confeval {command}` folders")
    paths = [check_unchanged(config, e["path"], e.get("sha256"))
             for e in config.get("inputs") or []]
    if verb == "calibrate":
        given = dict(config.get("given") or {})
        results = {e["path"]: calibrate_input(SUITES[name], p, given, frozenset(given)).result
                   for e, p in zip(config["inputs"], paths)}
        return {"title": f"confeval {command}", "simulated": False,
                "sections": [conformal_section(name, "conformal", results)]}
    entry = config.get("policy") or {}
    policy = check_unchanged(config, entry.get("path"), entry.get("sha256"))
    options = build(ValidityOptions, config.get("validity_options") or {},
                    what=f"confeval {command}")
    predictions = apply_conformal(policy, paths, options)
    return {"title": f"confeval {command}", "simulated": False,
            "sections": [conformal_section(name, "validity",
                                           {entry["path"]: apply_result(predictions)})]}

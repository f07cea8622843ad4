"""confeval's report beside an Inspect log: what the ``confeval/report`` task-end hook writes.

For a log ``logs/NAME.eval`` the folder ``logs/NAME.confeval/`` holds ``run.json`` (the log's
path and SHA-256, where the confidence came from, the scoring options), ``records.jsonl`` (one
row per sample and epoch: ``sample_id``, ``epoch``, ``confidence``, ``correct``),
``metrics.json`` and ``report.html`` — written as one transaction
(:func:`confeval.runs.write_run_folder`, :func:`confeval.report.publish`), never into a folder
holding files confeval did not write and never through a link.

Where the confidence comes from, first found first:

1. a score carrying one (the ``confeval/confidence`` scorer's ``metadata["confidence"]``, or a
   dict value with ``confidence``), read as the ``confeval/*`` metrics read it
   (:mod:`.inspect_scores`): the first scorer of the log whose scores carry one;
2. else the log as ``confeval score LOG.eval --scorer FIRST`` reads it, FIRST the log's first
   scorer (the letters at the answer position for multiple choice, the answer tokens'
   probability or a stated confidence for generation).

A log with neither gets no folder (said once in Inspect's log at info level). The numbers are
``confeval score``'s: ``confeval score NAME.confeval/records.jsonl -c confidence -y correct``
prints them again.
"""

from __future__ import annotations

import logging
import math
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

__all__ = ["REPORT_COMMAND", "confidence_rows", "report_folder", "write_report_beside"]

logger = logging.getLogger(__name__)

REPORT_COMMAND = "inspect report"
"""The ``command`` of the folder's run.json: a folder of another command is never replaced."""


def report_folder(location: str | Path) -> Path:
    """``logs/NAME.eval`` -> ``logs/NAME.confeval``."""
    path = Path(location)
    return path.with_name(path.stem + ".confeval")


def _local_path(location: str | None) -> Path:
    if not location:
        raise ValueError("the log has no location (it was not written to a file)")
    if location.startswith("file://"):
        location = location[len("file://"):]
    if "://" in location:
        raise ValueError(f"{location}: not a local file; a report is written beside local "
                         "logs only")
    return Path(location)


def _confidence_scorer(samples: list) -> str | None:
    """The first scorer (in the log's order) whose scores carry a confidence."""
    from .inspect_scores import CONFIDENCE_KEY

    for sample in samples:
        for name, score in (sample.scores or {}).items():
            value = score.value
            if (isinstance(value, dict) and CONFIDENCE_KEY in value) or \
                    CONFIDENCE_KEY in (score.metadata or {}):
                return name
    return None


def confidence_rows(log: Any) -> tuple[list[dict], str] | None:
    """(one row per sample and epoch, the scorer they come from) when a scorer of the log
    carries a confidence; None otherwise."""
    from inspect_ai.scorer import value_to_float

    from .inspect_scores import score_rows

    samples = log.samples or []
    scorer = _confidence_scorer(samples)
    if scorer is None:
        return None
    scored = [(sample, sample.scores[scorer]) for sample in samples
              if scorer in (sample.scores or {})]
    rows = score_rows([SimpleNamespace(score=score, sample_id=sample.id)
                       for sample, score in scored], value_to_float())
    for row, (sample, _) in zip(rows, scored):
        row.pop("repeat")
        row["epoch"] = int(sample.epoch or 1)
    return rows, scorer


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _records_of(rs: Any) -> list[dict]:
    from ..records import ROW_COLUMN

    frame = rs.frame.drop(columns=[ROW_COLUMN])
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _scored(log: Any, path: Path) -> tuple[Any, list[dict], dict] | None:
    """(the results, the records, what run.json says of them) of a log, or None when it has
    no confidence to score."""
    from ..records import RecordSet
    from ..suites.options import to_json
    from ..suites.score import SUITE, ConfidenceOptions

    found = confidence_rows(log)
    if found is not None:
        rows, scorer = found
        options = ConfidenceOptions(confidence_col="confidence", correct_col="correct")
        rs = RecordSet.from_records(rows, source=str(path))
        source = {"confidence": f"the scores of {scorer}", "scorer": scorer}
        return SUITE.score(rs, options), rows, {**source, "options": to_json(options)}
    first = next((str(name) for sample in log.samples or [] for name in sample.scores or {}),
                 None)
    options = ConfidenceOptions(scorer=first)
    try:
        rs = SUITE.load(path, options)
        results = SUITE.score(rs, options)
    except ValueError as exc:
        logger.info("confeval: no report for %s: no confidence to score (%s)", path, exc)
        return None
    source = {"confidence": rs.notes.get("confidence", "the option letters at the answer "
                                         "position, as `confeval score` reads the log"),
              "scorer": first}
    return results, _records_of(rs), {**source, "options": to_json(options)}


def write_report_beside(log: Any) -> Path | None:
    """Write ``NAME.confeval/`` beside the log and return it (None: nothing to report).
    Raises what stops it (a folder holding a user's files, a remote log): the hook turns
    that into one warning."""
    from inspect_ai.log import read_eval_log

    from ..metrics import UndefinedMetricWarning
    from ..report import publish
    from ..runs import file_sha256, write_run_folder
    from ..suites.score import SUITE

    path = _local_path(getattr(log, "location", None))
    if not log.samples:   # an eval set hands the hook the log's header only
        log = read_eval_log(str(path))
    with warnings.catch_warnings():
        # an undefined metric (AUROC of one class) is shown as such in the report
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        scored = _scored(log, path)
    if scored is None:
        return None
    results, records, source = scored
    out = report_folder(path)
    config = {"command": REPORT_COMMAND, "log": str(path), "log_sha256": file_sha256(path),
              "task": getattr(log.eval, "task", None), "model": getattr(log.eval, "model", None),
              **source}
    metrics = {"title": f"confeval report of {path.name}", "simulated": False,
               "sections": [{"kind": SUITE.section_kind, "title": SUITE.title,
                             "results": {path.name: results}}]}
    with write_run_folder(out, command=REPORT_COMMAND) as run:
        run.write_run(config)
        run.write_records(records)
        problems = publish(run, metrics)
    for problem in problems:
        logger.warning("confeval: %s: the report is incomplete: %s", out, problem)
    return out

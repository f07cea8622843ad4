"""The ``confeval/report`` hook: the folder it writes beside a log holds ``confeval score``'s
numbers on that log; it runs at the end of a real Inspect eval; it never replaces a user's
files, and a failure is one warning, never the eval's."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil

import pytest

pytest.importorskip("inspect_ai", reason="inspect-ai is not installed "
                    "(pip install 'confeval[inspect]')")

from inspect_ai import eval as inspect_eval
from inspect_ai.hooks import TaskEnd
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model

from confeval.integrations import inspect_registry as R
from confeval.integrations.inspect_report import write_report_beside
from confeval.suites.score import ConfidenceOptions, score_confidence_file

from .inspect_helpers import (
    GEN_LOG,
    MC_LOG,
    assert_matches_confeval_score,
    mock_mc_task,
    reported,
)

PAIRS = ConfidenceOptions(confidence_col="confidence", correct_col="correct")


def _copy(log, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    return shutil.copy(log, logs / "run.eval")


def _section(folder) -> dict:
    metrics = json.loads((folder / "metrics.json").read_text())
    (section,) = metrics["sections"]
    assert section["kind"] == "confidence"
    (results,) = section["results"].values()
    return results


def _assert_report_opens(folder) -> None:
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html") and page.rstrip().endswith(
        "</html>")
    assert "Confidence vs correctness" in page


def test_a_multiple_choice_log_gets_confeval_scores_report(tmp_path):
    """A log without a confeval score: read as ``confeval score LOG.eval`` reads it."""
    path = _copy(MC_LOG, tmp_path)
    out = write_report_beside(read_eval_log(str(path)))
    assert out == tmp_path / "logs" / "run.confeval"
    assert sorted(p.name for p in out.iterdir()) == [
        "metrics.json", "records.jsonl", "report.html", "run.json"]
    want = score_confidence_file(path, ConfidenceOptions())
    assert_matches_confeval_score(_section(out), want)
    again = score_confidence_file(out / "records.jsonl", PAIRS)
    assert_matches_confeval_score(again, want)
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["command"] == "inspect report" and config["log"] == str(path)
    _assert_report_opens(out)


def test_a_log_with_confevals_scorer_gets_the_scores_it_carries(tmp_path):
    """The embedded model's run with confeval/confidence: the first scorer carrying a
    confidence (the answer tokens' probability), its 21 usable of 40 samples."""
    path = _copy(GEN_LOG, tmp_path)
    out = write_report_beside(read_eval_log(str(path)))
    results = _section(out)
    assert results["n"] == 21 and results["excluded"] == {"missing_confidence": 19}
    assert json.loads((out / "run.json").read_text())["config"]["scorer"] == "confidence"
    assert_matches_confeval_score(results, score_confidence_file(out / "records.jsonl", PAIRS))
    log = read_eval_log(str(path))
    assert_matches_confeval_score(reported(log, "confidence"), results, intervals=False)


def test_the_hook_runs_at_the_end_of_a_real_eval(tmp_path, monkeypatch):
    """A seeded multiple-choice task answered by Inspect's mock model with log-probabilities:
    the eval's own metrics, the report beside its log and ``confeval score`` of the log agree
    (intervals too, between the report and ``confeval score``: both read the log's order)."""
    monkeypatch.delenv(R.REPORT_ENV, raising=False)
    task, outputs = mock_mc_task()
    (log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs),
                          log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    folder = tmp_path / (log.location.rsplit("/", 1)[-1].rsplit(".", 1)[0] + ".confeval")
    assert folder.is_dir(), sorted(p.name for p in tmp_path.iterdir())
    results = _section(folder)
    with pytest.raises(ValueError, match="2 scorers, each scored on its own "
                                         r"\(choice, confidence\)"):
        score_confidence_file(log.location, ConfidenceOptions())   # never one taken silently
    want = score_confidence_file(log.location, ConfidenceOptions(scorer="confidence"))
    assert 0 < want["accuracy"] < 1 and want["n"] == 24
    assert_matches_confeval_score(results, want)
    assert_matches_confeval_score(reported(log, "confidence"), want, intervals=False)
    _assert_report_opens(folder)


def _end(log) -> TaskEnd:
    return TaskEnd(eval_set_id=None, run_id="run", eval_id="eval", log=log)


def test_a_folder_holding_a_users_file_is_left_alone_with_one_warning(tmp_path, caplog):
    path = _copy(MC_LOG, tmp_path)
    mine = tmp_path / "logs" / "run.confeval"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with caplog.at_level(logging.WARNING):
        asyncio.run(R.ConfevalReport().on_task_end(_end(read_eval_log(str(path)))))
    warnings = [r for r in caplog.records if r.name.startswith("confeval")]
    assert len(warnings) == 1 and "holds files confeval did not write" in \
        warnings[0].getMessage()
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert (mine / "notes.txt").read_text() == "mine"


def test_a_failure_is_one_warning_not_the_evals(tmp_path, caplog):
    log = read_eval_log(str(MC_LOG))
    log.location = "s3://bucket/logs/run.eval"
    with caplog.at_level(logging.WARNING):
        asyncio.run(R.ConfevalReport().on_task_end(_end(log)))
    (warning,) = [r for r in caplog.records if r.name.startswith("confeval")]
    assert "s3://bucket/logs/run.eval" in warning.getMessage() and \
        "not a local file" in warning.getMessage()


def test_the_hook_is_turned_off_by_its_variable(monkeypatch):
    hook = R.ConfevalReport()
    monkeypatch.delenv(R.REPORT_ENV, raising=False)
    assert hook.enabled()
    for off in ("0", "false", "No", "off"):
        monkeypatch.setenv(R.REPORT_ENV, off)
        assert not hook.enabled()

"""The confeval metrics and scorer inside Inspect give ``confeval score``'s numbers: re-scoring
the committed logs (as ``inspect score`` does, and through the real ``inspect score`` command
finding confeval by its entry point), and the confidences the scorer attached in a real run
on the embedded model against references computed here from the log's own tokens and text."""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="inspect-ai is not installed "
                    "(pip install 'confeval[inspect]')")

from inspect_ai import score as inspect_score
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import SampleScore, Score

from confeval.integrations import inspect_registry as R
from confeval.integrations.inspect_scores import score_rows
from confeval.suites.score import ConfidenceOptions, score_confidence_file

from .inspect_helpers import (
    GEN_LOG,
    MC_LOG,
    ROOT,
    TOL,
    assert_matches_confeval_score,
    reported,
    same,
)

METRICS = [R.ece(), R.brier(), R.auroc(), R.auarc(), R.prr()]


def test_the_names_are_in_confeval_namespace():
    from inspect_ai.util import registry_info

    assert [registry_info(m).name for m in METRICS] == [
        "confeval/ece", "confeval/brier", "confeval/auroc", "confeval/auarc", "confeval/prr"]
    assert registry_info(R.confidence()).name == "confeval/confidence"


def test_rescoring_the_mc_log_gives_confeval_scores_numbers():
    """The letters read by the scorer, the log's first verdict: every value and interval of
    ``confeval score arith_mc.eval`` (AUROC and PRR undefined in both: every answer wrong)."""
    scored = inspect_score(read_eval_log(str(MC_LOG)), R.confidence(method="letters"),
                           metrics=METRICS, action="append", model="mockllm/model",
                           display="none")
    got = reported(scored, "confidence")
    want = score_confidence_file(MC_LOG, ConfidenceOptions())
    assert want["n"] == 40 and want["accuracy"] == 0.0
    assert_matches_confeval_score(got, want)
    assert math.isnan(got["prr"]) and same(got["prr"], want["prr"])


def _entry_point_site(tmp_path: Path) -> Path:
    """A folder holding only a distribution's metadata with confeval's ``inspect_ai`` entry
    point, as ``pyproject.toml`` declares it: what ``pip install 'confeval[inspect]'`` gives
    Inspect to find, without reinstalling this environment's confeval."""
    declared = re.search(r"\[project\.entry-points\.inspect_ai\]\s*\n(confeval = \"[^\"]+\")",
                         (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared, "pyproject.toml declares no inspect_ai entry point for confeval"
    dist = tmp_path / "site" / "confeval_entry_point-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: confeval-entry-point\n"
                                   "Version: 0\n")
    (dist / "entry_points.txt").write_text(f"[inspect_ai]\n{declared.group(1)}\n")
    return dist.parent


def test_the_inspect_score_command_finds_confeval_by_its_entry_point(tmp_path):
    """``inspect score LOG --scorer confeval/confidence --metric confeval/ece`` in a new
    process: Inspect loads confeval through the entry point alone."""
    out = tmp_path / "scored.eval"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(_entry_point_site(tmp_path)), str(ROOT / "src")]),
        "CONFEVAL_INSPECT_REPORT": "0", "INSPECT_LOG_DIR": str(tmp_path),
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "score", str(MC_LOG), "--scorer",
         "confeval/confidence", "-S", "method=letters", "--metric", "confeval/ece",
         "--metric", "confeval/brier", "--action", "append", "--model", "mockllm/model",
         "--output-file", str(out), "--display", "none"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    got = reported(read_eval_log(str(out)), "confidence")
    want = score_confidence_file(MC_LOG, ConfidenceOptions())
    assert_matches_confeval_score(got, want, names=("ece", "brier"))


def _stored(log, scorer: str) -> list[tuple[float | None, float]]:
    """(confidence, correct) of each sample as the live run stored them."""
    out = []
    for sample in log.samples:
        score = sample.scores[scorer]
        out.append((score.metadata.get("confidence"), 1.0 if score.value == "C" else 0.0))
    return out


def _answer_reference(sample) -> float | None:
    """The answer's probability from the log's tokens, computed here: the tokens overlapping
    the last occurrence of the verdict's answer in their joined text."""
    answer = sample.scores["pattern"].answer
    tokens = sample.output.choices[0].logprobs.content
    text = "".join(t.token for t in tokens)
    if not answer or answer not in text:
        return None
    start = text.rindex(answer)
    end = start + len(answer)
    total, position = [], 0
    for t in tokens:
        if position < end and position + len(t.token) > start:
            total.append(t.logprob)
        position += len(t.token)
    return math.exp(math.fsum(total))


def _stated_reference(completion: str) -> float | None:
    """The reply's last number, a percentage when above 1 (none of these replies names its
    confidence with a word)."""
    numbers = re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", completion)
    if not numbers:
        return None
    value = float(numbers[-1])
    value = value / 100 if 1 < value <= 100 else value
    return value if 0 <= value <= 1 else None


def test_the_scorer_attached_the_answers_probability_in_a_real_run():
    log = read_eval_log(str(GEN_LOG))
    found = 0
    for sample in log.samples:
        got = sample.scores["confidence"].metadata["confidence"]
        want = _answer_reference(sample)
        assert (got is None) == (want is None), sample.id
        if want is not None:
            assert abs(got - want) <= TOL
            found += 1
    assert found == 21   # the HF provider's tokens and its reply do not always line up


def test_the_scorer_attached_the_stated_confidence_in_a_real_run():
    log = read_eval_log(str(GEN_LOG))
    for sample in log.samples:
        got = sample.scores["confidence1"].metadata["confidence"]
        assert got == _stated_reference(sample.output.completion), sample.id


@pytest.mark.parametrize("scorer", ["confidence", "confidence1"])
def test_the_runs_reported_metrics_are_confeval_scores(scorer, tmp_path):
    """What Inspect printed at the end of the real run equals ``confeval score`` of the
    (confidence, correct) pairs stored in the log: values, and intervals once re-scored in
    the log's order (the live run scored samples in the order they finished)."""
    log = read_eval_log(str(GEN_LOG))
    table = tmp_path / "pairs.csv"
    with table.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["confidence", "correct"])
        writer.writerows(("" if c is None else repr(c), y) for c, y in _stored(log, scorer))
    want = score_confidence_file(table, ConfidenceOptions(confidence_col="confidence",
                                                          correct_col="correct"))
    assert 0 < want["accuracy"] < 1 and want["excluded"] == {
        "missing_confidence": 19 if scorer == "confidence" else 9}
    assert_matches_confeval_score(reported(log, scorer), want, intervals=False)
    rescored = inspect_score(log, R.confidence(method="answer_logprobs" if scorer ==
                                               "confidence" else "verbalised",
                                               verdict="pattern", fallback="last_number"),
                             metrics=METRICS, action="append", model="mockllm/model",
                             display="none")
    new = [s.name for s in rescored.results.scores][-1]
    assert_matches_confeval_score(reported(rescored, new), want)


def _sample_score(value, metadata=None, sample_id="s"):
    return SampleScore(score=Score(value=value, metadata=metadata), sample_id=sample_id)


def test_a_score_is_read_from_its_value_or_its_metadata():
    from inspect_ai.scorer import value_to_float

    rows = score_rows([_sample_score("C", {"confidence": 0.8}),
                       _sample_score("P", {"confidence": 0.4}),
                       _sample_score({"correct": "I", "confidence": 0.3}),
                       _sample_score({"correct": 1, "confidence": "0.9"}),
                       _sample_score("I")], value_to_float())
    assert [(r["confidence"], r["correct"]) for r in rows] == [
        (0.8, 1.0), (0.4, 0.5), (0.3, 0.0), ("0.9", 1.0), (None, 0.0)]


def test_a_dict_value_without_the_verdict_is_one_error_naming_the_key():
    from inspect_ai.scorer import value_to_float

    with pytest.raises(ValueError, match=r"sample q7: .*no 'correct' \(the verdict\)"):
        score_rows([_sample_score({"accuracy": 1, "confidence": 0.2}, sample_id="q7")],
                   value_to_float())


def test_unusable_confidences_are_left_out_as_confeval_score_leaves_them(tmp_path, caplog):
    """A confidence outside [0, 1], missing or not a number: left out and counted, as
    ``confeval score`` does on the same rows written to a file."""
    values = [0.9, 0.2, 1.3, None, 0.7, "high", 0.6, 0.1]
    verdicts = ["C", "I", "C", "C", "C", "I", "I", "C"]
    scores = [_sample_score(v, {"confidence": c}, sample_id=f"s{k}")
              for k, (v, c) in enumerate(zip(verdicts, values))]
    metric = R.ece(bootstrap=200, seed=3)
    got = metric(scores)
    table = tmp_path / "rows.jsonl"
    table.write_text("".join(f'{{"confidence": {c!r}, "correct": {int(v == "C")}}}\n'
                             .replace("None", "null").replace("'", '"')
                             for v, c in zip(verdicts, values)))
    want = score_confidence_file(table, ConfidenceOptions(
        confidence_col="confidence", correct_col="correct", bootstrap=200, seed=3))
    assert want["n"] == 5
    assert_matches_confeval_score(got, want, names=("ece",))


def test_a_bad_method_is_one_error_naming_the_choices():
    with pytest.raises(ValueError, match="method must be one of letters, answer_logprobs, "
                       "verbalised, got 'logits'"):
        R.confidence(method="logits")


def test_fewer_than_two_scores_give_nan_not_an_error():
    got = R.auroc()([_sample_score("C", {"confidence": 0.5})])
    assert math.isnan(got["auroc"]) and same(got["auroc"], None)


def test_a_named_verdict_scorer_is_created_and_run():
    """``-S scorer=choice``: the verdict is a new ``choice()`` run on the logged output (its
    verdicts are the logged ones), so the numbers are the same with the log's scores
    dropped (``--action overwrite``)."""
    scored = inspect_score(read_eval_log(str(MC_LOG)),
                           R.confidence(scorer="choice", method="letters"),
                           metrics=[R.ece(), R.brier()], action="overwrite",
                           model="mockllm/model", display="none")
    assert [s.name for s in scored.results.scores] == ["confidence"]
    assert scored.samples[0].scores["confidence"].metadata["confeval"]["verdict"] == "choice"
    want = score_confidence_file(MC_LOG, ConfidenceOptions())
    assert_matches_confeval_score(reported(scored, "confidence"), want, names=("ece", "brier"))


def test_without_a_verdict_the_sample_is_unscored_with_its_reason():
    scored = inspect_score(read_eval_log(str(MC_LOG)), R.confidence(method="letters"),
                           metrics=[R.ece()], action="overwrite", model="mockllm/model",
                           display="none")
    score = scored.samples[0].scores["confidence"]
    assert math.isnan(score.value) and "no verdict" in score.explanation

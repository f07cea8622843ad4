"""lm-evaluation-harness samples files, on the real file lm-eval 0.4.13 wrote
(tests/fixtures/ingest/make_fixtures.py): every sample read, predictions equal to lm-eval's own
per-sample acc / acc_norm / acc_bytes, damaged lines counted under their reasons."""

import json
from pathlib import Path

import numpy as np
import pytest

from confeval.ingest import detect
from confeval.ingest.lm_eval import read_samples
from tests.ingest.layouts import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "lm_eval"
SAMPLES = next(FIXTURES.glob("samples_*.jsonl"))
RESULTS = next(FIXTURES.glob("results_*.json"))


def test_every_sample_is_read_with_its_choices_and_the_model():
    data = read_samples(SAMPLES)
    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    assert len(data.samples) == len(lines) == 40 and not any(data.reasons)
    assert data.task == "confeval_arith_mc"
    assert data.model.endswith("SmolLM2-135M-Instruct")
    first = json.loads(lines[0])
    sample = data.samples[0]
    assert sample.choices == first["doc"]["choices"]          # the delimiter removed
    np.testing.assert_array_equal(sample.lls, [float(r[0]) for r in first["filtered_resps"]])
    assert sample.gold == int(first["target"])


@pytest.mark.parametrize(("normalise", "metric"), [("none", "acc"), ("chars", "acc_norm"),
                                                   ("bytes", "acc_bytes")])
def test_predictions_equal_lm_evals_own_per_sample_metrics(normalise, metric):
    data = read_samples(SAMPLES)
    for sample in data.samples:
        pred = int(np.argmax(sample.scores(normalise)))
        assert float(pred == sample.gold) == sample.metrics[metric], sample.doc_id
    reported = json.loads(RESULTS.read_text())["results"]["confeval_arith_mc"][f"{metric},none"]
    rs = read_records(SAMPLES, "score", normalise=normalise)
    assert rs.frame["correct"].mean() == pytest.approx(reported, abs=1e-12)


def test_the_three_layouts():
    score = read_records(SAMPLES, "score")
    sets = read_records(SAMPLES, "sets")
    rows = read_records(SAMPLES, "measures")
    assert len(score.frame) == len(sets.frame) == 40
    n_options = sum(len(s.choices) for s in read_samples(SAMPLES).samples)
    assert len(rows.frame) == n_options == 196
    first = read_samples(SAMPLES).samples[0]
    row = sets.frame.iloc[0]
    assert row["answer"] == "ABCDEF"[first.gold]
    assert [row[f"logit_{c}"] for c in "ABCDEF"[:len(first.choices)]] == first.lls.tolist()
    probs = np.exp(first.lls - first.lls.max())
    assert score.frame.iloc[0]["confidence"] == pytest.approx(probs.max() / probs.sum(),
                                                              rel=1e-12)
    q0 = rows.frame[rows.frame["question_id"] == "0"]
    assert q0["correct"].tolist() == [int(i == first.gold) for i in range(len(first.choices))]
    np.testing.assert_allclose(q0["sl_norm"], first.lls / [len(c) for c in first.choices])


def test_damaged_lines_are_counted_by_reason(tmp_path):
    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    broken = [json.loads(line) for line in lines[:6]]
    del broken[1]["filtered_resps"]
    broken[2]["filtered_resps"][0][0] = "not a number"
    broken[3]["target"] = "17"
    del broken[4]["arguments"]
    text = [json.dumps(b) for b in broken] + [lines[6][: len(lines[6]) // 2], "[1, 2]"]
    path = tmp_path / "samples_task_2026-01-01T00-00-00.jsonl"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    rs = read_records(path, "score")
    assert rs.n_read == 8 and int(rs.mask.sum()) == 2
    assert rs.excluded == {"lm_eval_no_filtered_resps": 1, "lm_eval_bad_loglikelihood": 1,
                           "lm_eval_target_not_a_choice": 1, "lm_eval_no_choices": 1,
                           "lm_eval_not_a_json_object": 2}


def test_detection_and_named_formats(tmp_path):
    assert detect(SAMPLES) == "lm-eval"
    own = tmp_path / "own.jsonl"
    own.write_text('{"id": 1, "p": 0.5}\n')
    assert detect(own) is None and read_records(own, "score") is None
    assert read_records(SAMPLES, "score", "none") is None
    with pytest.raises(ValueError, match="own.jsonl: not an lm-eval file"):
        read_records(own, "score", "lm-eval")
    with pytest.raises(ValueError, match="no steps records"):
        read_records(SAMPLES, "steps")
    with pytest.raises(ValueError, match="--normalise 'tokens'"):
        read_records(SAMPLES, "score", normalise="tokens")


def test_openai_responses_are_recognised_and_need_their_data(tmp_path):
    batch = tmp_path / "batch_output.jsonl"
    batch.write_text(json.dumps({"id": "b1", "custom_id": "q1", "response": {
        "status_code": 200, "body": {"object": "chat.completion", "choices": []}},
        "error": None}) + "\n")
    plain = tmp_path / "responses.jsonl"
    plain.write_text(json.dumps({"id": "c1", "object": "chat.completion", "choices": []}) + "\n")
    for path in (batch, plain):
        assert detect(path) == "openai"
        with pytest.raises(ValueError, match="carry no gold answer: name the data they "
                                             "answer with --data FILE"):
            read_records(path, "score")


def test_measures_rows_normalise_by_characters_or_bytes():
    chars = read_records(SAMPLES, "measures")
    by_bytes = read_records(SAMPLES, "measures", normalise="bytes")
    np.testing.assert_array_equal(chars.frame["sl"], by_bytes.frame["sl"])
    assert read_records(SAMPLES, "measures", normalise="chars").frame["sl_norm"].equals(
        chars.frame["sl_norm"])
    samples = read_samples(SAMPLES).samples
    first = samples[0]
    np.testing.assert_allclose(by_bytes.frame["sl_norm"].iloc[:len(first.choices)],
                               first.scores("bytes"), rtol=0, atol=0)

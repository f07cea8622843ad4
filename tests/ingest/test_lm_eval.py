"""lm-evaluation-harness samples files, on the real file lm-eval 0.4.13 wrote
(tests/fixtures/ingest/make_fixtures.py): every sample read, predictions equal to lm-eval's own
per-sample acc / acc_norm / acc_bytes, damaged lines counted under their reasons."""

import gzip
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from confeval.ingest import detect
from confeval.ingest.lm_eval import read_samples
from confeval.suites import SUITES
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


# ---- hostile files (issue #36 item 5): targets, duplicates, log-likelihoods, encodings ----

def _mc_line(doc_id, choices, lls, target, gold, **extra):
    """One lm-eval multiple-choice line as lm-eval 0.4.13 writes it: ``target`` logged as
    ``str(target)`` (what doc_to_target returned: an index or a choice's text), and the
    per-sample metrics its ``process_results`` computes, with ``gold`` the index it used."""
    lls = np.asarray(lls, dtype=float)
    context = "Question: pick one.\nAnswer:"
    return {"doc_id": doc_id, "doc": {"choices": choices}, "target": target,
            "arguments": {f"gen_args_{i}": {"arg_0": context, "arg_1": " " + c}
                          for i, c in enumerate(choices)},
            "filtered_resps": [[str(v), "False"] for v in lls], "filter": "none",
            "metrics": ["acc", "acc_norm"],
            "acc": float(np.argmax(lls) == gold),
            "acc_norm": float(np.argmax(lls / [len(c) for c in choices]) == gold), **extra}


def _write(path, objects):
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


DIGITS = ["1", "2", "3", "4", "5"]


def test_a_digit_target_is_the_choice_lm_eval_scored(tmp_path):
    """Choices "1".."5" and the logged target "2": lm-eval scored the choice "2" (index 1)
    when doc_to_target gave the text, the index 2 when it gave an int; its own acc and
    acc_norm in the line tell which, and correctness equals them every time."""
    lines = [
        _mc_line(0, DIGITS, [-5, -0.5, -3, -4, -6], "2", gold=1),     # the text "2": acc 1
        _mc_line(1, DIGITS, [-5, -4, -0.5, -3, -6], "2", gold=2),     # the index 2: acc 1
        _mc_line(2, DIGITS, [-5, -4, -3, -6, -0.5], "2", gold=1),     # neither: acc 0
        _mc_line(3, DIGITS, [-5, -4, -0.5, -3, -6], 2, gold=2),       # an int: an index
        _mc_line(4, DIGITS, [-5, -4, -0.5, -3, -6], 2.0, gold=2),     # a whole JSON number
        _mc_line(5, ["red", "green", "blue"], [-3, -2, -0.1], "2", gold=2),  # no such text
        _mc_line(6, DIGITS, [-5, -0.5, -3, -4, -6], "9", gold=-100),  # out of range
    ]
    path = _write(tmp_path / "samples_digits_2026-01-01T00-00-00.jsonl", lines)
    rs = read_records(path, "score")
    assert rs.excluded == {"lm_eval_target_not_a_choice": 1}
    used = rs.frame[rs.mask]
    assert used["correct"].tolist() == [line["acc"] for line in lines[:6]] == \
        [1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    sets = read_records(path, "sets")
    assert sets.frame["answer"][sets.mask].tolist() == ["B", "C", "B", "C", "C", "C"]
    # the one the line's metrics could not decide: read as the choice's text, and counted
    assert rs.notes["lm_eval_targets"]["both_a_choice_text_and_an_index"] == 1


def test_every_sample_logged_twice_is_counted_once(tmp_path):
    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    twice = tmp_path / SAMPLES.name
    twice.write_text("".join(f"{line}\n{line}\n" for line in lines), encoding="utf-8")
    rs = read_records(twice, "score")
    assert rs.n_read == 80 and int(rs.mask.sum()) == 40
    assert rs.excluded == {"duplicate_sample": 40}
    once = read_records(SAMPLES, "score")
    np.testing.assert_array_equal(rs.frame["confidence"][rs.mask], once.frame["confidence"])
    assert rs.id_col == "doc_id"        # the kept documents still align models


def test_one_doc_id_on_every_line_keeps_the_first(tmp_path):
    objects = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    for obj in objects:
        obj["doc_id"] = 7
    path = _write(tmp_path / SAMPLES.name, objects)
    for suite, rows in (("score", 1), ("measures", len(read_samples(SAMPLES).samples[0].choices))):
        rs = read_records(path, suite)
        assert int(rs.mask.sum()) == rows and rs.excluded == {"duplicate_sample": 39}
    first = read_records(SAMPLES, "score").frame.iloc[0]
    kept = read_records(path, "score").frame.iloc[0]
    assert kept["confidence"] == first["confidence"] and kept["correct"] == first["correct"]


def test_one_document_under_two_filters_is_no_duplicate(tmp_path):
    line = _mc_line(0, DIGITS, [-5, -0.5, -3, -4, -6], "2", gold=1)
    path = _write(tmp_path / "samples_t_2026-01-01T00-00-00.jsonl",
                  [line, {**line, "filter": "strict-match"}, line])
    rs = read_records(path, "score", filter_name="none")
    assert int(rs.mask.sum()) == 1 and rs.excluded == {"duplicate_sample": 1}
    strict = read_records(path, "score", filter_name="strict-match")
    assert int(strict.mask.sum()) == 1 and strict.excluded == {}
    assert strict.frame["filter"].tolist() == ["strict-match"]
    with pytest.raises(ValueError, match=r"2 filters, each scored on its own \(none, "
                                         r"strict-match\): name one with --filter NAME"):
        read_records(path, "score")   # never the two pooled


@pytest.mark.parametrize("value", ["5.0", "inf", "1e400", "nan", "-inf", "1e-3"])
def test_an_impossible_log_likelihood_is_excluded_by_name(tmp_path, value):
    objects = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    objects[3]["filtered_resps"][1][0] = value
    path = _write(tmp_path / SAMPLES.name, objects)
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no numpy warning on the way
        for suite in ("score", "sets", "measures"):
            rs = read_records(path, suite)
            assert rs.excluded == {"impossible_logprob": 1}, suite
            key = SUITES[suite].layout().key
            assert rs.frame.loc[~rs.mask, key].tolist() == ["sample-4"]


def test_a_log_likelihood_a_rounding_error_above_zero_is_read_as_zero(tmp_path):
    objects = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    objects[0]["filtered_resps"][1][0] = "1e-9"
    path = _write(tmp_path / SAMPLES.name, objects)
    rs = read_records(path, "sets")
    assert rs.excluded == {} and rs.frame.loc[0, "logit_B"] == 0.0


def test_a_bom_and_crlf_change_nothing(tmp_path):
    text = SAMPLES.read_text(encoding="utf-8")
    path = tmp_path / SAMPLES.name
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    assert detect(path) == "lm-eval"
    rs = read_records(path, "score")
    assert rs.excluded == {} and int(rs.mask.sum()) == 40
    np.testing.assert_array_equal(rs.frame["confidence"],
                                  read_records(SAMPLES, "score").frame["confidence"])
    gz = tmp_path / (SAMPLES.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert detect(gz) == "lm-eval" and int(read_records(gz, "score").mask.sum()) == 40


def test_a_first_line_of_megabytes_is_recognised_by_its_start(tmp_path):
    """A long document in the first sample (2 MB of question before filtered_resps): the
    first 64 KB of the line show lm-eval's keys, and the line is read whole."""
    objects = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    objects[0]["doc"]["question"] = "How many? " * 200_000
    path = _write(tmp_path / SAMPLES.name, objects)
    assert len(path.read_text(encoding="utf-8").splitlines()[0]) > 2_000_000
    assert detect(path) == "lm-eval"
    rs = read_records(path, "score")
    assert int(rs.mask.sum()) == 40 and rs.excluded == {}
    own = tmp_path / "own.jsonl"         # confeval's own records with a long first line
    own.write_text(json.dumps({"doc_id": 0, "note": "x" * 2_000_000, "p": 0.5}) + "\n")
    assert detect(own) is None


def test_a_truncated_gzipped_samples_file_is_one_error_naming_it(tmp_path):
    data = gzip.compress(SAMPLES.read_bytes())
    path = tmp_path / (SAMPLES.name + ".gz")
    path.write_bytes(data[: len(data) * 3 // 4])
    assert detect(path) == "lm-eval"
    with pytest.raises(ValueError, match=re.escape(f"{path}: the compressed data cannot be "
                                                   "read: it ends early (truncated)")):
        read_records(path, "score")


def test_a_gzipped_samples_bomb_stops_at_the_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFEVAL_MAX_DECOMPRESSED_MB", "1")
    first = SAMPLES.read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / (SAMPLES.name + ".gz")
    path.write_bytes(gzip.compress((first + "\n" + " " * (32 << 20)).encode(), 9))
    assert detect(path) == "lm-eval"
    with pytest.raises(ValueError, match=f"{re.escape(str(path))}: its content decompresses "
                                         "to more than 1.0 MB"):
        read_records(path, "score")


def test_a_results_file_naming_a_key_twice_is_one_error_naming_it_and_the_key(tmp_path):
    """The results file beside the samples says how every line is read (the model, the
    task's target delimiter and output type): one naming a key twice says two things."""
    (tmp_path / SAMPLES.name).write_bytes(SAMPLES.read_bytes())
    results = tmp_path / RESULTS.name
    text = RESULTS.read_text(encoding="utf-8")
    results.write_text(text, encoding="utf-8")
    assert read_samples(tmp_path / SAMPLES.name).model.endswith("SmolLM2-135M-Instruct")
    results.write_text(text.replace('"model_name": ', '"model_name": "other", '
                                                      '"model_name": ', 1), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{results}: key 'model_name' appears "
                                                   'twice in one object ("other", then')):
        read_records(tmp_path / SAMPLES.name, "score")


def test_a_results_file_that_cannot_be_read_is_skipped_with_a_warning_naming_it(tmp_path):
    (tmp_path / SAMPLES.name).write_bytes(SAMPLES.read_bytes())
    results = tmp_path / RESULTS.name
    for broken, why in (('{"model_name": ', "JSONDecodeError"), ("[1, 2]", "no JSON object"),
                        ('{"n": ' + "9" * 5000 + "}", "ValueError")):
        results.write_text(broken, encoding="utf-8")
        data = read_samples(tmp_path / SAMPLES.name)
        assert data.model is None and data.samples   # the samples are still read
        assert data.warnings == [f"{results}: not read ({why}); the lm-eval samples "
                                 f"{SAMPLES.name} are read without it (an older results file, "
                                 "else no model name, the target delimiter ' ' and the output "
                                 "type their lines show)"]
        # in the records' warnings: --json and metrics.json hold it, not only stderr
        rs = read_records(tmp_path / SAMPLES.name, "score")
        assert rs.warnings == data.warnings and rs.summary()["warnings"] == data.warnings
        assert "warnings" not in rs.notes
    results.write_text(RESULTS.read_text(encoding="utf-8"), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = read_samples(tmp_path / SAMPLES.name)
        assert read.model.endswith("SmolLM2-135M-Instruct") and read.warnings == []

"""lm-evaluation-harness samples of tasks without options — ``generate_until`` (exact match and
a confidence the task states and its own ``process_results`` reads) and ``loglikelihood`` (the
answer's log-likelihood, ``acc`` = greedy) — on the real files lm-eval 0.4.13 wrote
(tests/fixtures/ingest/make_fixtures.py): lm-eval's per-sample metrics become the columns,
correctness equal to what lm-eval reported, and the suites that need options refuse them."""

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from confeval.ingest.lm_eval import read_samples
from tests.ingest.layouts import read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "lm_eval_gen"
GEN = next(FIXTURES.glob("samples_confeval_arith_gen_*.jsonl"))
LL = next(FIXTURES.glob("samples_confeval_arith_ll_*.jsonl"))
REPORTED = json.loads(next(FIXTURES.glob("results_*.json")).read_text())["results"]


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_generation_samples_keep_lm_evals_metrics_and_reply():
    data = read_samples(GEN)
    lines = _lines(GEN)
    assert data.output_type == "generate_until" and len(data.samples) == len(lines) == 40
    assert not any(data.reasons)
    for sample, line in zip(data.samples, lines):
        assert sample.reply == line["filtered_resps"][0] and sample.target == line["target"]
        assert sample.metrics == {m: line[m] for m in line["metrics"]}
    rs = read_records(GEN, "score")
    assert rs.id_col == "doc_id"
    # the task's own stated confidence is the confidence, named
    np.testing.assert_array_equal(rs.frame["confidence"], rs.frame["verbal_confidence"])
    assert rs.notes["confidence"] == ("task_confidence (the confidence the task logged: "
                                      "verbal_confidence)")
    assert (rs.frame["filter"] == "none").all() and "filter" not in rs.notes
    assert rs.frame["correct"].mean() == pytest.approx(
        REPORTED["confeval_arith_gen"]["exact_match,none"], abs=1e-12)
    np.testing.assert_array_equal(rs.frame["verbal_confidence"],
                                  [line["verbal_confidence"] for line in lines])


def test_loglikelihood_samples_give_the_targets_probability():
    lines = _lines(LL)
    rs = read_records(LL, "score")
    frame = rs.frame
    assert (frame["output_type"] == "loglikelihood").all() and len(frame) == 40
    lls = np.array([float(line["filtered_resps"][0][0]) for line in lines])
    np.testing.assert_array_equal(frame["loglikelihood"], lls)
    np.testing.assert_allclose(frame["p_target"], np.exp(lls), rtol=1e-15)
    assert frame["correct"].tolist() == [line["acc"] for line in lines]
    assert frame["is_greedy"].tolist() == [line["filtered_resps"][0][1] == "True"
                                           for line in lines]
    assert frame["correct"].mean() == pytest.approx(REPORTED["confeval_arith_ll"]["acc,none"],
                                                    abs=1e-12)


def test_the_output_type_is_told_by_the_lines_without_a_results_file(tmp_path):
    for path, expected in ((GEN, "generate_until"), (LL, "loglikelihood")):
        alone = tmp_path / expected / path.name
        alone.parent.mkdir()
        shutil.copy(path, alone)
        data = read_samples(alone)
        assert data.output_type == expected and data.model is None
        assert read_records(alone, "score").frame["correct"].tolist() == \
            read_records(path, "score").frame["correct"].tolist()


def test_suites_that_need_options_refuse_them():
    for suite in ("sets", "measures"):
        with pytest.raises(ValueError, match=f"{GEN.name}: lm-eval samples of a "
                                             f"generate_until task have no options"):
            read_records(GEN, suite)


def test_damaged_generation_lines_are_counted(tmp_path):
    lines = _lines(GEN)[:4]
    del lines[0]["filtered_resps"]
    lines[1]["filtered_resps"] = [17]
    lines[2]["verbal_confidence"] = math.inf   # json writes Infinity: read as NaN
    path = tmp_path / GEN.name
    results = next(FIXTURES.glob("results_*.json"))
    shutil.copy(results, tmp_path / results.name)   # it names the task's output type
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "{broken\n")
    rs = read_records(path, "score")
    assert rs.n_read == 5 and int(rs.mask.sum()) == 2
    assert rs.excluded == {"lm_eval_no_filtered_resps": 1, "lm_eval_no_reply": 1,
                           "lm_eval_not_a_json_object": 1}
    assert np.isnan(rs.frame.loc[rs.mask, "verbal_confidence"].iloc[0])

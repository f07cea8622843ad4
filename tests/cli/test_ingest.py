"""Scoring the files other tools wrote, with no column flag: lm-evaluation-harness samples
(the real file lm-eval 0.4.13 wrote on the embedded model) through score, sets score,
measures score and compare, checked against what lm-eval itself reported."""

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from confeval.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "lm_eval"
SAMPLES = next(FIXTURES.glob("samples_*.jsonl"))
REPORTED = json.loads(next(FIXTURES.glob("results_*.json")).read_text())["results"][
    "confeval_arith_mc"]


def _result(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    (result,) = json.loads(capsys.readouterr().out)["results"].values()
    return result


@pytest.mark.parametrize(("normalise", "metric"), [("none", "acc"), ("chars", "acc_norm"),
                                                   ("bytes", "acc_bytes")])
def test_score_accuracy_is_lm_evals(capsys, normalise, metric):
    res = _result(capsys, ["score", str(SAMPLES), "--normalise", normalise, "--bootstrap", "0",
                           "--json"])
    assert res["n_read"] == res["n_used"] == 40
    assert res["accuracy"] == pytest.approx(REPORTED[f"{metric},none"], abs=1e-12)


def test_measures_and_sets_read_every_sample(capsys):
    res = _result(capsys, ["measures", "score", str(SAMPLES), "--bootstrap", "0", "--json"])
    rows = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    lls = [float(r[0]) for row in rows for r in row["filtered_resps"]]
    gold = [int(i == int(row["target"])) for row in rows
            for i in range(len(row["filtered_resps"]))]
    assert res["n_read"] == res["n_used"] == len(lls) == 196
    assert res["measures"]["SL"]["auroc"] == pytest.approx(roc_auc_score(gold, lls), abs=1e-12)
    sets = _result(capsys, ["sets", "score", str(SAMPLES), "--alpha", "0.2", "--json"])
    assert sets["n_read"] == len(rows) == 40 and sets["n_used"] == 40
    assert sets["options"] == list("ABCDEF")


def test_column_flags_still_override_and_errors_are_one_line(tmp_path, capsys):
    res = _result(capsys, ["score", str(SAMPLES), "-c", "confidence", "-y", "correct",
                           "--bootstrap", "0", "--json"])
    assert res["accuracy"] == pytest.approx(REPORTED["acc,none"], abs=1e-12)
    own = tmp_path / "own.csv"
    own.write_text("p,y\n0.2,0\n0.9,1\n")
    for argv, message in [
        (["score", str(own)], "own.csv: name the columns with -c/--confidence-col"),
        (["score", str(own), "--from", "lm-eval"], "own.csv: not an lm-eval file"),
        (["score", str(SAMPLES), "--from", "inspect"], "not an inspect file"),
        (["score", str(SAMPLES), "--from", "csv"], "--from 'csv': choose from"),
        (["steps", "score", str(SAMPLES)], ""),
        (["agreement", str(SAMPLES)], "an lm-eval file has no judge ratings (it can be read "
                                      "by: score, sets score, measures score)"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_compare_reads_lm_eval_samples_with_no_column_flag(tmp_path, capsys):
    other = tmp_path / "samples_confeval_arith_mc_2026-01-01T00-00-00.jsonl"
    rows = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    rng = np.random.default_rng(0)
    for row in rows:   # a second "model": the same documents, other log-likelihoods (<= 0)
        row["filtered_resps"] = [[str(-abs(float(r[0]) + rng.normal(0, 3))), r[1]]
                                 for r in row["filtered_resps"]]
    other.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["compare", str(SAMPLES), str(other), "--name", f"smollm={SAMPLES}",
                 "--name", f"noisy={other}", "--bootstrap", "100",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["n_items_shared"] == 40
    assert doc["metrics"]["accuracy"]["models"]["smollm"]["value"] == pytest.approx(
        REPORTED["acc,none"], abs=1e-12)


GEN = next((FIXTURES.parent / "lm_eval_gen").glob("samples_confeval_arith_gen_*.jsonl"))
LL = next((FIXTURES.parent / "lm_eval_gen").glob("samples_confeval_arith_ll_*.jsonl"))


def test_generation_task_scored_with_the_confidence_it_names(capsys):
    """generate_until samples: exact match is the correctness, the task's own stated
    confidence the confidence with no flag (named), as when named; three confidences above 1
    counted, not dropped. A task logging none (loglikelihood) is one line naming the flag."""
    assert main(["score", str(LL), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and LL.name in err and "-c/--confidence-col" in err
    assert "p_target" in err
    named = _result(capsys, ["score", str(GEN), "-c", "verbal_confidence", "--bootstrap", "0",
                             "--json"])
    res = _result(capsys, ["score", str(GEN), "--bootstrap", "0", "--json"])
    assert res["notes"]["confidence"].endswith("verbal_confidence)")
    assert {k: v for k, v in res.items() if k not in ("notes", "confidence_column")} == \
        {k: v for k, v in named.items() if k not in ("notes", "confidence_column")}
    lines = [json.loads(line) for line in GEN.read_text().splitlines()]
    conf = np.array([line["verbal_confidence"] for line in lines])
    em = np.array([line["exact_match"] for line in lines])
    ok = conf <= 1
    assert res["n_read"] == 40 and res["n_used"] == ok.sum() == 37
    assert res["excluded"] == {"confidence_out_of_range": 3}
    assert res["accuracy"] == pytest.approx(em[ok].mean(), abs=1e-12)
    assert res["auroc"] == pytest.approx(roc_auc_score(em[ok], conf[ok]), abs=1e-12)


def test_loglikelihood_task_scored_by_the_targets_probability(capsys):
    res = _result(capsys, ["score", str(LL), "-c", "p_target", "--bootstrap", "0", "--json"])
    lines = [json.loads(line) for line in LL.read_text().splitlines()]
    acc = np.array([line["acc"] for line in lines])
    p_target = np.exp([float(line["filtered_resps"][0][0]) for line in lines])
    reported = json.loads(next(GEN.parent.glob("results_*.json")).read_text())["results"]
    assert res["n_used"] == 40
    assert res["accuracy"] == pytest.approx(reported["confeval_arith_ll"]["acc,none"],
                                            abs=1e-12)
    assert res["auroc"] == pytest.approx(roc_auc_score(acc, p_target), abs=1e-12)
    assert main(["sets", "score", str(LL)]) == 2
    assert "loglikelihood task have no options" in capsys.readouterr().err


def test_inspect_log_scored_with_no_column_flag(capsys):
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed "
                        "(pip install 'confeval[ingest]')")
    from inspect_ai.log import read_eval_log

    log_path = FIXTURES.parent / "inspect" / "arith_mc.eval"
    log = read_eval_log(str(log_path))
    res = _result(capsys, ["score", str(log_path), "--bootstrap", "0", "--json"])
    assert res["n_read"] == len(log.samples) == 40
    reported = log.results.scores[0].metrics["accuracy"].value
    assert res["accuracy"] == pytest.approx(reported, abs=1e-12)
    sets = _result(capsys, ["sets", "score", str(log_path), "--alpha", "0.2", "--json"])
    assert sets["n_read"] == 40 and sets["options"] == list("ABCDEFGH"[:len(sets["options"])])


def test_import_writes_the_records_score_reads_with_no_flag(tmp_path, capsys):
    out = tmp_path / "records.jsonl"
    assert main(["import", str(SAMPLES), "--suite", "measures", "--out", str(out),
                 "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["import"]
    assert counts["n_read"] == counts["n_used"] == 196 and counts["excluded"] == {}
    lines = out.read_text().splitlines()
    assert len(lines) == 196 and set(json.loads(lines[0])) >= {
        "question_id", "option", "correct", "sl", "sl_norm"}
    res = _result(capsys, ["measures", "score", str(out), "--bootstrap", "0", "--json"])
    direct = _result(capsys, ["measures", "score", str(SAMPLES), "--bootstrap", "0", "--json"])
    assert res["measures"] == direct["measures"]
    score_out = tmp_path / "score.csv"
    assert main(["import", str(SAMPLES), "--out", str(score_out), "--normalise", "chars"]) == 0
    assert "wrote 40 of 40 score records" in capsys.readouterr().err
    res = _result(capsys, ["score", str(score_out), "-c", "confidence", "-y", "correct",
                           "--bootstrap", "0", "--json"])
    assert res["accuracy"] == pytest.approx(REPORTED["acc_norm,none"], abs=1e-12)
    for argv, message in [
        (["import", str(SAMPLES), "--out", str(score_out)], "exists; use --force"),
        (["import", str(score_out), "--out", str(tmp_path / "x.jsonl")], "no known format"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_empty_binary_and_wholly_excluded_files_are_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    openai = FIXTURES.parent / "openai"
    no_logprobs = tmp_path / "no_logprobs.jsonl"
    with no_logprobs.open("w") as f:
        for line in (openai / "mc_batch_output.jsonl").read_text().splitlines()[:3]:
            doc = json.loads(line)
            doc["response"]["body"]["choices"][0]["logprobs"] = None
            f.write(json.dumps(doc) + "\n")
    for argv, message in [
        (["score", str(empty), "-c", "p", "-y", "y"], "empty.jsonl: no records, so no "
                                                      "confidence 'p'"),
        (["sets", "score", str(binary)], "binary.jsonl: no records, so no option column"),
        (["score", str(no_logprobs), "--data", str(openai / "mc_data.jsonl")],
         "no_logprobs.jsonl: no usable record: all 3 were excluded (openai_no_logprobs 3)"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


# ---- hostile files (issue #36 item 5): import and score say the same ----

def _import_counts(capsys, path, out):
    assert main(["import", str(path), "--out", str(out), "--json"]) == 0, \
        capsys.readouterr().err
    return json.loads(capsys.readouterr().out)["import"]


def test_duplicates_are_excluded_alike_by_import_score_and_compare(tmp_path, capsys):
    twice = tmp_path / SAMPLES.name
    twice.write_text("".join(f"{line}\n{line}\n" for line in SAMPLES.read_text().splitlines()))
    counts = _import_counts(capsys, twice, tmp_path / "records.jsonl")
    assert (counts["n_read"], counts["n_used"]) == (80, 40)
    assert counts["excluded"] == {"duplicate_sample": 40}
    res = _result(capsys, ["score", str(twice), "--bootstrap", "0", "--json"])
    assert (res["n_read"], res["n_used"]) == (80, 40)
    assert res["excluded"] == {"duplicate_sample": 40}
    assert res["accuracy"] == pytest.approx(REPORTED["acc,none"], abs=1e-12)
    assert main(["compare", str(SAMPLES), str(twice), "--name", f"once={SAMPLES}", "--name",
                 f"twice={twice}", "--bootstrap", "10", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["n_items_shared"] == 40 and doc["excluded"]["twice"] == {"duplicate_sample": 40}


@pytest.mark.parametrize("value", ["inf", "1e400", "5.0"])
def test_an_impossible_log_likelihood_is_one_reason_in_import_and_score(tmp_path, capsys,
                                                                        value):
    objects = [json.loads(line) for line in SAMPLES.read_text().splitlines()]
    objects[0]["filtered_resps"][2][0] = value
    path = tmp_path / SAMPLES.name
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    counts = _import_counts(capsys, path, tmp_path / "records.jsonl")
    assert counts["n_used"] == 39 and counts["excluded"] == {"impossible_logprob": 1}
    assert main(["score", str(path), "--bootstrap", "0", "--json"]) == 0
    out, err = capsys.readouterr()
    (res,) = json.loads(out)["results"].values()
    assert res["n_used"] == 39 and res["excluded"] == {"impossible_logprob": 1}
    assert err == ""                      # no numpy warning on the way


def test_a_truncated_gzipped_samples_file_is_one_error_not_an_abort(tmp_path, capsys):
    import gzip

    data = gzip.compress(SAMPLES.read_bytes())
    path = tmp_path / (SAMPLES.name + ".gz")
    path.write_bytes(data[: len(data) // 2])
    for argv in (["score", str(path)], ["import", str(path), "--out",
                                        str(tmp_path / "r.jsonl")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == f"error: {path}: the compressed data cannot be read: it ends early " \
                      "(truncated)\n"

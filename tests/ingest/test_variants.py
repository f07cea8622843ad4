"""Every lm-eval filter and Inspect scorer read on its own (issue #38 item 1), on the real files
the tools wrote (tests/fixtures/ingest/make_fixtures.py --lm-eval-filters-python,
--inspect-scorers-python): per filter and per scorer, the accuracy equals the one the tool
reported itself (lm-eval's results file, Inspect's log results), nothing is pooled, and the
confidences read are the log's own numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from confeval.suites.score import ConfidenceOptions
from confeval.verbs.score import score_inputs, scoring_command
from tests.ingest.layouts import import_records, read_records

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"
FILTERS = next((FIXTURES / "lm_eval_filters").glob("samples_*.jsonl"))
REPORTED = json.loads(next((FIXTURES / "lm_eval_filters").glob("results_*.json"))
                      .read_text())["results"]["confeval_arith_filters"]
LINES = [json.loads(line) for line in FILTERS.read_text(encoding="utf-8").splitlines()]
NAMES = ("strict-match", "flexible-extract", "raw")


# ---------------------------------------------------------------- lm-eval filters
def test_each_filter_is_read_alone_with_lm_evals_own_accuracy():
    reported = [REPORTED[f"exact_match,{name}"] for name in NAMES]
    assert len(set(reported)) > 1   # the filters disagree: a pooled number is none of them
    for name, want in zip(NAMES, reported):
        rs = read_records(FILTERS, "score", filter_name=name)
        mine = [line for line in LINES if line["filter"] == name]
        assert rs.n_read == len(mine) == 20 and (rs.frame["filter"] == name).all()
        assert rs.frame["correct"].tolist() == [line["exact_match"] for line in mine]
        assert rs.frame["correct"].mean() == pytest.approx(want, abs=1e-12)
        assert rs.notes["filter"] == name
        # the task's own confidence metric, named
        np.testing.assert_array_equal(rs.frame["confidence"],
                                      [line["verbal_confidence"] for line in mine])
        assert rs.notes["confidence"].endswith("verbal_confidence)")


def test_score_scores_each_filter_separately_named():
    scored = score_inputs(scoring_command("score"), [[FILTERS]], {"bootstrap": 0})
    assert list(scored.results) == [f"{FILTERS} (filter {name})" for name in NAMES]
    for name in NAMES:
        res = scored.results[f"{FILTERS} (filter {name})"]
        assert res["tool_accuracy"]["value"] == pytest.approx(
            REPORTED[f"exact_match,{name}"], abs=1e-12)
        assert res["notes"]["filter"] == name
        # the scored rows: those whose stated confidence is a probability
        usable = [line for line in LINES if line["filter"] == name
                  and 0 <= line["verbal_confidence"] <= 1]
        assert res["n"] == len(usable)
        assert res["accuracy"] == pytest.approx(np.mean([u["exact_match"] for u in usable]),
                                                abs=1e-12)
    entries = scored.config["inputs"]    # run.json: an entry per filter, naming it
    assert [e["options"]["filter_name"] for e in entries] == list(NAMES)
    assert [e["name"] for e in entries] == list(scored.results)


def test_a_filter_the_file_lacks_is_one_error_listing_those_it_has():
    with pytest.raises(ValueError, match=r"no filter 'none' \(--filter; its filters: "
                                         r"strict-match, flexible-extract, raw\)"):
        read_records(FILTERS, "score", filter_name="none")


def test_a_flag_of_the_other_tool_is_one_error():
    with pytest.raises(ValueError, match=f"{FILTERS}: --scorer names what an inspect file "
                                         "scores under; this is an lm-eval file"):
        read_records(FILTERS, "score", scorer="match")


def test_import_writes_every_filter_each_row_naming_its_own():
    frame, counts = import_records(FILTERS, "score")
    assert counts["n_read"] == len(LINES) == 60
    assert frame["filter"].tolist() == [line["filter"] for line in LINES]
    assert frame["doc_id"].tolist() == [str(line["doc_id"]) for line in LINES]
    one, _ = import_records(FILTERS, "score", filter_name="raw")
    assert len(one) == 20 and (one["filter"] == "raw").all()


# ---------------------------------------------------------------- Inspect scorers
inspect_ai = pytest.importorskip("inspect_ai", reason="inspect-ai is not installed "
                                 "(pip install 'confeval[ingest]')")

from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.scorer import value_to_float  # noqa: E402

SCORERS = FIXTURES / "inspect" / "arith_scorers.eval"
TWO = FIXTURES / "inspect" / "arith_mc_two_scorers.eval"
GEN = FIXTURES.parent / "integrations" / "inspect" / "arith_gen.eval"


def _reported(log) -> dict[str, float]:
    """Each scorer's own number in the log's results (accuracy, or the mean of f1)."""
    return {s.name: next(iter(s.metrics.values())).value for s in log.results.scores}


def test_each_scorer_with_inspects_own_accuracy_and_values():
    log = read_eval_log(str(SCORERS))
    reported = _reported(log)
    to_float = value_to_float()
    scored = score_inputs(scoring_command("score"), [[SCORERS]], {"bootstrap": 0})
    for name in ("match", "includes", "f1"):
        res = scored.results[f"{SCORERS} (scorer {name})"]
        assert res["notes"]["scorer"] == name
        assert res["tool_accuracy"]["value"] == pytest.approx(reported[name], abs=1e-12)
        rs = read_records(SCORERS, "score", scorer=name)
        assert rs.frame["correct"].tolist() == [to_float(s.scores[name].value)
                                                for s in log.samples]
        assert (rs.frame["scorer"] == name).all()
    assert reported["f1"] not in (0.0, 1.0) and \
        {to_float(s.scores["f1"].value) for s in log.samples} - {0.0, 1.0}   # partial
    # the grader's replies held no grade: every sample unscored, said, not scored as wrong
    assert math.isnan(reported["model_graded_qa"])
    assert scored.not_scored == {f"{SCORERS} (scorer model_graded_qa)":
                                 "no usable record: all 20 were excluded (inspect_unscored 20)"}


def test_two_mc_scorers_that_disagree_are_each_reported():
    log = read_eval_log(str(TWO))
    reported = _reported(log)
    assert reported == {"includes": 0.5, "choice": 0.0}
    scored = score_inputs(scoring_command("score"), [[TWO]], {"bootstrap": 0})
    got = {r["notes"]["scorer"]: r["tool_accuracy"]["value"] for r in scored.results.values()}
    assert got == pytest.approx(reported, abs=1e-12)
    with pytest.raises(ValueError, match=r"2 scorers, each scored on its own \(includes, "
                                         r"choice\): name one with --scorer NAME"):
        read_records(TWO, "score")


def _letter(token: str) -> str:
    """A token as the letter it may be: tokenizer markers and whitespace stripped, then a
    closing bracket or full stop ("C)", " B.")."""
    marks = " \t\n\u0120\u2581"
    return token.strip(marks).rstrip(").:,").lstrip("(").strip(marks)


def top_letters(log) -> list[str]:
    """Each sample's most likely option letter, read straight from the log: the first
    generated token that is a letter (or lists one among its top alternatives), the letter
    with the highest log-probability there (a reference written apart from confeval's
    reader)."""
    top = []
    for sample in log.samples:
        letters = list("ABCDEFGH"[:len(sample.choices)])
        content = sample.output.choices[0].logprobs.content
        first = next((t for t in content if _letter(t.token) in letters), None) or \
            next(t for t in content if any(_letter(a.token) in letters for a in t.top_logprobs))
        found: dict[str, float] = {}
        for a in first.top_logprobs:
            if _letter(a.token) in letters and _letter(a.token) not in found:
                found[_letter(a.token)] = a.logprob
        found.setdefault(_letter(first.token), first.logprob)
        top.append(max((L for L in letters if L in found), key=lambda L: found[L]))
    return top


def test_mc_letters_imputed_and_confidences_about_the_gold_are_said():
    """``choice()`` read no ``ANSWER: X`` from the embedded model: every letter is imputed
    (the most likely one), and rows whose most likely letter is the gold one are scored
    wrong — counted and said, from the log's own log-probabilities."""
    log = read_eval_log(str(TWO))
    rs = read_records(TWO, "score", scorer="choice")
    assert all(s.scores["choice"].answer == "" for s in log.samples)
    top = top_letters(log)
    assert rs.frame["letter"].tolist() == top
    on_gold = sum(t == s.target for t, s in zip(top, log.samples))
    assert rs.notes["letters_read"] == {"rows": 10, "letter_imputed": 10,
                                        "confidence_on_gold_scored_wrong": on_gold,
                                        "confidence_on_other_scored_right": 0}
    assert rs.warnings[0].startswith("10 of 10 confidences are about an imputed letter")
    assert on_gold == 0 or rs.warnings[1].startswith(
        f"{on_gold} of 10 rows have a confidence about the gold letter while the scorer "
        "says wrong")


def test_answer_token_probability_is_the_confeval_scorers_own_number():
    """The log made with the ``confeval/confidence`` scorer (answer_logprobs) inside Inspect:
    ``p_answer`` of the ``pattern`` rows equals what the scorer wrote at run time, sample by
    sample — one formula (confeval.parse.answer_tokens)."""
    log = read_eval_log(str(GEN))
    rs = read_records(GEN, "score", scorer="pattern")
    attached = [(s.scores["confidence"].metadata or {}).get("confidence") for s in log.samples]
    got = rs.frame["p_answer"].tolist()
    pairs = [(a, g) for a, g in zip(attached, got) if a is not None]
    assert len(pairs) > 10 and all(g == pytest.approx(a, rel=1e-12) for a, g in pairs)
    assert all(isinstance(g, float) and math.isnan(g) for a, g in zip(attached, got)
               if a is None)
    # the scorer's own confidence comes first for its rows
    own = read_records(GEN, "score", scorer="confidence")
    assert own.notes["confidence"].startswith("scorer_confidence")
    np.testing.assert_array_equal(own.frame["confidence"].to_numpy(np.float64),
                                  [np.nan if a is None else a for a in attached])


def test_answer_tokens_pooled_three_ways_from_the_log():
    log = read_eval_log(str(SCORERS))
    rs = read_records(SCORERS, "score", scorer="match")
    sample, row = log.samples[0], rs.frame.iloc[0]
    assert sample.scores["match"].answer == "9" and \
        sample.output.choices[0].logprobs.content[-1].token == "9"
    lp = sample.output.choices[0].logprobs.content[-1].logprob
    for column in ("p_answer", "p_answer_norm", "p_answer_first"):
        assert row[column] == pytest.approx(math.exp(lp), rel=1e-15)
    assert row["stated_confidence"] == pytest.approx(0.09)   # "Confidence: 9"


def test_epochs_each_first_mean_and_their_agreement():
    log = read_eval_log(str(SCORERS))
    to_float = value_to_float()
    by_id: dict[str, list] = {}
    for s in log.samples:
        by_id.setdefault(str(s.id), []).append(s)
    each = read_records(SCORERS, "score", scorer="includes")
    first = read_records(SCORERS, "score", scorer="includes", epochs="first")
    mean = read_records(SCORERS, "score", scorer="includes", epochs="mean")
    assert len(each.frame) == 20 and len(first.frame) == 10 and len(mean.frame) == 10
    assert (first.frame["epoch"] == 1).all()
    for _, row in mean.frame.iterrows():
        samples = by_id[row["doc_id"]]
        assert row["correct"] == pytest.approx(
            np.mean([to_float(s.scores["includes"].value) for s in samples]), abs=1e-15)
        assert row["n_epochs"] == 2
    assert mean.frame["correct"].mean() == pytest.approx(_reported(log)["includes"],
                                                         abs=1e-12)
    for _, row in each.frame.iterrows():   # the other epoch gave the same answer, or not
        pair = by_id[row["doc_id"]]
        answers = [(s.scores["includes"].answer or "").strip().lower() for s in pair]
        assert row["epoch_agreement"] == float(answers[0] == answers[1])
    with pytest.raises(ValueError, match="--epochs mean: sets records cannot be averaged"):
        read_records(TWO, "sets", epochs="mean")


@pytest.mark.parametrize("suffix", [".json", ".eval"])
def test_a_sample_without_scores_and_a_future_log_version(tmp_path, suffix):
    log = read_eval_log(str(SCORERS))
    log.samples[0].scores = {}
    damaged = tmp_path / "damaged.eval"
    write_eval_log(log, str(damaged))
    rs = read_records(damaged, "score", scorer="match")
    assert rs.n_read == 20 and rs.excluded["inspect_no_score"] == 1
    future = tmp_path / f"future{suffix}"
    if suffix == ".json":
        log.version = 99
        write_eval_log(log, str(future))
    else:   # Inspect writes an .eval as version 2 whatever the object says: edit the archive
        import zipfile

        with zipfile.ZipFile(SCORERS) as real, zipfile.ZipFile(future, "w") as out:
            for name in real.namelist():
                data = real.read(name)
                if name in ("header.json", "_journal/start.json"):
                    data = json.dumps({**json.loads(data), "version": 99}).encode()
                out.writestr(name, data)
    with pytest.raises(ValueError, match=f"{future}: an Inspect log of format version 99, "
                                         "which this confeval does not know"):
        read_records(future, "score", scorer="match")


def test_options_name_the_flag_of_a_bad_epochs():
    with pytest.raises(ValueError, match="--epochs 'all': choose from each, first, mean"):
        ConfidenceOptions(epochs="all")


def test_a_metrics_warning_names_its_input():
    """More ECE bins than rows: the warning says of which input (the terminal prints it as
    one line). Every answer is wrong under ``choice()``, so AUROC is undefined: its NaN (and
    the verdict's "every answer wrong") says so, with no warning, at any bootstrap size (a
    bootstrap below 50 rows used to warn where one above did not)."""
    import warnings

    from confeval.suites.score import score_confidence_file

    log = read_eval_log(str(TWO))
    assert all(s.scores["choice"].value == "I" for s in log.samples)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = score_confidence_file(TWO, ConfidenceOptions(scorer="choice", bootstrap=20,
                                                           n_bins=1000))
    n = res["n_used"]
    assert [str(w.message) for w in caught] == [f"{TWO}: 1000 ECE bins for {n} rows; using {n}"]
    assert np.isnan(res["auroc"])


def test_a_grader_that_graded_counts_partial_credit_and_skips_nan_as_inspect_does(tmp_path):
    """The model-graded scorer of the real log graded nothing (every reply lacked a grade);
    give it the grades a grader gives (C, P, I, and NaN left where it failed) and read them
    back: correctness is Inspect's value, and the tool's accuracy is what Inspect's own
    ``mean_score()`` reducer and ``accuracy()`` metric make of the same scores."""
    from inspect_ai.scorer import SampleScore, accuracy, mean_score

    log = read_eval_log(str(SCORERS))
    grades = ["C", "P", "I", float("nan"), "C"]
    for k, sample in enumerate(log.samples):
        sample.scores["model_graded_qa"].value = grades[k % len(grades)]
    graded = tmp_path / "graded.eval"
    write_eval_log(log, str(graded))
    rs = read_records(graded, "score", scorer="model_graded_qa")
    to_float = value_to_float()
    scored = [s for s in log.samples
              if not isinstance(s.scores["model_graded_qa"].value, float)]
    assert rs.excluded.get("inspect_unscored") == len(log.samples) - len(scored) == 4
    assert rs.frame.loc[rs.mask, "correct"].tolist() == \
        [to_float(s.scores["model_graded_qa"].value) for s in scored]
    assert 0.5 in rs.frame["correct"].tolist()   # partial credit counted as such
    by_id: dict[str, list] = {}
    for s in scored:
        by_id.setdefault(str(s.id), []).append(s.scores["model_graded_qa"])
    inspects = accuracy()([SampleScore(score=mean_score()(scores), sample_id=sid)
                           for sid, scores in by_id.items()])
    from confeval.suites.score.scoring import tool_accuracy

    assert tool_accuracy(rs, "correct")["value"] == pytest.approx(inspects, abs=1e-12)


def test_import_averages_epochs_per_scorer():
    log = read_eval_log(str(SCORERS))
    to_float = value_to_float()
    frame, counts = import_records(SCORERS, "score", epochs="mean")
    # match, includes and f1 scored every sample; model_graded_qa none (excluded, counted)
    assert len(frame) == 30 and counts["excluded"] == {"inspect_unscored": 20}
    assert not frame.duplicated(["doc_id", "scorer"]).any()
    for _, row in frame.iterrows():
        values = [to_float(s.scores[row["scorer"]].value) for s in log.samples
                  if str(s.id) == row["doc_id"]]
        assert row["correct"] == pytest.approx(np.mean(values), abs=1e-15)


def test_a_custom_scorers_dict_value_gives_its_verdict_and_confidence(tmp_path):
    """A custom scorer returning ``{"correct": ..., "confidence": ...}`` (the convention of
    the confeval metrics inside Inspect): its verdict is ``correct``, its confidence is taken
    first; a dict without ``correct`` is no verdict, counted."""
    log = read_eval_log(str(SCORERS))
    values = []
    for k, sample in enumerate(log.samples):
        value = {"correct": k % 2, "confidence": round(0.05 * (k + 1), 2)} if k else \
            {"grade": 1}
        sample.scores["f1"].value = value
        values.append(value)
    custom = tmp_path / "custom.eval"
    write_eval_log(log, str(custom))
    rs = read_records(custom, "score", scorer="f1")
    assert rs.excluded == {"inspect_score_not_a_number": 1}
    assert rs.notes["confidence"].startswith("scorer_confidence")
    assert rs.frame.loc[rs.mask, "correct"].tolist() == [v["correct"] for v in values[1:]]
    assert rs.frame.loc[rs.mask, "confidence"].tolist() == [v["confidence"]
                                                            for v in values[1:]]

"""Every terminal table at 80 columns: no header or value cut ("Spearm…"), no word broken
("overconfiden/t"), every input named by its short label, real results."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from confeval.report import TERMINAL_TABLES
from confeval.report.labels import short_labels
from confeval.report.terminal import results_table
from confeval.simulate import simulate

LONG_NAMES = [f"llama-3.1-8b-instruct_{b}-judge_mmlu-pro_2024-05-13T12-00-00.csv"
              for b in ("calibrated", "overconfident", "uninformative")]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from confeval.suites.agreement import AgreementOptions, score_agreement_file
    from confeval.suites.intervals import IntervalsOptions, score_intervals_file
    from confeval.suites.measures.options import MEASURE_NAMES, MeasuresOptions
    from confeval.suites.measures.scoring import score_measures
    from confeval.suites.score import ConfidenceOptions, score_confidence_file
    from confeval.suites.sets import SetsOptions, score_sets_file
    from confeval.suites.steps import StepsOptions, score_steps_file

    folder = tmp_path_factory.mktemp("tables")

    def saved(kind, n, name, **kw):
        path = folder / name
        simulate(kind, n, seed=1, **kw).to_csv(path, index=False)
        return path

    conf = [saved("confidence", 300, name) for name in LONG_NAMES]
    scores = [saved("scores", 300, f"{k}/features_s2.csv".replace("/", "-")) for k in range(2)]
    mcq = saved("mcq", 300, "mcq-benchmark-model.csv")
    steps = saved("steps", 40, "steps.csv")
    rng = np.random.default_rng(0)
    labels = list(MEASURE_NAMES.values())[:8]
    return {
        "confidence": {str(p): score_confidence_file(p, ConfidenceOptions(
            "confidence", "correct", bootstrap=0)) for p in conf},
        "agreement": {str(p): score_agreement_file(p, AgreementOptions(
            "parsed_score", "gt_score", logprob_cols="score_lp*", bootstrap=0))
            for p in scores},
        "sets": {str(mcq): score_sets_file(mcq, SetsOptions(seeds=(1, 2)))},
        "intervals": {str(scores[0]): score_intervals_file(scores[0], IntervalsOptions(
            pred_col="parsed_score", logprob_cols="score_lp*", seeds=(1,),
            methods=("naive", "cqr", "lac")))},
        "steps": {str(steps): score_steps_file(steps, StepsOptions(bootstrap=0))},
        "measures": {"options.jsonl": score_measures(
            rng.random((400, len(labels))), labels, np.tile([1, 0, 0, 0], 100),
            np.repeat(np.arange(100), 4), MeasuresOptions(bootstrap=0))},
    }


def _printed(table, width: int = 80) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


def assert_whole_at(width: int, table, names) -> str:
    """The table printed ``width`` columns wide: no line wider, nothing cut, every line of
    every header on one printed line (a header wraps only where a label was wrapped at a
    separator), and every word of every input's label whole on a line."""
    text = _printed(table, width)
    lines = text.splitlines()
    assert "…" not in text, text
    assert max(map(len, lines)) <= width, text
    for column in table.columns:
        for part in str(column.header).splitlines():
            assert any(part.strip() in line for line in lines), (column.header, text)
    for label in short_labels(list(names)).labels:
        for word in label.replace("_", " ").replace("-", " ").split():
            assert any(word in line for line in lines), (word, text)
    return text


@pytest.mark.parametrize("kind", ["confidence", "agreement", "sets", "intervals", "steps",
                                  "measures"])
def test_every_table_fits_80_columns_without_cutting(kind, results, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert_whole_at(80, TERMINAL_TABLES[kind](results[kind]), results[kind])


def test_three_long_file_names_are_rows_of_short_labels_with_their_key(results, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = assert_whole_at(80, TERMINAL_TABLES["confidence"](results["confidence"]),
                           results["confidence"])
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.strip().startswith("─"))
    assert lines[rule - 1].split()[:3] == ["file", "n", "acc"]
    rows = [line.split()[0] for line in lines[rule + 1:rule + 4]]
    assert rows == ["calibrated", "overconfident", "uninformative"]
    assert "each name stands for llama-3.1-8b-instruct_*-judge_mmlu-pro_2024-05-13T12-00-00" \
        in " ".join(text.split())


def test_labels_too_wide_for_either_layout_wrap_at_separators(results, monkeypatch):
    """Seven inputs with nothing in common: neither one row nor one column each fits 80
    columns with its label on one line; the labels wrap after '_' and '-', never inside a
    word, and the table still fits."""
    monkeypatch.setenv("COLUMNS", "80")
    one = next(iter(results["confidence"].values()))
    many = {f"run{k}_{word}-model_2026-11-2{k}.jsonl": one
            for k, word in enumerate(("alpha", "bravo", "charlie", "delta", "echo",
                                      "foxtrot", "golf"))}
    table = results_table(many, [("n", "n"), ("accuracy", "acc"), ("ece", "ECE"),
                                 ("auroc", "AUROC"), ("brier", "Brier"), ("mce", "MCE"),
                                 ("auarc", "AUARC"), ("prr", "PRR"), ("rce", "RCE")], "t")
    text = assert_whole_at(80, table, many)
    for word in ("foxtrot-", "model_", "charlie-"):
        assert word in text, text


def test_a_table_that_fits_keeps_its_inputs_as_rows_and_at_200_columns_shows_intervals(
        results, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    one = dict(list(results["confidence"].items())[:1])
    table = TERMINAL_TABLES["confidence"](one)
    assert [str(c.header) for c in table.columns][:3] == ["file", "n", "acc"]


def test_the_caption_points_to_intervals_only_where_some_exist(monkeypatch, tmp_path):
    # 80 columns hide intervals: the caption says where to find them, unless there are none
    # (three rows: every bootstrap bound is NaN, so --json has none to show either)
    from confeval.evaluate import evaluate_confidence

    monkeypatch.setenv("COLUMNS", "80")
    rng = np.random.default_rng(3)
    conf = rng.random(40)
    correct = (rng.random(40) < conf).astype(float)
    cases = {"forty": evaluate_confidence(conf, correct, n_resamples=50),
             "three": evaluate_confidence(conf[:3], [0.0, 1.0, 1.0], n_resamples=50)}
    columns = [("n", "n"), ("accuracy", "acc"), ("ece", "ECE")]
    hint = "95% intervals: see --json or the report"
    words = " ".join(_printed(results_table(cases, columns, "t")).split())
    assert hint in words
    words = " ".join(_printed(results_table({"three": cases["three"]}, columns, "t")).split())
    assert "95%" not in words and "three 3 0.667" in words
    # an exact interval ({"low", "high"} itself: diagnose's accuracy) counts as well
    from confeval.report.terminal import _has_interval

    assert _has_interval({"ci": {"low": 0.0, "high": 0.43}})
    assert not _has_interval({"ci": {"low": None, "high": None}})
    assert not _has_interval({"ci": {"auroc": {"low": float("nan"), "high": float("nan")}}})


def test_a_cell_whose_value_lies_outside_its_interval_as_printed_is_marked():
    from confeval.report.terminal import compare_notes, compare_tables, marks_outside, with_interval
    from confeval.report.verdicts import OUTSIDE_NOTE

    assert with_interval(0.052, 0.053, 0.117) == "0.052 [0.053, 0.117]†"
    assert with_interval(0.0524, 0.0526, 0.117) == "0.052 [0.053, 0.117]†"   # as printed
    assert with_interval(0.0527, 0.0528, 0.117) == "0.053 [0.053, 0.117]"    # inside, printed
    assert with_interval(0.2, 0.1, 0.3) == "0.200 [0.100, 0.300]"
    # a comparison table: the marked cell, and the footnote once under the tables
    row = {"rank": 1, "rank_low": 1.0, "rank_high": 2.0, "group": "a", "low": 0.053,
           "high": 0.117}
    table = {"higher_is_better": False, "models": {
        "judge†": {**row, "value": 0.07}, "b": {**row, "rank": 2, "value": 0.052}}}
    document = {"compare": {"metrics": {"ece": table}, "models": {}, "warnings": [],
                            "n_items_shared": 10}}
    (_, rendered), = [t for t in compare_tables(document) if t[1].columns]
    cells = list(rendered.columns[2].cells)
    assert cells == ["0.070 [0.053, 0.117]", "0.052 [0.053, 0.117]†"]
    assert marks_outside(rendered) and compare_notes(document)[-1] == OUTSIDE_NOTE
    # a name holding the character is no mark
    table["models"]["b"]["value"] = 0.06
    assert not any(marks_outside(t) for _, t in compare_tables(document))
    assert OUTSIDE_NOTE not in compare_notes(document)


def test_the_intervals_table_says_where_the_per_group_numbers_are():
    """--group-col and --separately printed the same table as without them."""
    from confeval.report.sections.intervals import intervals_table

    method = {"coverage_raw": {"mean": 0.9}, "width_raw": {"mean": 3.0},
              "coverage_adj": {"mean": 0.99}, "width_adj": {"mean": 3.8}}
    plain = {"j.csv": {"source": "j.csv", "methods": {"naive": dict(method)}}}
    assert intervals_table(plain).caption is None
    grouped = {"j.csv": {"source": "j.csv", "methods": {"naive": {
        **method, "groups": {"a": method, "b": method, "c": method}}},
        "separately": {"a": {}, "b": {}}}}
    assert intervals_table(grouped).caption == (
        "all items above; by group (3 groups): --json methods.NAME.groups; each group on its "
        "own (--separately): --json separately and separately_pooled; both in the report")

"""Every terminal table at 80 columns: no header or value cut ("Spearm…"), real results."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from confeval.report import TERMINAL_TABLES
from confeval.simulate import simulate


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

    conf = [saved("confidence", 300, f"judge-{k}-with-a-long-name.csv") for k in range(2)]
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


@pytest.mark.parametrize("kind", ["confidence", "agreement", "sets", "intervals", "steps",
                                  "measures"])
def test_every_table_fits_80_columns_without_cutting(kind, results, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    console = Console(width=80, record=True, file=io.StringIO())
    table = TERMINAL_TABLES[kind](results[kind])
    console.print(table)
    text = console.export_text()
    assert "…" not in text, text
    assert max(map(len, text.splitlines())) <= 80
    # every header whole on one line (no column dropped or cut), every file name whole
    lines = text.splitlines()
    for column in table.columns:
        assert any(str(column.header) in line for line in lines), (column.header, text)
    for source in results[kind]:
        name = source.rsplit("/", 1)[-1]
        assert any(name in line for line in lines), (name, text)

"""``confeval import`` as a library (:mod:`confeval.verbs.importing`): another tool's file in
any suite's own layout, the suites without one named."""

from __future__ import annotations

from pathlib import Path

import pytest

from confeval.verbs.importing import import_file, importable

SAMPLES = next((Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "lm_eval")
               .glob("samples_*.jsonl"))


def test_every_suite_with_a_layout_imports_and_the_others_are_named():
    assert importable() == ["score", "agreement", "sets", "intervals", "measures"]
    frame, counts = import_file(SAMPLES, "sets")
    assert counts["n_used"] == len(frame) > 0
    letters = [c.split("_")[1] for c in frame.columns if c.startswith("logit_")]
    assert letters == list("ABCDEF"[:len(letters)]) and len(letters) >= 4
    rows, _ = import_file(SAMPLES, "measures")
    assert len(rows) == int(frame.filter(like="logit_").notna().sum().sum())
    with pytest.raises(ValueError, match="--suite 'steps': confeval import writes the layout "
                                         "of score, agreement, sets, intervals, measures"):
        import_file(SAMPLES, "steps")
    with pytest.raises(ValueError, match="an lm-eval file has no judge ratings"):
        import_file(SAMPLES, "intervals")
    with pytest.raises(ValueError, match="1 to 100 ratings"):
        import_file(SAMPLES, "intervals", levels=tuple(range(500)))

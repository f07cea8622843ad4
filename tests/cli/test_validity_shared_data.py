"""``confeval guarantee apply`` on the real files (../shared/data, skipped where absent): a
top-option policy certified on MMBench, applied to OOD-CV — the outside check's command and
keys."""

from __future__ import annotations

import json

import pytest

from confeval.cli import main
from confeval.validity import batch_validity, summarise_calibration

from ..validity.test_shared_data import DATA, MODEL, _top_option

pytestmark = [pytest.mark.shared_data,
              pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")]


def test_guarantee_apply_flags_oodcv_against_an_mmbench_policy(tmp_path, capsys):
    """The outside check's command on the real files: a top-option policy certified on
    MMBench (``guarantee --suite sets``), applied to the OOD-CV file; ``validity.p_value``
    equals the KS test of the two datasets' top-option confidences computed here, and
    ``validity.holds`` is false (and true for the MMBench file itself, p = 1)."""
    mmbench, oodcv = (DATA / d / f"{MODEL}.csv.gz" for d in ("mmbench", "oodcv"))
    run = tmp_path / "run"
    assert main(["guarantee", str(mmbench), "--suite", "sets", "--target", "0.1", "--out",
                 str(run)]) == 0
    capsys.readouterr()
    policy = str(run / "policy.json")
    assert main(["guarantee", "apply", policy, str(oodcv), "--json"]) == 0
    v = json.loads(capsys.readouterr().out)["validity"]
    reference = batch_validity(summarise_calibration(_top_option("mmbench", MODEL)[0]),
                               _top_option("oodcv", MODEL)[0])
    assert v["holds"] is False and v["p_value"] == pytest.approx(reference["p_value"],
                                                                 rel=1e-6)
    assert v["n_new"] == 2844 and v["n_calibration"] == 4377
    assert main(["guarantee", "apply", policy, str(oodcv), "--strict"]) == 4
    capsys.readouterr()
    assert main(["guarantee", "apply", policy, str(mmbench), "--json", "--strict"]) == 0
    v = json.loads(capsys.readouterr().out)["validity"]
    assert v["holds"] is True and v["p_value"] == 1.0

"""``confeval judge mean`` as a library (:mod:`confeval.verbs.judge`): a file read into the
labelled and unlabelled items with every unusable row counted by reason, the same numbers as
the functional core and as ppi_py on those items (1e-10), the same from CSV, JSONL and
Parquet, groups, hidden labels, the label plan, one error naming the file for what cannot be
estimated, and a folder repeated from its run.json."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from confeval.judge import corrected_mean, corrected_mean_by_group, labels_needed
from confeval.records import RecordSet
from confeval.verbs.judge import (
    JudgeMeanOptions,
    judge_mean_file,
    judge_mean_metrics,
    judge_mean_records,
    judge_mean_run_config,
    rerun_judge_mean,
)

RESULTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / \
    "vlm-judge-uncertainty" / "results"


def _frame(seed: int = 0, n: int = 2000, labelled: int = 300) -> pd.DataFrame:
    """A 1-5 judge and its humans: ``labelled`` rows with a human score, the rest empty; then
    the bad rows, one of each kind."""
    rng = np.random.default_rng(seed)
    human = rng.choice(np.arange(1, 6), n, p=[.1, .15, .2, .3, .25]).astype(float)
    judge = np.clip(np.round(human + 0.3 + rng.normal(0, 1, n)), 1, 5)
    shown = np.full(n, np.nan)
    keep = rng.choice(n, labelled, replace=False)
    shown[keep] = human[keep]
    frame = pd.DataFrame({"item": np.arange(n), "judge": judge.astype(object),
                          "human": shown.astype(object),
                          "task": rng.choice(["caption", "chart", "math"], n)})
    bad = pd.DataFrame({"item": np.arange(n, n + 7),
                        "judge": [None, -1, "abc", 3, 4, 2, 5],
                        "human": [3, 4, 2, "x", 9, 0, math.inf],
                        "task": ["caption"] * 7})
    return pd.concat([frame, bad], ignore_index=True)


EXCLUDED = {"missing_judge_score": 1, "judge_score_off_scale": 1,
            "non_numeric_judge_score": 1, "non_numeric_human_score": 1,
            "non_finite_human_score": 1, "human_score_off_scale": 2}


def _options(**values) -> JudgeMeanOptions:
    return JudgeMeanOptions(judge_col="judge", human_col="human", **values)


def _arrays(frame: pd.DataFrame):
    good = frame.iloc[:-7]
    judge = good.judge.astype(float).to_numpy()
    human = good.human.astype(float).to_numpy()
    labelled = ~np.isnan(human)
    return human[labelled], judge[labelled], judge[~labelled], good.task.to_numpy(), labelled


def test_the_file_is_read_as_ppi_py_reads_arrays(tmp_path):
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test-only dependency")
    frame = _frame()
    path = tmp_path / "judged.csv"
    frame.to_csv(path, index=False)
    res = judge_mean_file(path, _options(alpha=0.05))
    assert res["excluded"] == EXCLUDED and res["n_read"] == 2007 and res["n_used"] == 2000
    assert (res["n_labelled"], res["n_unlabelled"]) == (300, 1700)
    y, f, fu, _, _ = _arrays(frame)
    core = corrected_mean(y, f, fu, 0.05)
    assert res["methods"] == {k: m.to_dict() for k, m in core.methods.items()}
    lo, hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=None)
    assert abs(res["methods"]["ppi++"]["low"] - lo[0]) < 1e-10
    assert abs(res["methods"]["ppi++"]["high"] - hi[0]) < 1e-10
    assert res["judge_mean"] == pytest.approx(np.r_[f, fu].mean(), abs=1e-12)
    assert res["scale"] == [1.0, 5.0] and res["level"] == 0.95
    assert res["warnings"] == ["2 human score(s) off the judge's scale 1-5 excluded "
                               "(--min-score, --max-score)"]


def test_csv_jsonl_and_parquet_give_the_same_result(tmp_path):
    frame = _frame(seed=1)
    frame["judge"] = frame.judge.astype(str).where(frame.judge.notna(), None)
    frame["human"] = frame.human.astype(str).where(frame.human.notna(), None)
    paths = [tmp_path / "a.csv", tmp_path / "a.jsonl", tmp_path / "a.parquet"]
    frame.to_csv(paths[0], index=False)
    frame.to_json(paths[1], orient="records", lines=True)
    frame.to_parquet(paths[2], index=False)
    results = [judge_mean_file(p, _options()) for p in paths]
    for res in results:
        res.pop("source"), res.pop("flagged")
        assert res["excluded"]["missing_judge_score"] == 1
    assert results[0]["methods"] == results[1]["methods"] == results[2]["methods"]
    assert results[0]["n_labelled"] == results[1]["n_labelled"] == results[2]["n_labelled"]


def test_groups_keep_labels_and_the_label_plan(tmp_path):
    frame = _frame(seed=2)
    frame.loc[5, "task"] = None   # a row without a group: excluded and counted
    rs = RecordSet.from_frame(frame, "mem.csv")
    res = judge_mean_records(rs, _options(group_col="task", target_width=0.2))
    assert res["excluded"]["missing_group"] == 1
    rows = np.ones(len(frame) - 7, bool)
    rows[5] = False
    y, f, fu, task, labelled = _arrays(frame.iloc[np.r_[np.flatnonzero(rows),
                                                       np.arange(len(frame) - 7, len(frame))]])
    expected = corrected_mean_by_group(y, f, task[labelled], fu, task[~labelled], 0.1)
    assert res["groups"] == {g: r.to_dict() for g, r in expected.items()}
    assert set(res["groups"]) == {"caption", "chart", "math"}
    assert res["labels_needed"] == labels_needed(y, f, fu, 0.2, 0.1).to_dict()
    # keep 100 of the 300 labels: seeded, and the hidden ones' mean is the reference
    kept = [judge_mean_records(RecordSet.from_frame(_frame(seed=2)), _options(keep_labels=100,
                                                                              seed=s))
            for s in (4, 4, 5)]
    assert kept[0]["methods"] == kept[1]["methods"] != kept[2]["methods"]
    info = kept[0]["kept_labels"]
    assert (info["kept"], info["hidden"], kept[0]["n_labelled"]) == (100, 200, 100)
    y_all = _arrays(_frame(seed=2))[0]
    assert info["human_mean_all_labelled"] == pytest.approx(y_all.mean(), abs=1e-12)
    for name, m in kept[0]["methods"].items():
        assert info["covered"][name] == (m["low"] <= y_all.mean() <= m["high"])


def _error(frame: pd.DataFrame, tmp_path, **options) -> str:
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError) as info:
        judge_mean_file(path, _options(**options))
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message


def test_what_cannot_be_estimated_is_one_error_naming_the_file(tmp_path):
    base = pd.DataFrame({"judge": [3, 4, 5, 2, 1, 4], "human": [3, 4, None, None, None, None]})
    none = base.assign(human=None)
    assert "no labelled items" in _error(none, tmp_path)
    one = base.assign(human=[3, None, None, None, None, None])
    assert "one labelled item: no variance" in _error(one, tmp_path)
    every = base.assign(human=[3, 4, 5, 2, 2, 4])
    message = _error(every, tmp_path)
    assert "no unlabelled items" in message and "PPI is then the classical estimate" in message
    y = np.array([3, 4, 5, 2, 2, 4.0])
    z = 1.6448536269514722
    half = z * y.std() / math.sqrt(6)
    assert f"{y.mean():.4f} [{y.mean() - half:.4f}, {y.mean() + half:.4f}]" in message
    other_scale = base.assign(human=[30, 40, 50, 20, None, None])
    message = _error(other_scale, tmp_path)
    assert "every human score left (4) is off the judge's scale 1-5" in message
    assert "another scale" in message
    assert "--keep-labels 2 keeps every labelled row" in _error(base, tmp_path, keep_labels=2)
    with pytest.raises(ValueError, match="both 'x'"):
        JudgeMeanOptions(judge_col="x", human_col="x")
    with pytest.raises(ValueError, match="--alpha must be in"):
        _options(alpha=1.0)


def test_zero_variance_is_said_and_shows_no_interval():
    frame = pd.DataFrame({"judge": [3, 4, 5, 2, 1, 4, 3], "human": [4, 4, 4, None, None, None,
                                                                    None]})
    res = judge_mean_records(RecordSet.from_frame(frame), _options())
    classical = res["methods"]["classical"]
    assert classical["estimate"] == 4.0 and classical["low"] is None
    assert classical["high"] is None and "zero variance" in classical["note"]
    assert any(w.startswith("classical: zero variance") for w in res["warnings"])
    assert res["methods"]["ppi"]["low"] is not None


def test_the_run_config_repeats_the_numbers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _frame(seed=3).to_csv("judged.csv", index=False)
    options = _options(group_col="task", target_width=0.3, keep_labels=50, seed=1)
    config = judge_mean_run_config("judged.csv", options)
    assert config["command"] == "judge mean" and config["inputs"][0]["path"] == "judged.csv"
    assert len(config["inputs"][0]["sha256"]) == 64
    assert json.loads(json.dumps(config))["options"]["keep_labels"] == 50
    again = rerun_judge_mean(json.loads(json.dumps(config)))
    assert again == judge_mean_metrics({"judged.csv": judge_mean_file("judged.csv", options)})
    Path("judged.csv").write_text("judge,human\n1,2\n")
    with pytest.raises(ValueError, match="changed since the run"):
        rerun_judge_mean(config)


@pytest.mark.shared_data
@pytest.mark.skipif(not RESULTS.is_dir(), reason=f"shared data not found at {RESULTS}")
def test_the_shared_judge_file_with_300_labels_kept():
    """LLaVA-Critic's scores of 5,716 items with the 14 task groups: 300 human scores kept
    (seed 0) — the numbers of the judges tutorial."""
    path = RESULTS / "v2" / "error_analysis.csv"
    res = judge_mean_file(path, JudgeMeanOptions(judge_col="parsed_score",
                                                 human_col="gt_score", keep_labels=300))
    assert (res["n_labelled"], res["n_unlabelled"], res["excluded"]) == (300, 5416, {})
    frame = pd.read_csv(path)
    rng = np.random.default_rng(0)
    kept = rng.choice(len(frame), 300, replace=False)
    labelled = np.zeros(len(frame), bool)
    labelled[kept] = True
    y, f = frame.gt_score.to_numpy(float), frame.parsed_score.to_numpy(float)
    core = corrected_mean(y[labelled], f[labelled], f[~labelled], 0.1)
    assert res["methods"] == {k: m.to_dict() for k, m in core.methods.items()}
    assert res["kept_labels"]["human_mean_all_labelled"] == pytest.approx(3.42512246, abs=1e-8)
    assert {k: round(m["estimate"], 3) for k, m in res["methods"].items()} == \
        {"classical": 3.463, "ppi": 3.423, "ppi++": 3.444}

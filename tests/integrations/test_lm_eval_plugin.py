"""confeval's lm-eval aggregations give ``confeval score``'s numbers: on the per-choice items
stored by a real lm-eval 0.4.13 run with the plugin on the embedded model (always run),
against both ``confeval score`` of that run's samples files and the numbers lm-eval itself
reported; and, where lm-eval is installed, registered in lm-eval and in a new run."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from confeval.integrations import lm_eval_aggregations as A
from confeval.suites.score import ConfidenceOptions, score_confidence_file

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "fixtures" / "integrations" / "lm_eval"
TOL = 1e-12
(RESULTS,) = sorted(RUN.glob("results_*.json"))


def _samples(task: str) -> Path:
    (path,) = sorted(RUN.glob(f"samples_{task}_2*.jsonl"))
    return path


def _items(task: str, key: str) -> list:
    """The per-sample items lm-eval logged under ``key``, in the file's order."""
    lines = [json.loads(line) for line in _samples(task).read_text().splitlines()]
    return [line[key] for line in lines]


def _reported(task: str, key: str) -> float:
    return json.loads(RESULTS.read_text())["results"][task][f"{key},none"]


def _confeval_score(task: str) -> dict:
    return score_confidence_file(_samples(task), ConfidenceOptions())


def test_the_run_reported_confeval_scores_numbers():
    """What lm-eval printed for each task (ECE under brier_score, AUROC under likelihood,
    the interval and the top choice's Brier in the other two tasks) is ``confeval score`` of
    the same run's samples file."""
    want = _confeval_score("confeval_arith_mc_plugin")
    assert want["n"] == 40 and want["accuracy"] == _reported("confeval_arith_mc_plugin", "acc")
    pairs = [("confeval_arith_mc_plugin", "brier_score", want["ece"]),
             ("confeval_arith_mc_plugin", "likelihood", want["auroc"]),
             ("confeval_arith_mc_plugin_ci", "brier_score", want["ci"]["ece"]["low"]),
             ("confeval_arith_mc_plugin_ci", "likelihood", want["ci"]["ece"]["high"]),
             ("confeval_arith_mc_plugin_brier", "brier_score", want["brier"])]
    for task, key, value in pairs:
        assert abs(_reported(task, key) - value) <= TOL, (task, key)


def test_the_results_file_names_the_aggregation_used():
    configs = json.loads(RESULTS.read_text())["configs"]
    metrics = {m["metric"]: m.get("aggregation", "")
               for m in configs["confeval_arith_mc_plugin"]["metric_list"]}
    assert metrics["brier_score"].startswith("def ece(")
    assert metrics["likelihood"].startswith("def auroc(")


@pytest.mark.parametrize("name, fn", [("ece", A.ece), ("auroc", A.auroc),
                                      ("brier", A.brier_top)])
def test_each_aggregation_on_the_stored_items_is_confeval_score(name, fn):
    """The stored ``likelihood`` items (gold, log-likelihoods: written at full precision)
    give ``confeval score``'s number of the samples file."""
    got = fn(_items("confeval_arith_mc_plugin", "likelihood"))
    assert abs(got - _confeval_score("confeval_arith_mc_plugin")[name]) <= TOL


def test_the_interval_on_the_stored_items_is_confeval_scores():
    items = _items("confeval_arith_mc_plugin", "likelihood")
    ci = _confeval_score("confeval_arith_mc_plugin")["ci"]["ece"]
    assert abs(A.ece_low(items) - ci["low"]) <= TOL
    assert abs(A.ece_high(items) - ci["high"]) <= TOL


def _printed_probabilities(item) -> tuple[int, np.ndarray]:
    """lm-eval writes a ``brier_score`` item's probabilities as numpy prints an array."""
    gold, text = item
    return gold, np.array([float(v) for v in text.strip("[]").split()])


def test_the_stored_probabilities_are_printed_with_8_digits_only():
    """The ``brier_score`` items the run aggregated were exact (the reported ECE above); the
    samples file keeps them as numpy's printed text, 8 significant digits: from those the
    same top choices, and an ECE within 1e-6."""
    stored = [_printed_probabilities(i) for i in _items("confeval_arith_mc_plugin",
                                                        "brier_score")]
    lls = _items("confeval_arith_mc_plugin", "likelihood")
    assert [int(np.argmax(p)) for _, p in stored] == [int(np.argmax(v)) for _, v in lls]
    assert abs(A.ece(stored) - A.ece(lls)) <= 1e-6


def test_items_without_a_usable_gold_are_left_out_and_counted():
    rows = A.item_rows([(0, [-1.0, -2.0]), (-100, [-1.0, -2.0]), ([0, 1], [-1.0, -2.0]),
                        (1, [0.2, 0.8]), (0, [-1.0]), (2, [-1.0, -2.0])])
    assert [r["correct"] for r in rows] == [1.0, None, None, 1.0, None, None]
    assert rows[3]["confidence"] == 0.8
    assert abs(rows[0]["confidence"] - 1 / (1 + math.exp(-1.0))) <= TOL


def test_log_likelihoods_and_probabilities_give_one_confidence():
    lls = np.array([-3.2, -0.4, -1.7])
    probs = np.exp(lls - lls.max()) / np.exp(lls - lls.max()).sum()
    (a,), (b,) = A.item_rows([(1, lls)]), A.item_rows([(1, probs)])
    assert abs(a["confidence"] - b["confidence"]) <= TOL and a["correct"] == b["correct"]


# --------------------------------------------------------------------- with lm-eval itself
def test_importing_the_plugin_registers_the_aggregations_beside_lm_evals_own():
    pytest.importorskip("lm_eval", reason="lm-eval is not installed "
                        "(pip install lm-eval==0.4.13)")
    from lm_eval.api.registry import get_aggregation

    from confeval.integrations import lm_eval_plugin

    for name, fn in A.AGGREGATIONS.items():
        assert get_aggregation(name) is fn
    assert get_aggregation("mean") is not None   # the built-ins are still there
    lm_eval_plugin.register()                    # twice: no clash
    assert get_aggregation("confeval_ece") is A.ece


def test_a_new_lm_eval_run_with_the_plugin_reports_confeval_scores_ece(tmp_path):
    """lm-eval on the embedded model with the plugin task (12 questions): its ECE under
    ``brier_score`` is ``confeval score`` of the samples file it writes."""
    pytest.importorskip("lm_eval", reason="lm-eval is not installed "
                        "(pip install lm-eval==0.4.13)")
    pytest.importorskip("transformers", reason="the embedded model needs transformers")
    from confeval.backends.local import export_dir

    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "ingest"))
    try:
        from make_fixtures import PLUGIN_SHIM, plugin_task_yaml, write_data
    finally:
        sys.path.pop(0)
    data = tmp_path / "arith_mc.jsonl"
    write_data(data, 12)
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "confeval_arith_mc_plugin.yaml").write_text(
        plugin_task_yaml("confeval_arith_mc_plugin", data))
    (tasks / "confeval_lm_eval.py").write_text(PLUGIN_SHIM)
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args",
         f"pretrained={export_dir()},dtype=float32", "--tasks", "confeval_arith_mc_plugin",
         "--include_path", str(tasks), "--device", "cpu", "--batch_size", "8",
         "--log_samples", "--output_path", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    (results,) = (tmp_path / "out").rglob("results_*.json")
    (samples,) = (tmp_path / "out").rglob("samples_*.jsonl")
    reported = json.loads(results.read_text())["results"]["confeval_arith_mc_plugin"]
    want = score_confidence_file(samples, ConfidenceOptions())
    assert want["n"] == 12
    assert abs(reported["brier_score,none"] - want["ece"]) <= TOL
    assert abs(reported["likelihood,none"] - want["auroc"]) <= TOL or (
        math.isnan(reported["likelihood,none"]) and math.isnan(want["auroc"]))
    shutil.rmtree(tmp_path / "out")

"""`confeval simulate`, `demo` and `report`."""

import json
import time

import pandas as pd
import pytest

from confeval.cli import main
from confeval.demo import live_model_available
from confeval.simulate import simulate


def run(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_simulate_round_trip(capsys, tmp_path):
    path = tmp_path / "steps.jsonl.gz"
    code, _, err = run(capsys, "simulate", "steps", "--n", "20", "--out", str(path))
    assert code == 0 and "simulated steps records" in err
    df = pd.read_json(path, lines=True)
    pd.testing.assert_frame_equal(df, simulate("steps", 20, seed=0), check_dtype=False)


def test_demo_writes_a_run_folder_fast(capsys, tmp_path):
    start = time.perf_counter()
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path / "demo"), "--n", "300",
                       "--bootstrap", "50", "--no-live")
    assert code == 0 and time.perf_counter() - start < 60
    assert "SIMULATED" in out
    metrics = json.loads((tmp_path / "demo" / "metrics.json").read_text())
    assert metrics["simulated"] is True
    kinds = [s["kind"] for s in metrics["sections"]]
    assert kinds == ["confidence", "agreement", "steps", "confidence"]
    steps = metrics["sections"][2]["results"]
    assert set(steps) == {"typical", "overconfident"}
    assert all(steps[j]["crs"] is not None and steps[j]["ci"]["css"] for j in steps)
    over = metrics["sections"][0]["results"]["overconfident"]
    cal = metrics["sections"][0]["results"]["calibrated"]
    assert over["ece"] > cal["ece"]
    html = (tmp_path / "demo" / "report.html").read_text()
    assert "SIMULATED DATA" in html and "data:image/png;base64," in html
    assert "http://" not in html and "https://" not in html  # self-contained
    assert "robustness by perturbation" in html


@pytest.mark.skipif(live_model_available() is not None,
                    reason=f"no live model: {live_model_available()}")
def test_demo_runs_the_embedded_model_live_and_caches(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "cache.sqlite"))
    args = ["demo", "--n", "100", "--bootstrap", "20", "--live-items", "12"]
    code, out, _ = run(capsys, *args, "--out", str(tmp_path / "a"))
    assert code == 0 and "[LIVE MODEL]" in out
    metrics = json.loads((tmp_path / "a" / "metrics.json").read_text())
    titles = [s["title"] for s in metrics["sections"]]
    for suite in ("sets", "intervals", "steps", "diagnose", "measures"):  # every suite live
        assert any(t.startswith(f"LIVE ({suite})") for t in titles), suite
    live, live_sets = [s for s in metrics["sections"] if s["title"].startswith("LIVE (sets)")]
    assert live_sets["kind"] == "sets" and live_sets["simulated"] is False
    (sets_result,) = live_sets["results"].values()
    assert sets_result["n_cal"] + sets_result["n_test"] == sets_result["n_used"]
    assert live["simulated"] is False and metrics["simulated"] is False
    (result,) = live["results"].values()
    assert result["n_used"] + sum(result["excluded"].values()) == 12
    assert "12 model call(s)" in live["description"]
    code, _, _ = run(capsys, *args, "--out", str(tmp_path / "b"))
    again = next(s for s in json.loads((tmp_path / "b" / "metrics.json").read_text())[
        "sections"] if s["title"].startswith("LIVE (sets)"))
    assert "0 model call(s)" in again["description"]
    assert next(iter(again["results"].values()))["ece"] == result["ece"]


def test_report_rerenders(capsys, tmp_path):
    run(capsys, "demo", "--out", str(tmp_path / "d"), "--n", "100", "--bootstrap", "0",
        "--no-live")
    (tmp_path / "d" / "report.html").unlink()
    code, _, _ = run(capsys, "report", str(tmp_path / "d"))
    assert code == 0 and (tmp_path / "d" / "report.html").is_file()

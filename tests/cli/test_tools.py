"""`confeval simulate`, `demo` and `report`."""

import json

import pandas as pd
import pytest

from confeval.cli import main
from confeval.simulate import simulate
from confeval.verbs.demo import live_model_available


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


def test_demo_writes_a_run_folder(capsys, tmp_path):
    # how fast is no test's question (the machine's load decides): the demo prints its time
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path / "demo"), "--n", "300",
                       "--bootstrap", "50", "--no-live")
    assert code == 0
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


@pytest.fixture
def scored_run(tmp_path, capsys):
    """A run folder of `confeval score` on seeded simulated records."""
    path = tmp_path / "judge.csv"
    simulate("confidence", 300, "overconfident", seed=5).to_csv(path, index=False)
    code, _, _ = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                     "--bootstrap", "0", "--out", str(tmp_path / "run"))
    assert code == 0
    return tmp_path / "run"


def _broken_figure(*args, **kwargs):
    raise RuntimeError("no canvas")


def test_report_names_a_chart_it_could_not_draw_and_exits_3(scored_run, capsys, monkeypatch):
    from confeval.report import html

    monkeypatch.setattr(html, "reliability_figure", _broken_figure)
    (scored_run / "report.html").unlink()
    code, out, err = run(capsys, "report", str(scored_run))
    assert code == 3
    title = json.loads((scored_run / "metrics.json").read_text())["sections"][0]["title"]
    assert err.splitlines() == [f"report incomplete: section '{title}': chart 'reliability "
                                "diagrams' not drawn (RuntimeError: no canvas)"]
    page = (scored_run / "report.html").read_text()
    assert "Chart not drawn: reliability diagrams (RuntimeError: no canvas)." in page
    assert "<th>ECE</th>" in page and "alt='risk–coverage curves'" in page   # the rest is there
    assert f"report: {scored_run / 'report.html'}" in out
    monkeypatch.undo()
    code, _, err = run(capsys, "report", str(scored_run))
    assert code == 0 and err == ""                                     # complete again


def test_a_scoring_command_writing_an_incomplete_report_says_so_and_exits_3(tmp_path, capsys,
                                                                           monkeypatch):
    from confeval.report import html

    monkeypatch.setattr(html, "risk_coverage_figure", _broken_figure)
    path = tmp_path / "judge.csv"
    simulate("confidence", 300, "overconfident", seed=5).to_csv(path, index=False)
    code, out, err = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                         "--bootstrap", "0", "--out", str(tmp_path / "run"))
    assert code == 3
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    title = metrics["sections"][0]["title"]
    assert [line for line in err.splitlines() if "not drawn" in line] == [
        f"report incomplete: section '{title}': chart 'risk–coverage curves' not drawn "
        "(RuntimeError: no canvas)"]
    assert "ECE" in out                                   # the table was printed all the same
    assert metrics["sections"][0]["results"][str(path)]["n_used"] == 300
    assert "Chart not drawn: risk–coverage curves" in (tmp_path / "run" / "report.html"
                                                        ).read_text()

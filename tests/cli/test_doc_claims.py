"""Claims of the documentation checked against what confeval does (issue #37 item 8): what
``--out`` writes — the README's sentence and the formats page's table ("Run folders and the
files confeval writes"), on the folders of ``score``, ``guarantee``, ``compare`` and the demo
(``records.jsonl`` is a live run's, not every folder's) — and what the getting-started page
says the terminal shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from confeval.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _table() -> dict[str, str]:
    """file -> what, the formats page's table of run-folder files."""
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    section = text.split("## Run folders and the files confeval writes", 1)[1]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([\w.]+)` \| (.*?) \|",
                                                         section, flags=re.M)}


def _written(command: str) -> list[str]:
    """The files the table says ``command``'s ``--out`` writes: those for every folder, and
    those it names as this command's only."""
    out = []
    for name, what in _table().items():
        if " only:" not in what:   # "X only: ..." restricts a file to X
            out.append(name)
        elif f"`confeval {command} --out` only" in what or \
                (command == "demo" and "(and the demo) only" in what):
            out.append(name)
    return sorted(out)


@pytest.fixture()
def folders(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for behaviour, seed in (("overconfident", 0), ("calibrated", 1)):
        assert main(["simulate", "confidence", "--behaviour", behaviour, "--n", "500",
                     "--seed", str(seed), "--out", f"{behaviour}.csv"]) == 0
    flags = ["-c", "confidence", "-y", "correct"]
    runs = {
        "score": ["score", "overconfident.csv", *flags, "--bootstrap", "20"],
        "guarantee": ["guarantee", "overconfident.csv", *flags, "--target", "0.3"],
        "compare": ["compare", "overconfident.csv", "calibrated.csv", *flags,
                    "--id-col", "item_id", "--bootstrap", "20"],
        "demo": ["demo", "--n", "100", "--bootstrap", "0", "--no-live"],
    }
    made = {}
    for command, argv in runs.items():
        assert main([*argv, "--out", f"runs/{command}"]) == 0, capsys.readouterr().err
        made[command] = sorted(p.name for p in (tmp_path / "runs" / command).iterdir())
    capsys.readouterr()
    return made


def test_the_formats_table_says_which_files_each_folder_holds(folders):
    table = _table()
    assert {"run.json", "records.jsonl", "metrics.json", "report.html", "policy.json",
            "compare.csv"} <= set(table)
    for command, files in folders.items():
        assert files == _written(command), command
    assert all("records.jsonl" not in folders[c] for c in ("score", "guarantee", "compare"))


def test_the_readme_says_what_every_out_folder_holds(folders):
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = re.search(r"`--out DIR` \(a run folder with (.*?)\); a live run \(`SUITE run`, "
                     r"`demo`\) takes `--out DIR`, keeps its `records.jsonl` there too", text)
    assert said, "the README's sentence on --out changed: check it against the folders"
    named = sorted(re.findall(r"`([\w.]+)`", said.group(1)))
    assert named == folders["score"]
    for command in ("guarantee", "compare"):
        assert set(named) <= set(folders[command])


def test_getting_started_reads_the_terminal_it_shows():
    """The getting-started page's words about the terminal are true of the output it shows
    (which tests/cli/test_docs_commands.py compares with what the command prints): a verdict
    with the mean confidence, the accuracy and its interval wholly below that confidence, an
    AUROC interval above 0.5, then the metrics table."""
    from tests.cli.test_docs_commands import blocks

    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    found = blocks(page)
    k = next(i for i, (language, code) in enumerate(found)
             if language == "bash" and code.strip() == "confeval score judge.csv -c "
             "confidence -y correct")
    assert found[k + 1][0] == "text"
    shown = " ".join(found[k + 1][1].split())
    m = re.search(r"judge: overconfident: states ([\d.]+), right ([\d.]+) \[([\d.]+), "
                  r"([\d.]+)\].*\(AUROC ([\d.]+) \[([\d.]+), ([\d.]+)\]\)", shown)
    assert m, shown
    states, right, _, right_hi, _, auroc_lo, _ = m.groups()
    prose = " ".join(page.split())
    assert f"states a mean confidence of {states} while it is right {right} of the time" \
        in prose
    assert "the accuracy's 95% interval lies wholly below " + states in prose
    assert float(right_hi) < float(states)
    assert "its AUROC interval lies above 0.5" in prose and float(auroc_lo) > 0.5
    assert "a verdict first, with the numbers and 95% intervals behind it, then the metrics " \
        "table" in prose
    assert shown.index("judge: overconfident") < shown.index(" file n acc ECE")


def test_the_score_tutorials_json_intervals_are_what_the_command_gives(tmp_path, monkeypatch,
                                                                     capsys):
    """The score tutorial quotes the --json intervals of its calibrated judge; a newcomer
    found them stale (the bootstrap had changed, the quoted numbers had not)."""
    import json

    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "confidence", "--behaviour", "calibrated", "--n", "2000",
                 "--seed", "1", "--out", "calibrated.csv"]) == 0
    capsys.readouterr()
    assert main(["score", "calibrated.csv", "-c", "confidence", "-y", "correct",
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]["calibrated.csv"]

    def said(metric: str) -> str:
        ci = res["ci"][metric]
        return f"{res[metric]:.3f} [{ci['low']:.3f}, {ci['high']:.3f}]"

    prose = " ".join((ROOT / "docs" / "tutorials" / "score.md").read_text(
        encoding="utf-8").split())
    assert (f"For the calibrated judge: accuracy {said('accuracy')}, AUROC {said('auroc')}, "
            f"ECE {said('ece')}.") in prose

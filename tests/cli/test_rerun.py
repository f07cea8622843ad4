"""``confeval rerun``: a scoring folder repeated from its run.json gives an identical
metrics.json, or one line naming the input that changed; a live folder is rescored from its
records with no model call."""

from __future__ import annotations

import json

from confeval.backends import ScriptedBackend
from confeval.cli import main
from confeval.rerun import differences, rerun
from confeval.runner import run_suite
from confeval.simulate import simulate
from confeval.suites import get_suite
from confeval.tasks import arith_mc


def _run(argv, capsys):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    return code, *capsys.readouterr()


def test_an_intervals_scoring_folder_reruns_identically(tmp_path, capsys):
    path = tmp_path / "judge.csv"
    simulate("scores", 300, "compressing", seed=3).to_csv(path, index=False)
    code, _, err = _run(["intervals", "score", path, "--logprob-cols", "score_lp*",
                         "--pred-col", "parsed_score", "--methods", "naive,lac", "--seeds",
                         "1-2", "--alpha", "0.2", "--out", tmp_path / "R"], capsys)
    assert code == 0, err
    code, out, err = _run(["rerun", tmp_path / "R", "--out", tmp_path / "R2"], capsys)
    assert code == 0 and "metrics identical" in out, out + err
    first = json.loads((tmp_path / "R" / "metrics.json").read_text())
    second = json.loads((tmp_path / "R2" / "metrics.json").read_text())
    assert differences(first, second) == []
    assert second["sections"][0]["results"][str(path)]["alpha"] == 0.2
    # an edited input is named in one line
    path.write_text(path.read_text().replace("\n1,", "\n2,", 1))
    code, _, err = _run(["rerun", tmp_path / "R"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{path}: changed since the run" in err


def test_a_sets_scoring_folder_reruns_identically(tmp_path, capsys):
    path = tmp_path / "mcq.csv"
    simulate("mcq", 300, seed=4).to_csv(path, index=False)
    assert _run(["sets", "score", path, "--seeds", "1-3", "--scores", "lac,aps", "--out",
                 tmp_path / "R"], capsys)[0] == 0
    code, out, _ = _run(["rerun", tmp_path / "R"], capsys)
    assert code == 0 and "metrics identical" in out


def test_a_live_folder_is_rescored_from_its_records_without_a_model(tmp_path):
    items = arith_mc(30, seed=5)

    def scorer(messages, letter):  # varied, deterministic option distributions
        bump = sum(map(ord, messages[-1]["content"])) % 7 / 3
        return -0.5 * ("ABCDEF".index(letter) + 1) + (bump if letter == "B" else 0.0)

    backend = ScriptedBackend(scorer=scorer)
    suite = get_suite("sets")
    result = run_suite(suite, backend, items, tmp_path / "R", config={
        "command": "run", "suite": "sets", "model": "scripted"},
        options=suite.Options(bootstrap=20, alpha=0.2), model_name="scripted")
    calls = backend.calls
    again = rerun(tmp_path / "R", tmp_path / "R2")
    assert backend.calls == calls
    assert differences(result.metrics, again) == []
    assert again["sections"][1]["results"]["scripted"]["alpha"] == 0.2

"""``confeval rerun`` as a library (:mod:`confeval.verbs.rerun`): scoring, compare, guarantee
and steps-consistency folders repeated from their run.json with identical metrics; the inputs'
paths found through the run's working directory; an input gone or changed, and a folder of an
older format, said in one line."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from confeval.report import publish
from confeval.runs import RunFolder, write_run_folder
from confeval.simulate import simulate
from confeval.verbs.compare import (
    CompareOptions,
    compare_files,
    compare_run_config,
    compare_section,
)
from confeval.verbs.guarantee import (
    GuaranteeOptions,
    guarantee_inputs,
    guarantee_metrics,
    guarantee_run_config,
)
from confeval.verbs.rerun import differences, rerun
from confeval.verbs.score import score_inputs, scoring_command


def _folder(out, config, metrics):
    with write_run_folder(out, command=config["command"]) as folder:
        folder.write_run(config)
        publish(folder, metrics)
    return out


def _judges(tmp_path):
    paths = []
    for k, behaviour in enumerate(("calibrated", "overconfident")):
        path = tmp_path / f"{behaviour}.csv"
        frame = simulate("confidence", 300, behaviour, seed=k)
        frame.insert(0, "id", np.arange(len(frame)))
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


def test_compare_and_guarantee_folders_repeat_identically(tmp_path):
    a, b = _judges(tmp_path)
    options = CompareOptions(id_col="id", bootstrap=100)
    values = {"confidence_col": "confidence", "correct_col": "correct"}
    inputs = [("A", a), ("B", b)]
    result = compare_files(inputs, options, values)
    folder = _folder(tmp_path / "c", compare_run_config(inputs, options, values, result),
                     {"title": "confeval compare", "simulated": False,
                      "sections": [compare_section(result)]})
    again = rerun(folder)
    assert differences(RunFolder(folder, create=False).read_metrics(), again) == []
    g_options = GuaranteeOptions(target=0.2, split_seed=1)
    certified = guarantee_inputs([a], g_options, values, frozenset(values))
    g = _folder(tmp_path / "g", guarantee_run_config([a], g_options, values),
                guarantee_metrics([a], certified))
    assert differences(RunFolder(g, create=False).read_metrics(), rerun(g)) == []


def test_a_relative_input_is_found_through_the_runs_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mcq.csv").write_text(simulate("mcq", 200, seed=1).to_csv(index=False))
    scored = score_inputs(scoring_command("sets score"), [["mcq.csv"]], {"scores": "lac"})
    folder = _folder(tmp_path / "s", scored.config, scored.metrics())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert differences(scored.metrics(), rerun(folder)) == []
    (tmp_path / "mcq.csv").unlink()
    with pytest.raises(ValueError, match=r"mcq.csv: the input of this run is gone \(looked at "
                                         rf"mcq.csv and {tmp_path}/mcq.csv\)"):
        rerun(folder)


def test_a_changed_input_and_an_old_compare_folder_are_one_line_each(tmp_path):
    a, _ = _judges(tmp_path)
    scored = score_inputs(scoring_command("score"), [[a]],
                          {"confidence_col": "confidence", "correct_col": "correct",
                           "bootstrap": 0})
    folder = _folder(tmp_path / "s", scored.config, scored.metrics())
    a.write_text(a.read_text() + "0,0.5,1\n")
    with pytest.raises(ValueError, match="changed since the run"):
        rerun(folder)
    old = _folder(tmp_path / "old", {"command": "compare", "suite": "score",
                                     "inputs": [], "options": {}},
                  {"title": "t", "simulated": False, "sections": []})
    with pytest.raises(ValueError, match="written before confeval recorded how to repeat"):
        rerun(old)


def test_a_steps_consistency_folder_repeats(tmp_path):
    rng = np.random.default_rng(4)
    pairs = []
    for judge in ("j1", "j2", "j3"):
        files = []
        for side in "AB":
            frame = simulate("steps", 30, "typical", seed=int(rng.integers(1000)))
            path = tmp_path / f"{judge}-{side}.jsonl"
            frame.to_json(path, orient="records", lines=True)
            files.append(path)
        pairs.append(f"{judge}={files[0]},{files[1]}")
    command = scoring_command("steps consistency")
    from confeval.suites.steps import ConsistencyOptions

    inputs = ConsistencyOptions(pairs=tuple(pairs)).inputs()
    scored = score_inputs(command, inputs, {"pairs": pairs})
    folder = _folder(tmp_path / "cons", scored.config, scored.metrics())
    assert differences(scored.metrics(), rerun(folder)) == []
    run = json.loads((folder / "run.json").read_text())["config"]
    assert [e["path"] for e in run["inputs"]] == [[str(p) for p in pair] for pair in inputs]
    assert pd.notna(scored.results["generators A vs B"]["inputs"]["j1"]["A"]["n_used"])


@pytest.mark.parametrize("config, message", [
    ([1, 2], "'config' is a list, not an object"),
    ({"command": ["sets score"]}, "'command' is ['sets score'], not a name"),
    ({"command": "sets score", "inputs": [{"options": {}}]},
     "without its path, sha256 or options"),
    ({"command": "sets score", "inputs": [{"path": "x.csv", "sha256": None,
                                           "options": {"alpha": "x"}}]},
     "--alpha: 'x' is not a number"),
    ({"command": "run", "suite": "sets", "options": {"alpha": [0.1]}},
     "--alpha: (0.1,) is not a number"),
    ({"command": "run", "suite": "sets", "options": "fast"},
     "the options of the sets suite are a str, not an object"),
    ({}, "no command to repeat"),
])
def test_an_edited_run_json_is_one_line_naming_the_key(tmp_path, monkeypatch, config,
                                                       message):
    """What a hand-edited run.json holds is checked: one ValueError naming the file or the
    flag, never an AttributeError, KeyError or TypeError."""
    folder = tmp_path / "edited"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"config": config}))
    (folder / "records.jsonl").write_text('{"item_id": "a"}\n')
    (tmp_path / "x.csv").write_text("a\n1\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=re.escape(message)):
        rerun(folder)

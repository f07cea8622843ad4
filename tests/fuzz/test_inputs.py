"""Hostile input files through every scoring command: each case builds its input here, runs
the command, and asserts the exit code, the one-line error naming the file/row/option or the
exclusion counts — and that no traceback is printed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.simulate import simulate


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Aborted" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("error: "), err
    return code, out, err


def results(out: str) -> dict:
    return next(iter(json.loads(out)["results"].values()))


# --- the commands, each with the options that make it read a simulated file ----------------
def conf_file(tmp: Path, frame: pd.DataFrame | None = None, name: str = "c.csv") -> Path:
    frame = simulate("confidence", 60, seed=1) if frame is None else frame
    path = tmp / name
    frame.to_csv(path, index=False) if name.endswith(".csv") else frame.to_json(
        path, orient="records", lines=True)
    return path


SCORE = ["score", "-c", "confidence", "-y", "correct", "--bootstrap", "20", "--json"]
COMMANDS = {
    "score": (SCORE, lambda t: simulate("confidence", 60, seed=1)),
    "agreement": (["agreement", "--pred-col", "parsed_score", "--gt-col", "gt_score",
                   "--logprob-cols", "score_lp*", "--bootstrap", "20", "--json"],
                  lambda t: simulate("scores", 60, seed=1)),
    "sets": (["sets", "score", "--seeds", "1-2", "--json"],
             lambda t: simulate("mcq", 60, seed=1)),
    "intervals": (["intervals", "score", "--logprob-cols", "score_lp*", "--methods",
                   "naive,lac", "--base", "linear", "--seeds", "1-2", "--json"],
                  lambda t: simulate("scores", 60, seed=1)),
    "steps": (["steps", "score", "--bootstrap", "20", "--json"],
              lambda t: simulate("steps", 20, seed=1)),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", ["empty", "header only", "truncated gzip", "json array",
                                  "duplicate columns", "not utf-8 csv"])
def test_unreadable_files_are_one_line_errors(tmp_path, capsys, command, case):
    argv, make = COMMANDS[command]
    frame = make(tmp_path)
    if case == "empty":
        path = tmp_path / "x.csv"
        path.write_text("")
    elif case == "header only":
        path = tmp_path / "x.csv"
        path.write_text(",".join(frame.columns) + "\n")
    elif case == "truncated gzip":
        path = tmp_path / "x.csv.gz"
        data = gzip.compress(frame.to_csv(index=False).encode())
        path.write_bytes(data[: len(data) // 2])
    elif case == "json array":
        path = tmp_path / "x.jsonl"
        path.write_text(frame.to_json(orient="records", indent=1))
    elif case == "duplicate columns":
        path = tmp_path / "x.csv"
        dup = frame.copy()
        dup.insert(1, frame.columns[-1] + "_dup", frame.iloc[:, -1])
        text = dup.to_csv(index=False).replace(frame.columns[-1] + "_dup", frame.columns[-1],
                                               1)
        path.write_text(text)
    else:
        path = tmp_path / "x.csv"
        path.write_bytes(frame.to_csv(index=False).encode() + b"\xff\xfe,\x80\n")
    code, _, err = run([*argv[:2], path, *argv[2:]] if command in ("sets", "intervals", "steps")
                       else [argv[0], path, *argv[1:]], capsys)
    assert code == 2, err
    assert str(path) in err or path.name in err


def _argv(command: str, path: Path) -> list:
    argv, _ = COMMANDS[command]
    return [*argv[:2], path, *argv[2:]] if command in ("sets", "intervals", "steps") else \
        [argv[0], path, *argv[1:]]


def test_bom_crlf_and_a_bad_jsonl_line_are_read(tmp_path, capsys):
    frame = simulate("confidence", 50, seed=2)
    csv = tmp_path / "bom.csv"
    csv.write_bytes(b"\xef\xbb\xbf" + frame.to_csv(index=False).replace("\n", "\r\n").encode())
    code, out, _ = run(_argv("score", csv), capsys)
    assert code == 0 and results(out)["n_used"] == 50
    jsonl = tmp_path / "bom.jsonl"
    lines = frame.to_json(orient="records", lines=True).encode().splitlines()
    lines[3] = b'{"confidence": 0.5, "correct": 1, "note": "\xff"}'
    jsonl.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n")
    code, out, _ = run(_argv("score", jsonl), capsys)
    res = results(out)
    assert code == 0 and res["n_used"] == 49 and res["excluded"] == {"unparseable_line": 1}
    assert res["flagged"][0]["row"] == 4


def test_non_finite_huge_and_boolean_text_values_are_counted(tmp_path, capsys):
    frame = simulate("confidence", 40, seed=3)
    frame["confidence"] = frame["confidence"].astype(object)
    frame["correct"] = frame["correct"].astype(object)
    frame.loc[0, "confidence"] = "nan"
    frame.loc[1, "confidence"] = "inf"
    frame.loc[2, "confidence"] = 1e308
    frame.loc[3, "correct"] = "true"    # a correctness word: 1 (issue #37)
    frame.loc[4, "confidence"] = "-inf"
    frame.loc[5, "correct"] = "maybe"   # no correctness word
    code, out, _ = run(_argv("score", conf_file(tmp_path, frame)), capsys)
    res = results(out)
    assert code == 0
    assert res["excluded"] == {"missing_confidence": 1, "non_finite_confidence": 2,
                               "confidence_out_of_range": 1, "non_numeric_correct": 1}
    assert res["n_used"] == 35


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("rows", [1, 2, 3])
def test_one_two_three_rows(tmp_path, capsys, command, rows):
    _, make = COMMANDS[command]
    frame = make(tmp_path)
    if command == "steps":
        frame = frame[frame.item_id.isin(frame.item_id.unique()[:rows])]
    else:
        frame = frame.head(rows)
    path = tmp_path / "few.csv"
    frame.to_csv(path, index=False)
    code, out, err = run([*_argv(command, path), *(["--seeds", "1-50"]
                                                   if command in ("sets", "intervals") else [])],
                         capsys)
    if code == 0:
        assert results(out)["n_used"] == len(frame)
    else:
        assert code == 2 and str(path) in err


def test_single_class_labels_give_undefined_metrics_not_a_crash(tmp_path, capsys):
    frame = simulate("confidence", 50, seed=4)
    frame["correct"] = 1
    code, out, _ = run(_argv("score", conf_file(tmp_path, frame)), capsys)
    res = results(out)
    assert code == 0 and res["auroc"] is None and res["accuracy"] == 1.0


def test_thousands_of_singleton_groups(tmp_path, capsys):
    frame = simulate("mcq", 3000, seed=5)
    frame["category"] = [f"g{i}" for i in range(3000)]
    path = tmp_path / "groups.csv"
    frame.to_csv(path, index=False)
    code, out, _ = run(["sets", "score", path, "--group-col", "category", "--json"], capsys)
    res = results(out)
    assert code == 0 and len(res["groups"]) == 1500  # the test half's groups
    # with one calibration row per group nothing can be calibrated: full sets, and it says so
    assert res["scores"]["lac"]["coverage"] == 1.0 and res["warnings"]


@pytest.mark.parametrize("command", ["sets", "intervals", "steps"])
def test_missing_groups_are_excluded_and_na_is_a_group(tmp_path, capsys, command):
    _, make = COMMANDS[command]
    frame = make(tmp_path)
    group = {"sets": "category", "intervals": "region", "steps": "difficulty"}[command]
    frame[group] = np.where(np.arange(len(frame)) % 2 == 0, "NA", "EU")
    frame.loc[frame.index[1], group] = None
    path = tmp_path / "g.csv"
    frame.to_csv(path, index=False)
    argv = [*_argv(command, path), "--group-col", group]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    res = results(out)
    assert res["excluded"].get("missing_group", 0) == 1
    groups = {"sets": lambda r: r["groups"],
              "intervals": lambda r: r["methods"]["naive"]["groups"],
              "steps": lambda r: r["by_group"][group]}[command](res)
    assert "NA" in groups and "nan" not in groups and "(none)" not in groups


def test_markup_in_every_text_field_is_escaped_in_the_report(tmp_path, capsys):
    frame = simulate("steps", 20, seed=6)
    frame["difficulty"] = np.where(np.arange(len(frame)) % 2 == 0, "<script>x</script>",
                                   "$\\foo$")
    path = tmp_path / "<b>steps&amp;.csv"
    frame.to_csv(path, index=False)
    code, _, err = run(["steps", "score", path, "--group-col", "difficulty", "--bootstrap", "0",
                        "--out", tmp_path / "run"], capsys)
    assert code == 0, err
    html = (tmp_path / "run" / "report.html").read_text()
    assert "<script>x" not in html and "&lt;script&gt;" in html
    assert "<b>steps" not in html and "&lt;b&gt;steps" in html


def test_agreement_excludes_off_scale_scores_and_bounds_the_confusion(tmp_path, capsys):
    frame = simulate("scores", 3000, seed=7)
    frame["parsed_score"] = frame["parsed_score"].astype(float)
    frame.loc[0, "parsed_score"] = -1          # the "unparseable" marker
    frame.loc[1, "parsed_score"] = 7.5         # off a 1-5 scale
    frame.loc[2, "parsed_score"] = 1e308
    frame.loc[3, "gt_score"] = 0
    path = tmp_path / "judge.csv"
    frame.to_csv(path, index=False)
    code, out, _ = run(["agreement", path, "--pred-col", "parsed_score", "--gt-col", "gt_score",
                        "--bootstrap", "0", "--json"], capsys)
    res = results(out)
    assert code == 0
    assert res["excluded"] == {"pred_score_off_scale": 3, "gt_score_off_scale": 1}
    assert res["confusion"]["labels"] == [1.0, 2.0, 3.0, 4.0, 5.0]
    # non-integer scores everywhere: all off the scale, one line, no 3,000 x 3,000 matrix
    frame["parsed_score"] = np.random.default_rng(0).uniform(1, 5, len(frame))
    frame.to_csv(path, index=False)
    code, _, err = run(["agreement", path, "--pred-col", "parsed_score", "--gt-col",
                        "gt_score", "--bootstrap", "0"], capsys)
    assert code == 2 and "pred_score_off_scale" in err


def test_sets_rows_with_inf_overflow_or_bad_probabilities_are_counted(tmp_path, capsys):
    frame = simulate("mcq", 200, seed=8)
    frame.loc[0, "logit_B"] = np.inf                # once silently deleted the option
    frame.loc[1, "logit_C"] = 5e38                  # overflows the float32 softmax
    frame.loc[2, "logit_D"] = -np.inf               # probability 0: fine
    path = tmp_path / "mcq.csv"
    frame.to_csv(path, index=False)
    code, out, err = run(["sets", "score", path, "--json"], capsys)
    assert code == 0, err
    res = results(out)
    assert res["excluded"] == {"non_finite_option_value": 1,
                               "option_value_overflows_float32": 1}
    probs = simulate("mcq", 100, seed=9)
    letters = [c for c in probs.columns if c.startswith("logit_")]
    p = np.exp(probs[letters].to_numpy())
    probs[letters] = p / p.sum(axis=1, keepdims=True)
    probs.loc[0, "logit_A"] = 1.5                   # a probability above 1
    probs.loc[1, letters] = 0.5                     # each fine, but they sum to 2
    path = tmp_path / "probs.csv"
    probs.to_csv(path, index=False)
    code, out, _ = run(["sets", "score", path, "--input", "probs", "--json"], capsys)
    assert results(out)["excluded"] == {"option_value_out_of_range": 1,
                                        "probs_do_not_sum_to_1": 1}
    code, _, err = run(["sets", "score", path, "--logit-cols", ","], capsys)
    assert code == 2 and "--logit-cols" in err


@pytest.mark.parametrize("kind", ["corrupt", "truncated", "other schema", "directory"])
def test_an_unusable_cache_is_one_line_naming_it(tmp_path, capsys, kind):
    import sqlite3

    path = tmp_path / "cache.sqlite"
    if kind == "corrupt":
        path.write_bytes(b"this is not sqlite" * 100)
    elif kind == "truncated":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
                   "backend TEXT, created REAL)")
        db.commit()
        db.close()
        path.write_bytes(path.read_bytes()[:700])
    elif kind == "other schema":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE responses (a INTEGER)")
        db.commit()
        db.close()
    else:
        path.mkdir()
    code, _, err = run(["cache", "info", "--cache", path], capsys)
    assert code == 2 and str(path) in err and "--no-cache" in err
    code, _, err = run(["sets", "run", "--out", tmp_path / "r", "--cache", path, "--model",
                        "openai:stub", "--base-url", "http://127.0.0.1:9/v1"], capsys)
    assert code == 2 and str(path) in err
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(["cache", "clear", "--cache", path], capsys)
    if kind == "truncated":   # a damaged cache: removed, and only its files
        assert code == 0 and f"removed the damaged cache file {path}" in out
        assert not path.exists()
    else:   # not a confeval cache (a text file, another program's database): left as it was
        assert code == 2 and str(path) in err and "nothing removed" in err
        assert path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [n for n in before
                                                          if kind != "truncated"
                                                          or n != "cache.sqlite"]


def test_credentials_in_a_base_url_never_reach_the_cache_or_run_folder(tmp_path, capsys,
                                                                      monkeypatch):
    """A query string in --base-url goes with every request (not glued before the path), and
    neither it nor the URL's credentials reach the output, the run folder or the cache."""
    from confeval.backends.stub_server import StubServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with StubServer() as server:
        url = server.base_url.replace("http://", "http://alice:hunter2@") + "?api-key=s3cret"
        capsys.readouterr()
        code = main(["sets", "run", "--model", "openai:stub", "--base-url", url, "--n", "5",
                     "--bootstrap", "0", "--cache", str(tmp_path / "c.sqlite"), "--out",
                     str(tmp_path / "r")])
        out, err = capsys.readouterr()
    assert code == 0, err
    assert server.queries and set(server.queries) == {"api-key=s3cret"}
    assert "hunter2" not in out + err and "s3cret" not in out + err
    for f in [*(tmp_path / "r").iterdir(), tmp_path / "c.sqlite"]:
        text = f.read_bytes().decode(errors="ignore")
        assert "hunter2" not in text and "s3cret" not in text, f


def test_steps_parse_skips_and_counts_replies_it_cannot_match(tmp_path, capsys):
    good = '[["s", 1, 0.9, ""], ["s", 0, 0.2, "reasoning"]]'
    rows = [{"item_id": "a", "raw_output": good, "labels": [1, 0],
             "error_types": ["", "reasoning"]},
            {"item_id": "b", "raw_output": good, "labels": [1, 0], "error_types": [""]},
            {"item_id": "c", "raw_output": good, "labels": [1, 0.5]},
            {"item_id": "d", "raw_output": good, "labels": []},
            {"item_id": None, "raw_output": good, "labels": [1, 0]},
            {"item_id": "e", "raw_output": good, "labels": [1, 0], "n_steps": 3}]
    path = tmp_path / "raw.jsonl"
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)
    code, out, _ = run(["steps", "parse", path, "--out", tmp_path / "s.jsonl", "--json"],
                       capsys)
    summary = json.loads(out)
    assert code == 0 and summary["steps"] == 2 and summary["parsed"] == 2
    assert summary["skipped_replies"] == {"error_types_length_mismatch": 1,
                                          "labels_not_0_or_1": 1, "no_steps": 1,
                                          "missing_item_id": 1, "n_steps_mismatch": 1}
    written = pd.read_json(tmp_path / "s.jsonl", lines=True)
    assert set(written["item_id"]) == {"a"}


@pytest.mark.parametrize("content, message", [
    ("{not json", "metrics.json"),
    ("[1, 2]", "metrics.json: expected a JSON object"),
    ('{"title": "a", "sections": [], "title": "b"}', "metrics.json: key 'title' appears twice"),
    ('{"sections": {"a": 1}}', "'sections' must be a list"),
    ('{"sections": [{"results": {}}]}', "text 'kind'"),
])
def test_report_refuses_a_malformed_metrics_file_in_one_line(tmp_path, capsys, content,
                                                             message):
    (tmp_path / "metrics.json").write_text(content)
    code, _, err = run(["report", tmp_path], capsys)
    assert code == 2 and message in err


def test_report_renders_a_section_it_cannot_read_as_such(tmp_path, capsys):
    doc = {"title": "x", "sections": [{"kind": "sets", "title": "odd", "results": {"f": 1}},
                                      {"kind": "confidence", "title": "fine", "results": {}}]}
    (tmp_path / "metrics.json").write_text(json.dumps(doc))
    code, _, err = run(["report", tmp_path], capsys)
    html = (tmp_path / "report.html").read_text()
    assert "could not be rendered" in html and "fine" in html
    # the report is incomplete: said on stderr, one line, and in the exit status
    assert code == 3 and err.startswith("report incomplete: section 'odd': section not "
                                        "rendered (") and err.count("\n") == 1


@pytest.mark.parametrize("content", ["", "[1, 2, 3]\n", '{"calls": 5}\n',
                                     '{"calls": [{"request_key": 1}]}\n'])
def test_replay_of_a_file_of_another_shape_is_one_line(tmp_path, capsys, content):
    (tmp_path / "records.jsonl").write_text(content)
    code, _, err = run(["sets", "run", "--model", f"replay:{tmp_path}", "--n", "3",
                        "--no-cache", "--out", tmp_path / "r"], capsys)
    assert code == 2 and "replay" in err and "no recorded calls" in err


def test_scoring_out_never_overwrites_another_commands_folder(tmp_path, capsys):
    path = conf_file(tmp_path)
    live = tmp_path / "live"
    live.mkdir()
    (live / "run.json").write_text(json.dumps({"config": {"command": "run"}}))
    (live / "records.jsonl").write_text("{}\n")
    code, _, err = run([*_argv("score", path), "--out", live], capsys)
    assert code == 2 and "confeval run" in err and "--force" in err
    assert (live / "records.jsonl").read_text() == "{}\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, _, err = run([*_argv("score", path), "--out", other], capsys)
    assert code == 2 and "holds files confeval did not write (notes.txt)" in err
    mine = tmp_path / "mine"
    for _ in range(2):  # the same command's folder is rewritten
        code, _, _ = run([*_argv("score", path), "--out", mine], capsys)
        assert code == 0
    code, _, _ = run([*_argv("sets", conf_file(tmp_path, simulate("mcq", 40, seed=1))),
                      "--out", mine, "--force"], capsys)
    assert code == 0


def test_ece_bins_are_bounded_by_the_rows(tmp_path, capsys):
    path = conf_file(tmp_path, simulate("confidence", 200, seed=9))
    code, out, err = run([*_argv("score", path), "--n-bins", "10000000"], capsys)
    assert code == 0 and "10000000 ECE bins for 200 rows; using 200" in err
    assert err.startswith("warning: ") and err.count("\n") == 1
    assert results(out)["n_bins"] == 200


def test_steps_rows_without_an_item_or_with_a_huge_step_are_counted(tmp_path, capsys):
    frame = simulate("steps", 20, seed=11)
    frame["item_id"] = frame["item_id"].astype(object)
    frame.loc[frame.index[0], "item_id"] = None
    frame["step"] = frame["step"].astype(float)
    frame.loc[frame.index[1], "step"] = 1e300
    frame["p_correct"] = frame["p_correct"].astype(object)
    half = frame.index[: len(frame) // 2]
    path = tmp_path / "steps.csv"
    frame.to_csv(path, index=False)
    code, out, _ = run(["steps", "score", path, "--bootstrap", "50", "--json"], capsys)
    res = results(out)
    assert code == 0 and res["excluded"] == {"missing_item_id": 1, "step_out_of_range": 1}
    # steps consistency reports what it read, even when half a file is not numeric
    frame.loc[half, "p_correct"] = "high"
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    specs = []
    for j in range(3):
        other = tmp_path / f"j{j}.csv"
        simulate("steps", 20, seed=20 + j).to_csv(other, index=False)
        specs += ["--pair", f"j{j}={bad},{other}"]
    code, out, _ = run(["steps", "consistency", *specs, "--json"], capsys)
    counts = json.loads(out)["inputs"]["j0"]["A"]
    assert code == 0 and counts["excluded"]["non_numeric_p_correct"] > 0
    assert counts["n_used"] + sum(counts["excluded"].values()) == counts["n_read"]


def test_join_misses_and_conflicting_keys_are_reported(tmp_path, capsys):
    frame = simulate("scores", 80, seed=12)
    frame["sid"] = np.arange(80)
    path = tmp_path / "j.csv"
    frame.to_csv(path, index=False)
    side = pd.DataFrame({"sid": [*range(70), 5], "task": ["a"] * 70 + ["b"]})
    side_path = tmp_path / "side.csv"
    side.to_csv(side_path, index=False)
    code, out, _ = run(["intervals", "score", path, "--logprob-cols", "score_lp*", "--join",
                        f"{side_path}:sid", "--group-col", "task", "--methods", "naive",
                        "--base", "linear", "--seeds", "1", "--json"], capsys)
    res = results(out)
    assert code == 0 and res["excluded"] == {"missing_group": 10}
    assert res["notes"] == {f"join {side_path}:sid": {"rows_without_match": 10,
                                                      "conflicting_duplicate_keys": 1}}


def _foreign(folder):
    folder.mkdir()
    (folder / "thesis.tex").write_text("\\documentclass{article}")
    (folder / "records.jsonl").write_text('{"item_id": "q1"}\n')  # someone else's
    return folder


def test_demo_and_live_runs_refuse_a_folder_they_did_not_write(tmp_path, capsys):
    folder = _foreign(tmp_path / "mine")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for argv in (["demo", "--no-live", "--n", "60", "--out", folder],
                 # refused before the model is loaded: a missing model folder is not reached
                 ["sets", "run", "--model", "hf:/nonexistent/model", "--out", folder],
                 ["measures", "run", "--model", "hf:/nonexistent/model", "--out", folder]):
        code, _, err = run(argv, capsys)
        assert code == 2 and "holds files confeval did not write" in err, err
        assert "thesis.tex" in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_the_demo_reruns_into_its_own_folder_and_force_overrides(tmp_path, capsys):
    out = tmp_path / "demo"
    assert run(["demo", "--no-live", "--n", "60", "--bootstrap", "0", "--out", out],
               capsys)[0] == 0
    assert run(["demo", "--no-live", "--n", "60", "--bootstrap", "0", "--out", out],
               capsys)[0] == 0
    code, _, err = run(["sets", "score", out / "metrics.json", "--out", out], capsys)
    assert code == 2 and f"holds {out / 'metrics.json'}, read by this command" in err
    other = tmp_path / "elsewhere.json"
    other.write_bytes((out / "metrics.json").read_bytes())
    code, _, err = run(["sets", "score", other, "--out", out], capsys)
    assert code == 2 and "holds the results of `confeval demo`" in err


def test_a_bootstrap_of_a_hundred_million_is_refused_at_once(tmp_path, capsys):
    # "at once" shown without a clock: the input file does not exist, so a refusal that
    # names --bootstrap and not the file came before the input was even opened, let alone
    # resampled
    missing = tmp_path / "x.csv"
    code, _, err = run(["measures", "score", missing, "--measure-cols", "a",
                        "--correct-col", "b", "--bootstrap", "100000000"], capsys)
    assert code == 2 and "--bootstrap" in err and "100,000" in err.replace("100000", "100,000")
    assert err.count("\n") == 1 and "x.csv" not in err and not missing.exists()


def test_a_line_nested_a_hundred_thousand_deep_is_one_counted_line(tmp_path, capsys):
    path = tmp_path / "conf.jsonl"
    good = [json.dumps({"confidence": c, "correct": int(c > 0.5)}) for c in (0.2, 0.7, 0.9)]
    path.write_text("\n".join([good[0], "[" * 100_000 + "]" * 100_000, *good[1:]]) + "\n")
    code, out, err = run(["score", path, "-c", "confidence", "-y", "correct", "--bootstrap",
                          "0", "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)["results"][str(path)]
    assert res["n_used"] == 3 and res["excluded"] == {"unparseable_line": 1}


@pytest.mark.parametrize("line", ["garbage{", '{"no_item_id": 1}', "[" * 50_000,
                                  '{"item_id": "x", "item_id": "y"}'])
def test_a_foreign_line_in_a_run_folders_records_is_named_with_its_file_and_line(
        tmp_path, capsys, monkeypatch, line):
    from confeval.backends.stub_server import StubServer

    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "cache.sqlite"))
    run_dir = tmp_path / "r"
    with StubServer() as server:
        argv = ["sets", "run", "--model", "openai:stub", "--base-url", server.base_url,
                "--n", "4", "--bootstrap", "0", "--out", run_dir]
        assert run(argv, capsys)[0] == 0
        with open(run_dir / "records.jsonl", "a") as fh:
            fh.write(line + "\n")
        code, _, err = run(argv, capsys)
    assert code == 2 and "records.jsonl, line 5: not a record this run wrote" in err


@pytest.mark.parametrize("argv, message", [
    (["sets", "run", "--model", "hf:/nonexistent/model"], "hf: no such folder: /nonexistent"),
    (["measures", "run", "--similarity", "jaccard", "--nli", "/nonexistent"],
     "no such folder: /nonexistent"),
])
def test_a_model_path_that_is_not_there_is_said_to_be_missing(tmp_path, capsys, argv,
                                                             message):
    pytest.importorskip("torch", reason="the in-process backends need the 'local' extra")
    code, _, err = run([*argv, "--out", tmp_path / "r"], capsys)
    assert code == 2 and message in err and "repo" not in err.lower()

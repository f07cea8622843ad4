"""The command line on files scored under several lm-eval filters or Inspect scorers (issue #38
item 1) and on an Inspect multiple-choice log whose confidences are about imputed letters
(issue #37 item 7): each filter or scorer is a result of its own, named on the terminal, in
--json and in run.json (and repeated by rerun); the other commands refuse the choice in one
line; the reader's warnings name the file. Values are the tools' own (lm-eval's results file,
Inspect's log results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from confeval.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"
FILTERS = next((FIXTURES / "lm_eval_filters").glob("samples_*.jsonl"))
REPORTED = json.loads(next((FIXTURES / "lm_eval_filters").glob("results_*.json"))
                      .read_text())["results"]["confeval_arith_filters"]
SCORERS = FIXTURES / "inspect" / "arith_scorers.eval"
TWO = FIXTURES / "inspect" / "arith_mc_two_scorers.eval"
MC = FIXTURES / "inspect" / "arith_mc.eval"


def test_score_gives_one_result_per_filter_with_lm_evals_numbers(capsys, tmp_path):
    out = tmp_path / "run"
    assert main(["score", str(FILTERS), "--bootstrap", "0", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for name in ("strict-match", "flexible-extract", "raw"):
        want = REPORTED[f"exact_match,{name}"]
        assert f"{name}: confidence task_confidence (the confidence the task logged: " \
               f"verbal_confidence); the tool's own accuracy {want:.4f} over 20 samples" \
            in " ".join(printed.split())
    config = json.loads((out / "run.json").read_text())["config"]
    assert [e["options"]["filter_name"] for e in config["inputs"]] == \
        ["strict-match", "flexible-extract", "raw"]
    assert [e["read"] for e in config["inputs"]] == \
        [{"filter": n} for n in ("strict-match", "flexible-extract", "raw")]
    assert main(["rerun", str(out)]) == 0
    assert "differ" not in capsys.readouterr().out


def test_run_json_names_the_only_scorer_too(capsys, tmp_path):
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed")
    one = tmp_path / "one"
    assert main(["score", str(MC), "--bootstrap", "0", "--out", str(one)]) == 0
    (entry,) = json.loads((one / "run.json").read_text())["config"]["inputs"]
    assert entry["read"] == {"scorer": "choice"} and entry["options"]["scorer"] is None


def test_score_json_names_each_scorer_and_the_one_not_scored(capsys):
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed")
    from inspect_ai.log import read_eval_log

    reported = {s.name: next(iter(s.metrics.values())).value
                for s in read_eval_log(str(SCORERS)).results.scores}
    assert main(["score", str(SCORERS), "--bootstrap", "0", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    got = {r["notes"]["scorer"]: r["tool_accuracy"]["value"]
           for r in document["results"].values()}
    assert got == pytest.approx({k: v for k, v in reported.items()
                                 if k != "model_graded_qa"}, abs=1e-12)
    assert document["not_scored"] == {f"{SCORERS} (scorer model_graded_qa)":
                                      "no usable record: all 20 were excluded "
                                      "(inspect_unscored 20)"}
    assert main(["score", str(SCORERS), "--bootstrap", "0"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {SCORERS} (scorer model_graded_qa): not scored: no usable record" in err


def test_the_other_commands_refuse_a_choice_not_made_in_one_line(capsys, tmp_path):
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed")
    copy = tmp_path / "b.eval"
    copy.write_bytes(TWO.read_bytes())
    for argv in (["compare", str(TWO), str(copy), "--bootstrap", "10"],
                 ["guarantee", str(TWO), "--target", "0.5"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == f"error: {TWO}: 2 scorers, each scored on its own (includes, choice): " \
                      "name one with --scorer NAME\n"
    assert main(["score", str(TWO), "--scorer", "nope"]) == 2
    assert capsys.readouterr().err == f"error: {TWO}: no scorer 'nope' (--scorer; its " \
                                      "scorers: includes, choice)\n"
    assert main(["compare", str(TWO), str(copy), "--scorer", "includes", "--bootstrap", "20",
                 "--json"]) == 0


def test_import_keeps_every_filter_as_a_column(capsys, tmp_path):
    out = tmp_path / "rows.jsonl"
    assert main(["import", str(FILTERS), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    lines = [json.loads(line) for line in FILTERS.read_text().splitlines()]
    assert [r["filter"] for r in rows] == [line["filter"] for line in lines]
    assert main(["import", str(FILTERS), "--filter", "raw", "--out", str(out),
                 "--force"]) == 0
    assert {json.loads(line)["filter"] for line in out.read_text().splitlines()} == {"raw"}


def test_imputed_letters_and_gold_confidences_are_said_naming_the_file(capsys):
    """#37 item 7: on the terminal, not only in --json, each warning names the file."""
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed")
    from inspect_ai.log import read_eval_log

    from tests.ingest.test_variants import top_letters

    log = read_eval_log(str(MC))
    on_gold = sum(t == s.target for t, s in zip(top_letters(log), log.samples))
    assert all(s.scores["choice"].answer == "" for s in log.samples) and on_gold > 0
    assert main(["score", str(MC), "--bootstrap", "0"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {MC}: 40 of 40 confidences are about an imputed letter: the scorer " \
           "named no letter, so the most likely option letter stands for the answer\n" in err
    assert f"warning: {MC}: {on_gold} of 40 rows have a confidence about the gold letter " \
           "while the scorer says wrong (it read another answer, or none)\n" in err


def test_a_task_logging_no_confidence_under_any_filter_is_one_line(capsys, tmp_path):
    """The file of issue #38: three filters, exact_match only. No confidence: one line naming
    the flag; with -c, each filter on its own, lm-eval's own numbers (0.3, 0.4, 0.4 here)."""
    lines = [json.loads(line) for line in FILTERS.read_text().splitlines()]
    path = tmp_path / "samples_t_2026-01-01T00-00-00.jsonl"
    with path.open("w") as f:
        for line in lines:
            line = {k: v for k, v in line.items() if k != "verbal_confidence"}
            line["metrics"] = ["exact_match"]
            line["resps"] = [[line["resps"][0][0].split(",")[0]]]
            line["filtered_resps"] = [line["filtered_resps"][0].split(",")[0]]
            f.write(json.dumps(line) + "\n")
    assert main(["score", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {path}: its records have no 'confidence' column: name the column "
                   "holding one with -c/--confidence-col (numeric columns: exact_match, "
                   "correct) (so under each of its 3 filters: strict-match, "
                   "flexible-extract, raw)\n")
    assert main(["score", str(path), "-c", "exact_match", "--bootstrap", "0", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r["accuracy"] for r in results.values()] == pytest.approx(
        [REPORTED[f"exact_match,{n}"] for n in ("strict-match", "flexible-extract", "raw")],
        abs=1e-12)

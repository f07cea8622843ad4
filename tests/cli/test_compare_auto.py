"""``confeval compare --suite auto``: live run folders of several suites grouped by suite and by
the run's model, each suite compared as ``--suite <suite>``, one trust card per model."""

import json
import zlib

import pytest

from confeval.backends import ScriptedBackend
from confeval.cli import main
from confeval.verbs.run import run_live


def _noise(*texts: str) -> float:
    """A fixed number in [0, 1) for the texts: crc32, never hash(), which Python salts per
    process (the runs then differed from one test session to the next, and about one in 15
    drew an ECE below its bootstrap interval, which once cost the report its section)."""
    return zlib.crc32("\0".join(texts).encode()) % 97 / 97


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for model, sharp in (("A", 4.0), ("B", 0.5)):
        def scorer(messages, letter, sharp=sharp):
            right = f"{letter})" in messages[-1]["content"][-3:]   # deterministic, any rule
            return -sharp * (_noise(messages[-1]["content"], letter) + right)

        run_live("sets", {"bootstrap": 0}, root / f"sets-{model}",
                 backend=ScriptedBackend(scorer=scorer), n=40, model=model)

        def reply(messages, params, i, model=model):
            return "The error type is B" if model == "A" else "A"

        run_live("diagnose", {"bootstrap": 0, "n_simulations": 0}, root / f"diag-{model}",
                 backend=ScriptedBackend(reply=reply), n=30, model=model)
    run_live("sets", {"bootstrap": 0}, root / "sets-C",
             backend=ScriptedBackend(scorer=lambda m, letter: -1.0), n=40, model="C")
    return root


def test_suites_are_compared_by_model_with_trust_cards(runs, capsys):
    folders = [runs / "sets-A", runs / "sets-B", runs / "diag-A", runs / "diag-B"]
    assert main(["compare", *map(str, folders), "--suite", "auto", "--bootstrap", "100",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["suite"] == "auto" and set(doc["suites"]) == {"sets", "diagnose"}
    assert doc["n_items_shared"]["sets"] == 40
    assert sorted(doc["models"]) == ["A", "B"]
    # each suite's comparison is the one --suite <suite> gives on the same folders
    for suite, pair in (("sets", folders[:2]), ("diagnose", folders[2:])):
        assert main(["compare", *map(str, pair), "--name", f"A={pair[0]}", "--name",
                     f"B={pair[1]}", "--suite", suite, "--id-col", "item_id", "--bootstrap",
                     "100", "--json"]) == 0
        alone = json.loads(capsys.readouterr().out)["compare"]
        assert alone["metrics"] == doc["suites"][suite]["metrics"]
        assert alone["n_items_shared"] == doc["n_items_shared"][suite]
        for metric, table in alone["metrics"].items():
            assert doc["metrics"][f"{suite}.{metric}"] == table
    cards = doc["cards"]
    assert set(cards) == {"A", "B"}
    for model, card in cards.items():
        assert card["calibration"]["metric"] == "ece" and card["calibration"]["suite"] == "sets"
        assert card["diagnosis"]["suite"] == "diagnose" and card["diagnosis"]["of"] == 2
        table = doc["suites"]["sets"]["metrics"]["lac_coverage"]["models"][model]
        assert card["coverage"]["value"] == table["value"]
        assert card["coverage"]["rank"] == table["rank"]


def test_a_suite_with_one_model_is_skipped_and_files_are_refused(runs, tmp_path, capsys):
    folders = [runs / "sets-A", runs / "sets-B", runs / "sets-C", runs / "diag-A"]
    assert main(["compare", *map(str, folders), "--suite", "auto", "--bootstrap", "50",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert list(doc["suites"]) == ["sets"] and doc["skipped"] == {"diagnose": ["A"]}
    assert set(doc["cards"]) == {"A", "B", "C"}
    record_file = tmp_path / "x.csv"
    record_file.write_text("item_id,p\n1,0.5\n")
    for argv, message in [
        ([str(runs / "sets-A"), str(record_file)], "--suite auto reads run folders"),
        ([str(runs / "sets-A"), str(runs / "diag-A")], "no suite has runs of two models"),
    ]:
        assert main(["compare", *argv, "--suite", "auto"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_auto_report_shows_the_cards_and_each_suite(runs, tmp_path, capsys):
    folders = [runs / "sets-A", runs / "sets-B", runs / "diag-A", runs / "diag-B"]
    out = tmp_path / "cmp"
    assert main(["compare", *map(str, folders), "--suite", "auto", "--bootstrap", "50",
                 "--scores", "lac", "--out", str(out), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("| model | sets.accuracy ↑ |")
    page = (out / "report.html").read_text()
    assert "Trust cards" in page and page.count("<div class='card'>") == 2
    assert "sets suite" in page and "diagnose suite" in page
    assert "forest plot of lac_coverage" in page and "forest plot of accuracy_strict" in page


def test_runs_of_another_suite_and_no_shared_item_are_one_line_errors(runs, tmp_path, capsys):
    import pandas as pd

    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"id": ["x", "y", "z"], "p": [0.1, 0.5, 0.9], "y": [0, 1, 1]}).to_csv(
        a, index=False)
    pd.DataFrame({"id": ["u", "v", "w"], "p": [0.1, 0.5, 0.9], "y": [0, 1, 1]}).to_csv(
        b, index=False)
    for argv, message in [
        ([str(runs / "sets-A"), str(runs / "diag-B"), "--suite", "sets"],
         "diag-B is a run of the diagnose suite, not sets"),
        ([str(runs / "sets-A"), str(runs / "sets-B"), "--suite", "diagnose"],
         "sets-A is a run of the sets suite, not diagnose"),
        ([str(a), str(b), "--id-col", "id", "-c", "p", "-y", "y"],
         "no item id is shared by every model"),
    ]:
        assert main(["compare", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_run_folders_are_named_by_their_model(runs, capsys):
    assert main(["compare", str(runs / "sets-A"), str(runs / "sets-B"), "--suite", "sets",
                 "--id-col", "item_id", "--bootstrap", "20", "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["compare"]["models"]) == ["A", "B"]
    assert main(["compare", str(runs / "sets-A"), str(runs / "sets-A"), "--suite", "sets",
                 "--id-col", "item_id"]) == 2
    assert "two inputs are named 'A'" in capsys.readouterr().err

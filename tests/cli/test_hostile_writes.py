"""Writes never escape a folder (issue #36, fourth round): every command that writes a run
folder refuses a symbolic link in it (naming the link, the link's target untouched), writes
the folder whole (no file of an earlier run of another shape left beside the new ones), and
prints nothing on stdout before the folder is written."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main


def _judge(path, seed=0, n=300):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.3, 1.0, n).round(3)
    pd.DataFrame({"id": np.arange(n), "p": p, "y": (rng.uniform(size=n) < p).astype(int)}
                 ).to_csv(path, index=False)
    return path


@pytest.fixture()
def outside(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("do not overwrite\n")
    return target


def _refused(argv, capsys, link) -> str:
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""   # nothing printed as if it had worked
    assert str(link) in captured.err and captured.err.count("\n") == 1, captured.err
    return captured.err


@pytest.mark.parametrize("name", ["report.html", "metrics.json", "metrics.json.tmp",
                                  "compare.csv", "policy.json"])
def test_a_link_in_an_out_folder_is_refused_and_its_target_untouched(tmp_path, capsys,
                                                                      outside, name):
    a, b = _judge(tmp_path / "a.csv", 0), _judge(tmp_path / "b.csv", 1)
    for command, argv in (("score", ["score", a, "-c", "p", "-y", "y", "--bootstrap", "0"]),
                          ("compare", ["compare", a, b, "--id-col", "id", "-c", "p", "-y",
                                       "y", "--bootstrap", "20"]),
                          ("guarantee", ["guarantee", a, "-c", "p", "-y", "y", "--target",
                                         "0.3"])):
        out = tmp_path / f"out-{command}"
        assert main([str(x) for x in [*argv, "--out", out]]) == 0
        link = out / name
        link.unlink(missing_ok=True)
        os.symlink(outside, link)
        _refused([*argv, "--json", "--out", out], capsys, link)
        assert outside.read_text() == "do not overwrite\n"
    # `confeval report` into its folder: the same
    _refused(["report", tmp_path / "out-score"], capsys, tmp_path / "out-score" / name)
    assert outside.read_text() == "do not overwrite\n"


def test_a_dangling_link_as_out_is_refused_before_anything_is_printed(tmp_path, capsys):
    a = _judge(tmp_path / "a.csv")
    link = tmp_path / "gone"
    os.symlink(tmp_path / "nowhere", link)
    _refused(["score", a, "-c", "p", "-y", "y", "--bootstrap", "0", "--json", "--out", link],
             capsys, link)
    assert not (tmp_path / "nowhere").exists()


def test_a_folder_rewritten_holds_only_the_new_runs_files(tmp_path, capsys):
    a, b = _judge(tmp_path / "a.csv", 0), _judge(tmp_path / "b.csv", 1)
    out = tmp_path / "g"
    args = ["-c", "p", "-y", "y", "--target", "0.3", "--out", out]
    assert main([str(x) for x in ["guarantee", a, b, *args]]) == 0
    assert {"policy-1.json", "policy-2.json"} <= set(os.listdir(out))
    assert main([str(x) for x in ["guarantee", a, *args]]) == 0
    assert sorted(os.listdir(out)) == ["metrics.json", "policy.json", "report.html",
                                       "run.json"]
    assert json.loads((out / "run.json").read_text())["config"]["inputs"][0]["path"] == str(a)


def test_out_below_a_file_prints_no_success(tmp_path, capsys):
    a = _judge(tmp_path / "a.csv")
    capsys.readouterr()
    assert main([str(x) for x in ["compare", a, a, "--name", f"x={a}", "--id-col", "id",
                                  "-c", "p", "-y", "y", "--json", "--out",
                                  a / "sub"]]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ")


# ---------------------------------------------------- what a command reads is never overwritten
def _bytes(*paths):
    return {str(p): p.read_bytes() for p in paths}


def test_an_out_folder_holding_an_input_is_refused_even_with_force(tmp_path, capsys):
    """Writing a run folder replaces it whole: a policy applied from the folder that
    `guarantee apply --report` names, or records scored into their own folder, would go with
    it (the fifth hostile round: `--report DIR --force` deleted the policy it applied)."""
    cal = _judge(tmp_path / "cal.csv")
    assert main([str(a) for a in ["guarantee", cal, "-c", "p", "-y", "y", "--target", "0.3",
                                  "--out", tmp_path / "g"]]) == 0
    policy = tmp_path / "g" / "policy.json"
    records = tmp_path / "data" / "new.csv"
    records.parent.mkdir()
    _judge(records, 1)
    before = _bytes(policy, records)
    for force in ([], ["--force"]):
        err = _refused(["guarantee", "apply", policy, records, "--report", tmp_path / "g",
                        *force], capsys, policy)
        assert err.startswith(f"error: --report {tmp_path / 'g'} holds {policy}, read by this "
                              "command")
        _refused(["score", records, "-c", "p", "-y", "y", "--bootstrap", "0", "--out",
                  records.parent, *force], capsys, records)
        _refused(["compare", cal, records, "--id-col", "id", "-c", "p", "-y", "y", "--out",
                  records.parent, *force], capsys, records)
    assert _bytes(policy, records) == before


@pytest.mark.parametrize("command", ["import", "guarantee apply"])
def test_an_out_file_that_is_an_input_is_refused_even_with_force(tmp_path, capsys, command):
    records = _judge(tmp_path / "new.csv", 2)
    if command == "import":
        argv = ["import", records, "--out", records, "--force"]
    else:
        cal = _judge(tmp_path / "cal.csv")
        assert main([str(a) for a in ["guarantee", cal, "-c", "p", "-y", "y", "--target",
                                      "0.3", "--out", tmp_path / "g"]]) == 0
        argv = ["guarantee", "apply", tmp_path / "g" / "policy.json", records, "--out",
                records, "--force"]
    before = _bytes(records)
    err = _refused(argv, capsys, records)
    assert "is a file this command reads" in err
    assert _bytes(records) == before


def test_simulate_and_report_overwrite_a_file_only_with_force(tmp_path, capsys):
    mine = tmp_path / "mine.csv"
    mine.write_text("id,precious\n1,2\n")
    _refused(["simulate", "confidence", "--n", "5", "--out", mine], capsys, mine)
    assert mine.read_text() == "id,precious\n1,2\n"
    assert main(["simulate", "confidence", "--n", "5", "--out", str(mine), "--force"]) == 0
    assert len(pd.read_csv(mine)) == 5
    run = tmp_path / "run"
    assert main([str(a) for a in ["score", mine, "-c", "confidence", "-y", "correct",
                                  "--bootstrap", "0", "--out", run]]) == 0
    keep = tmp_path / "keep.html"
    keep.write_text("keep")
    _refused(["report", run, "--out", keep], capsys, keep)
    assert keep.read_text() == "keep"
    assert main(["report", str(run), "--out", str(keep), "--force"]) == 0
    assert keep.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("name", ["metrics.json", "run.json", "notes.html"])
def test_report_never_writes_into_its_run_folder_but_its_own_report(tmp_path, capsys, name):
    """`report --out RUN/metrics.json` replaced the run's metrics with the HTML (then the run
    could not be reported at all); --out RUN/report.html is the run's own report."""
    run = tmp_path / "run"
    assert main([str(a) for a in ["score", _judge(tmp_path / "a.csv"), "-c", "p", "-y", "y",
                                  "--bootstrap", "0", "--out", run]]) == 0
    files = sorted(run.iterdir())
    before = _bytes(*files)
    for force in ([], ["--force"]):
        err = _refused(["report", run, "--out", run / name, *force], capsys, run / name)
        assert f"is inside the run folder {run}" in err
    assert sorted(run.iterdir()) == files and _bytes(*files) == before
    (run / "report.html").unlink()
    assert main(["report", str(run), "--out", str(run / "report.html")]) == 0
    assert (run / "report.html").read_text().startswith("<!DOCTYPE html>")

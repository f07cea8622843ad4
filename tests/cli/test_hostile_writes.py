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

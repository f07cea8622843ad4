"""Numeric options whose size sets the work or the memory are bounded (the fifth hostile
round: --rce-bins 10^8 on 300 rows took 8.8 GB, --batch 10^6 ran past a minute at 4.9 GB):
a value past the bound is one line naming the option, or, where more is the same estimator
(RCE's bins beyond the rows), computed at the bound."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from confeval.cli import main


def _judge(path, n=120, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.3, 1.0, n).round(4)
    pd.DataFrame({"p": p, "y": (rng.uniform(size=n) < p).astype(int)}).to_csv(path,
                                                                             index=False)
    return path


def _one_line_error(argv, capsys, *words):
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(w in err for w in words), err


def test_rce_bins_beyond_the_rows_are_one_bin_a_row(tmp_path, capsys):
    path = _judge(tmp_path / "j.csv")
    found = []
    for bins in (120, 10**9):
        capsys.readouterr()
        assert main(["score", str(path), "-c", "p", "-y", "y", "--bootstrap", "0",
                     "--rce-bins", str(bins), "--json"]) == 0
        found.append(json.loads(capsys.readouterr().out)["results"][str(path)]["rce"])
    assert found[0] == found[1]


def test_a_batch_past_the_bound_is_named(tmp_path, capsys):
    path = _judge(tmp_path / "j.csv")
    _one_line_error(["guarantee", path, "-c", "p", "-y", "y", "--target", "0.3", "--batch",
                     "10001"], capsys, "--batch 10001", "at most 10,000")


def test_histogram_bins_past_the_bound_are_named(tmp_path, capsys):
    q = np.repeat(np.arange(30), 4)
    frame = pd.DataFrame({"question_id": q, "correct": (np.arange(120) % 4 == 0).astype(int),
                          "sl": np.random.default_rng(1).normal(size=120)})
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    _one_line_error(["measures", "score", path, "--measure-cols", "sl", "--hb-bins",
                     "100001"], capsys, "--hb-bins")


def test_a_negative_seed_is_named(tmp_path, capsys):
    """numpy refuses a negative seed with "expected non-negative integer", naming no option:
    every option whose name ends in "seed" is at least 0, checked where options are built."""
    path = _judge(tmp_path / "j.csv")
    _one_line_error(["score", path, "-c", "p", "-y", "y", "--seed", "-1"], capsys,
                    "--seed must be at least 0, got -1")
    _one_line_error(["guarantee", path, "-c", "p", "-y", "y", "--target", "0.3",
                     "--split-seed", "-2"], capsys, "--split-seed must be at least 0")
    _one_line_error(["simulate", "confidence", "--out", tmp_path / "s.csv", "--seed", "-1"],
                    capsys, "--seed")

"""``confeval compare`` on hostile inputs (#36): too few items for any test, a model name of
5,000 characters, names holding ``=``, twelve calibrated models whose ECE lies below its
bootstrap interval, and the note of the items a model lacks."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main

from .test_compare import _write

ARGS = ["--id-col", "id", "-c", "p", "-y", "y"]


def _right_and_wrong(tmp_path, n):
    """Two models on n items: one right on every item, one wrong on every item, both at
    confidence 0.9 (the issue's two-item comparison that printed p = 0 and two groups)."""
    paths = []
    for name, correct in (("right", 1), ("wrong", 0)):
        path = tmp_path / f"{name}.csv"
        pd.DataFrame({"id": range(n), "p": 0.9, "y": correct}).to_csv(path, index=False)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("n, why", [(2, "too_few_resamples"), (4, "no_variance")])
def test_too_few_items_report_no_p_value_and_separate_nothing(tmp_path, capsys, n, why):
    paths = _right_and_wrong(tmp_path, n)
    assert main(["compare", *paths, *ARGS, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    for metric in ("auarc", "ece", "brier"):
        (pair,) = doc["metrics"][metric]["pairs"]
        assert pair["p"] is None and pair["p_holm"] is None and pair["untested"] == why
        assert {r["group"] for r in doc["metrics"][metric]["models"].values()} == {"a"}
    (accuracy,) = doc["metrics"]["accuracy"]["pairs"]
    assert accuracy["test"] == "mcnemar_exact" and accuracy["p"] == 2 / 2**n   # exact
    assert not any(p["p"] == 0 for t in doc["metrics"].values() for p in t["pairs"])
    reason = ("the bootstrap has fewer than 20 distinct resamples (2 items allow 3)"
              if n == 2 else "the difference is the same in every resample")
    warned = [w for w in doc["warnings"] if reason in w]
    assert [w.split(":")[0] for w in warned] == ["auarc", "ece", "brier"]
    assert all(": right – wrong; they separate no models" in w for w in warned)
    # the table says it once, after the tables
    assert main(["compare", *paths, *ARGS]) == 0
    text = capsys.readouterr().out
    assert text.count(f"warning: ece: 1 of 1 pairs have no p-value: {reason}") == 1
    assert text.index("warning: auarc") > text.index("brier (lower is better)")


def test_the_items_a_model_lacks_are_said_once(tmp_path, capsys):
    paths = _write(tmp_path)   # judge2 lacks five items
    assert main(["compare", *map(str, paths), *ARGS, "--bootstrap", "50"]) == 0
    text = capsys.readouterr().out
    assert text.count("judge2 lacks 5 items the others have (compared on the 145 every "
                      "model has)") == 1
    assert "not shared" not in text and "judge0 lacks" not in text


def test_a_name_may_hold_equals_signs(tmp_path, capsys):
    paths = _write(tmp_path)
    odd = tmp_path / "k=v.csv"   # a path holding '=' too
    odd.write_bytes(paths[1].read_bytes())
    argv = ["compare", str(paths[0]), str(odd), *ARGS, "--bootstrap", "20", "--json"]
    assert main([*argv, "--name", f"a=b={paths[0]}", "--name", f"n={odd}"]) == 0
    assert set(json.loads(capsys.readouterr().out)["compare"]["models"]) == {"a=b", "n"}
    # 'v.csv' is no input: the split falls back to the '=' before 'k=v.csv'
    assert main([*argv, "--name", f"x=y={odd}"]) == 0
    assert set(json.loads(capsys.readouterr().out)["compare"]["models"]) == {"x=y", "judge0"}
    for name, message in [
        (f"a={tmp_path / 'other.csv'}", "no '=' in it is followed by an input given (the "
                                        "inputs: "),
        ("plain", "--name 'plain': expected NAME=INPUT"),
        (f"={paths[0]}", "the name before '=' is empty"),
    ]:
        assert main([*argv, "--name", name]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert main([*argv, "--name", f"a={paths[0]}", "--name", f"b={paths[0]}"]) == 2
    assert f"--name names {paths[0]} 2 times ('a', 'b'); it is given 1 time" in \
        capsys.readouterr().err


def test_a_name_of_5000_characters_renders_a_bounded_report(tmp_path, capsys, monkeypatch):
    """The report of one 5,000-character name took 523 s and 6.9 GB and weighed 48.7 MB (the
    name on every axis). Shortened in figures and tables (whole in the tooltips), the report
    weighs at most the short-named report plus 10 copies of the name, with the same figures;
    the JSON, metrics.json and compare.csv keep the name whole."""
    paths = _write(tmp_path)
    long_name = "m" * 4_990 + "-7b-chat"
    args = [*map(str, paths), *ARGS, "--bootstrap", "100"]
    assert main(["compare", *args, "--out", str(tmp_path / "short")]) == 0
    capsys.readouterr()
    assert main(["compare", *args, "--name", f"{long_name}={paths[0]}", "--out",
                 str(tmp_path / "long"), "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err   # no layout the figures could not fit
    doc = json.loads(captured.out)["compare"]
    assert long_name in doc["models"] and long_name in doc["metrics"]["ece"]["models"]
    short = (tmp_path / "short" / "report.html").read_text()
    page = (tmp_path / "long" / "report.html").read_text()
    assert len(page.encode()) <= len(short.encode()) + 10 * len(long_name)
    assert len(page.encode()) < 400_000
    assert page.count("<img src='data:image/png") == short.count("<img src='data:image/png") \
        == 10
    assert "not drawn" not in page and "could not" not in page
    shown = "m" * 26 + "…" + "m" * 5 + "-7b-chat"
    assert len(shown) == 40 and f"title='{long_name}'>{shown}</th>" in page
    section = json.loads((tmp_path / "long" / "metrics.json").read_text())["sections"][0]
    assert long_name in section["results"]["models"]
    assert long_name in pd.read_csv(tmp_path / "long" / "compare.csv")["model"].tolist()
    # the terminal: shortened too (on 80 columns the 40 characters wrap, never more)
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["compare", *args, "--name", f"{long_name}={paths[0]}"]) == 0
    text = capsys.readouterr().out
    # once in each of the five tables, and in the verdicts that name it
    from confeval.report.verdicts import section_verdicts

    said = sum(v.count(shown) for v in section_verdicts({"kind": "compare",
                                                         "results": doc}).values())
    assert long_name[:100] not in text and text.count(shown) == 5 + said
    assert len(text) < 6_000


def test_twelve_calibrated_models_with_an_ece_below_its_interval_draw_their_forest_plot(
        tmp_path, capsys):
    """#36: twelve calibrated models once lost the whole section ("xerr must not contain
    negative values"): binned ECE is biased upward on resamples, so a calibrated model's ECE
    can lie below its whole bootstrap interval. The forest plot is drawn all the same."""
    rng = np.random.default_rng(12)
    paths = []
    for k in range(12):
        p = np.round(rng.uniform(0.5, 1.0, 150), 2)
        path = tmp_path / f"calibrated{k:02d}.csv"
        pd.DataFrame({"id": range(150), "p": p, "y": (rng.random(150) < p).astype(int)}
                     ).to_csv(path, index=False)
        paths.append(str(path))
    out = tmp_path / "cmp"
    assert main(["compare", *paths, *ARGS, "--bootstrap", "200", "--out", str(out),
                 "--json"]) == 0   # 3 would mean a chart not drawn
    ece = json.loads(capsys.readouterr().out)["compare"]["metrics"]["ece"]["models"]
    assert len(ece) == 12
    below = [name for name, row in ece.items() if row["value"] < row["low"]]
    assert below   # the case at issue: some point below its interval
    page = (out / "report.html").read_text()
    assert "alt='forest plot of ece'" in page and "alt='p-value heatmap of ece'" in page
    assert "not drawn" not in page and "could not be rendered" not in page
    table = page[page.index("<h3>ece (lower is better)</h3>"):]   # its ranked table
    row = re.search(rf"<th scope='row'[^>]*>{below[0]}</th><td[^>]*>(?:<span class='v'>)?"
                    r"([0-9.]+)<div class='ci'>\[([0-9.]+)", table)   # stacked on a phone
    assert row is not None and float(row.group(1)) < float(row.group(2))

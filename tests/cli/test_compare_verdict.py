"""``confeval compare`` of two models says the number a reader wants — which model is better,
by how much with the difference's interval, and the pair's p-value — in the terminal, in the
report (the section's verdict and its pairs table) and as whole rank intervals in every
output. Each number against an independent reference: the accuracies counted from the files
with pandas, McNemar's p-value as SciPy's exact binomial test on the discordant items."""

import csv
import html
import json
import re

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from confeval.cli import main
from confeval.report.verdicts import p_text


def _files(tmp_path):
    """Two judges on the same 400 items (seeded): A right more often than B."""
    rng = np.random.default_rng(11)
    n = 400
    truth = rng.random(n)
    paths = []
    for name, lift in (("A", 0.12), ("B", 0.0)):
        correct = (rng.random(n) < np.clip(truth + lift, 0, 1)).astype(int)
        conf = np.round(np.clip(truth + rng.normal(0, 0.2, n), 0, 1), 2)
        path = tmp_path / f"{name}.csv"
        pd.DataFrame({"id": np.arange(n), "p": conf, "y": correct}).to_csv(path, index=False)
        paths.append(path)
    return paths


ARGS = ["--id-col", "id", "-c", "p", "-y", "y", "--bootstrap", "200"]


def _accuracy_verdict(paths, pair):
    """The accuracy verdict from the files themselves: the accuracies and McNemar's exact p
    (scipy), the difference's interval as compare reports it (a bootstrap percentile)."""
    a, b = (pd.read_csv(p)["y"].to_numpy().astype(bool) for p in paths)
    va, vb = a.mean(), b.mean()
    assert va > vb   # A is ranked first
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    p = binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue
    assert pair["diff"] == va - vb and abs(pair["p"] - p) < 1e-12
    assert p < 0.05   # the data separate them
    return (f"A is better: {va:.3f}, higher than B {vb:.3f} by {va - vb:.3f} "
            f"[{pair['low']:.3f}, {pair['high']:.3f}], {p_text(p)} (exact McNemar)")


def test_two_models_terminal_report_and_csv_show_the_difference_and_whole_ranks(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    paths = _files(tmp_path)
    out = tmp_path / "cmp"
    assert main(["compare", *map(str, paths), *ARGS, "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    (pair,) = doc["metrics"]["accuracy"]["pairs"]
    verdict = _accuracy_verdict(paths, pair)
    assert main(["compare", *map(str, paths), *ARGS]) == 0
    lines = capsys.readouterr().out.splitlines()
    # under the metric's title, before its table
    title = lines.index("accuracy (higher is better), 400 shared items")
    assert lines[title + 1] == verdict
    for table in doc["metrics"].values():   # whole ranks, in JSON too
        for row in table["models"].values():
            assert type(row["rank_low"]) is int and type(row["rank_high"]) is int
            assert 1 <= row["rank_low"] <= row["rank_high"] <= 2
    page = (out / "report.html").read_text()
    assert f"<li><strong>accuracy</strong>: {html.escape(verdict, quote=False)}</li>" in page
    # the pairs table: the difference with its interval, p and Holm p (one pair: the same)
    pairs = page.split("<table class='pairs")[1].split("</table>")[0]
    cells = [re.sub(r"<[^>]+>", " ", c).split() for c in re.findall(r"<td[^>]*>(.*?)</td>",
                                                                    pairs)]
    assert cells == [[f"{pair['diff']:.4f}", f"[{pair['low']:.4f},", f"{pair['high']:.4f}]"],
                      [f"{pair['p']:.4g}"], [f"{pair['p']:.4g}"], ["exact", "McNemar"]]
    row = doc["metrics"]["accuracy"]["models"]["A"]
    assert f"1 <span class='muted nowrap'>[{row['rank_low']}–{row['rank_high']}]</span>" in page
    assert ".0]</span>" not in page and ".0–" not in page
    rows = list(csv.DictReader((out / "compare.csv").open()))
    assert rows[0]["accuracy_rank_low"] == str(row["rank_low"])
    assert all("." not in r[f"{m}_{end}"] for r in rows for m in doc["metrics"]
               for end in ("rank", "rank_low", "rank_high"))


def test_the_verdicts_wrap_at_words_on_80_columns(tmp_path, capsys, monkeypatch):
    """Three models with long names: every line fits 80 columns, each verdict right under
    its metric's title, read whole once the lines are joined."""
    monkeypatch.setenv("COLUMNS", "80")
    paths = _files(tmp_path)
    third = tmp_path / "C.csv"
    pd.read_csv(paths[1]).assign(y=lambda f: 1 - f["y"]).to_csv(third, index=False)
    names = [f"--name=a-rather-long-model-name-{k}={p}" for k, p in enumerate([*paths, third])]
    argv = ["compare", *map(str, [*paths, third]), *names, *ARGS]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80, text
    from confeval.report.verdicts import section_verdicts

    flat = " ".join(text.split())
    for metric, verdict in section_verdicts({"kind": "compare", "results": doc}).items():
        title = next(i for i, line in enumerate(lines) if line.startswith(f"{metric} ("))
        assert lines[title + 1].startswith("a-rather-long-model-name-")
        assert verdict in flat

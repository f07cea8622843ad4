"""``confeval compare`` (score suite): exit codes, the JSON contract, values equal to
``confeval score`` on the shared items, names and one-line errors."""

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main


def _write(tmp_path, n=150, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.random(n)
    paths = []
    for k, skill in enumerate([0.3, 0.8, 1.2]):
        conf = np.round(np.clip(truth * skill + rng.random(n) * 0.5, 0, 1), 2)
        correct = (rng.random(n) < np.clip(truth + 0.1 * k, 0, 1)).astype(int)
        frame = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "p": conf, "y": correct})
        if k == 2:
            frame = frame.iloc[5:]   # five items missing
        path = tmp_path / f"judge{k}.csv"
        frame.sample(frac=1.0, random_state=k).to_csv(path, index=False)
        paths.append(path)
    return paths


def test_compare_json_contract_and_values_equal_score(tmp_path, capsys):
    paths = _write(tmp_path)
    args = ["--id-col", "id", "-c", "p", "-y", "y", "--bootstrap", "200", "--json"]
    assert main(["compare", *map(str, paths), *args]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["suite"] == "score" and doc["n_items_shared"] == 145
    assert doc["not_shared"] == {"judge0": 0, "judge1": 0, "judge2": 5}
    assert set(doc["metrics"]) >= {"accuracy", "auroc", "ece", "brier", "auarc"}
    for table in doc["metrics"].values():
        assert set(table) == {"higher_is_better", "models", "pairs"}
        for row in table["models"].values():
            assert set(row) == {"value", "low", "high", "rank", "rank_low", "rank_high",
                                "group"}
        assert len(table["pairs"]) == 3
        for pair in table["pairs"]:
            assert pair["test"] in ("mcnemar_exact", "delong", "paired_bootstrap")
            assert 0 <= pair["p"] <= pair["p_holm"] <= 1
    accuracy = doc["metrics"]["accuracy"]["models"]
    assert doc["models"] == sorted(accuracy, key=lambda m: accuracy[m]["rank"])
    # each model's value is confeval score's on the shared items
    shared = tmp_path / "shared.csv"
    frame = pd.read_csv(paths[0])
    frame[frame["id"].isin([f"q{i}" for i in range(5, 150)])].to_csv(shared, index=False)
    assert main(["score", str(shared), "-c", "p", "-y", "y", "--bootstrap", "0",
                 "--json"]) == 0
    (single,) = json.loads(capsys.readouterr().out)["results"].values()
    for metric in ("accuracy", "auroc", "ece", "brier", "auarc"):
        assert doc["metrics"][metric]["models"]["judge0"]["value"] == pytest.approx(
            single[metric], abs=1e-12)


def test_names_table_and_one_line_errors(tmp_path, capsys):
    paths = _write(tmp_path)
    args = ["--id-col", "id", "-c", "p", "-y", "y", "--bootstrap", "50"]
    assert main(["compare", str(paths[0]), str(paths[1]), "--name", f"A={paths[0]}",
                 *args]) == 0
    text = capsys.readouterr().out
    assert "accuracy (higher is better), 150 shared items" in text and " A " in text
    for argv, message in [
        (["compare", str(paths[0]), *args], "at least two inputs"),
        (["compare", str(paths[0]), str(paths[0]), *args], "two inputs are named 'judge0'"),
        (["compare", *map(str, paths[:2]), "--suite", "sets", *args],
         "--confidence-col, --correct-col: not an option of confeval compare --suite sets"),
        (["compare", *map(str, paths[:2]), "--suite", "nope", *args],
         "confeval compare compares score, sets"),
        (["compare", *map(str, paths[:2]), "--id-col", "nope", "-c", "p", "-y", "y"],
         "no id column 'nope'"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_formats_and_run_folder(tmp_path, capsys):
    paths = _write(tmp_path)
    args = ["--id-col", "id", "-c", "p", "-y", "y", "--bootstrap", "100"]
    assert main(["compare", *map(str, paths), *args, "--format", "markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| model | accuracy ↑ |") and len(lines) == 2 + 3
    assert main(["compare", *map(str, paths), *args, "--format", "latex"]) == 0
    assert r"\begin{tabular}" in capsys.readouterr().out
    out = tmp_path / "cmp"
    assert main(["compare", *map(str, paths), *args, "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in out.iterdir()) == ["compare.csv", "metrics.json",
                                                     "report.html", "run.json"]
    run = json.loads((out / "run.json").read_text())["config"]
    assert run["command"] == "compare" and [i["name"] for i in run["inputs"]] == \
        ["judge0", "judge1", "judge2"]
    assert all(len(i["sha256"]) == 64 for i in run["inputs"])
    section = json.loads((out / "metrics.json").read_text())["sections"][0]
    assert section["kind"] == "compare" and section["results"] == doc["compare"]
    page = (out / "report.html").read_text()
    for metric in ("accuracy", "auroc", "ece", "brier", "auarc"):
        assert f"forest plot of {metric}" in page and f"p-value heatmap of {metric}" in page
    table = pd.read_csv(out / "compare.csv")
    assert list(table["model"]) == doc["compare"]["models"]
    assert main(["compare", *map(str, paths), *args, "--format", "html"]) == 2
    assert "--format 'html'" in capsys.readouterr().err


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not "
                    "installed (apt-get install chromium)")
def test_report_shows_forest_plots_heatmaps_and_a_table_in_chromium(tmp_path, capsys):
    paths = _write(tmp_path)
    out = tmp_path / "cmp"
    assert main(["compare", *map(str, paths), "--id-col", "id", "-c", "p", "-y", "y",
                 "--bootstrap", "100", "--out", str(out)]) == 0
    page = (out / "report.html").as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", "--disable-component-update", "--disable-sync"]
    shot = tmp_path / "shot.png"
    subprocess.run(["chromium", *flags, f"--user-data-dir={tmp_path / 'p1'}",
                    "--window-size=1200,2400", f"--screenshot={shot}", page],
                   check=True, capture_output=True, timeout=120)
    from PIL import Image

    image = np.asarray(Image.open(shot).convert("L"), dtype=float)
    top = image[:600]   # the table at the top of the page is drawn: not a blank band
    assert (top < 200).mean() > 0.01
    dom = subprocess.run(["chromium", *flags, f"--user-data-dir={tmp_path / 'p2'}",
                          "--dump-dom", page], check=True, capture_output=True, timeout=120,
                         text=True).stdout
    assert dom.count("alt=\"forest plot of") == 5 and dom.count("alt=\"p-value heatmap") == 5
    assert dom.count("<tr><th scope=\"row\">judge") >= 3


def test_five_models_with_ties_against_statsmodels_and_the_delong_definition(tmp_path,
                                                                              capsys):
    """The issue's check: five simulated models on shared ids, confidences with ties; A and B
    share their correctness labels, as do C and D (DeLong applies to those pairs). Values equal
    confeval score on each file; McNemar p equal statsmodels' mcnemar(exact=True); DeLong p
    equal the O(mn) definition of DeLong et al. (1988) to 1e-10; Holm equal statsmodels'
    multipletests."""
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    from ..metrics.test_compare import _delong_by_definition

    rng = np.random.default_rng(5)
    n = 240
    truth = rng.random(n)
    labels = {key: (rng.random(n) < truth).astype(int) for key in ("AB", "CD", "E")}
    frames = {}
    for name, skill in zip("ABCDE", (1.0, 0.6, 0.9, 0.2, 0.5)):
        y = labels[next(k for k in labels if name in k)]
        conf = np.round(np.clip(skill * truth + (1 - skill) * rng.random(n), 0, 1), 1)
        frames[name] = pd.DataFrame({"id": np.arange(n), "p": conf, "y": y})
        frames[name].to_csv(tmp_path / f"{name}.csv", index=False)
    files = [str(tmp_path / f"{name}.csv") for name in "ABCDE"]
    assert main(["compare", *files, "--id-col", "id", "-c", "p", "-y", "y", "--bootstrap",
                 "300", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert main(["score", *files, "-c", "p", "-y", "y", "--bootstrap", "0", "--json"]) == 0
    single = json.loads(capsys.readouterr().out)["results"]
    for name, file in zip("ABCDE", files):
        for metric in ("accuracy", "auroc", "ece", "brier", "auarc"):
            assert doc["metrics"][metric]["models"][name]["value"] == pytest.approx(
                single[file][metric], abs=1e-12)
    for pair in doc["metrics"]["accuracy"]["pairs"]:
        a, b = (frames[x]["y"].to_numpy().astype(bool) for x in (pair["a"], pair["b"]))
        table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
        assert pair["test"] == "mcnemar_exact"
        assert pair["p"] == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    delong = [p for p in doc["metrics"]["auroc"]["pairs"] if p["test"] == "delong"]
    assert sorted(frozenset((p["a"], p["b"])) for p in delong) == sorted(
        [frozenset("AB"), frozenset("CD")], key=sorted)
    for pair in delong:
        scores = np.vstack([frames[x]["p"].to_numpy() for x in (pair["a"], pair["b"])])
        y = frames[pair["a"]]["y"].to_numpy()
        auc, cov = _delong_by_definition(scores, y)
        z = (auc[0] - auc[1]) / np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
        assert pair["p"] == pytest.approx(2 * norm_sf(abs(z)), abs=1e-10)
    for metric, table in doc["metrics"].items():
        p = [pair["p"] for pair in table["pairs"]]
        expected = multipletests(p, method="holm")[1]
        np.testing.assert_allclose([pair["p_holm"] for pair in table["pairs"]], expected,
                                   rtol=1e-12, err_msg=metric)


def norm_sf(z):
    from scipy.stats import norm

    return norm.sf(z)


def test_one_file_with_a_model_column_equals_one_file_per_model(tmp_path, capsys):
    paths = _write(tmp_path)
    frames = [pd.read_csv(p).assign(model=f"judge{k}") for k, p in enumerate(paths)]
    long = tmp_path / "all.csv"
    pd.concat(frames).to_csv(long, index=False)
    single = tmp_path / "single.csv"
    frames[0].to_csv(single, index=False)
    args = ["--id-col", "id", "-c", "p", "-y", "y", "--bootstrap", "100", "--json"]
    assert main(["compare", str(long), "--model-col", "model", *args]) == 0
    one = json.loads(capsys.readouterr().out)["compare"]
    assert main(["compare", *map(str, paths), *args]) == 0
    many = json.loads(capsys.readouterr().out)["compare"]
    assert one["metrics"] == many["metrics"] and one["not_shared"] == many["not_shared"]
    for argv, message in [
        (["compare", str(long), str(paths[0]), "--model-col", "model", *args],
         "reads every model from one input; 2 were given"),
        (["compare", str(long), "--model-col", "who", *args], "no model column 'who'"),
        (["compare", str(single), "--model-col", "model", *args], "at least two"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err

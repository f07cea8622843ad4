"""``confeval compare --suite intervals``: the judge paper's three judges (LLaVA-Critic, Phi-4,
Gemini) on their 5,717 shared items, every method on one split of the shared items — values
equal to ``intervals score --seeds <seed>`` of each judge's file."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
RESULTS = DATA / "vlm-judge-uncertainty" / "results"
JUDGES = {"llava-critic": RESULTS / "v2" / "features_s2.csv",
          "phi4": RESULTS / "v2_phi4" / "features_s2.csv",
          "gemini": RESULTS / "v2_gemini" / "features_s2.csv"}


@pytest.mark.skipif(not all(p.is_file() for p in JUDGES.values()),
                    reason=f"shared data absent ({RESULTS}); see its README")
def test_three_judges_equal_intervals_score_with_the_same_split(capsys):
    names = [arg for name, path in JUDGES.items() for arg in ("--name", f"{name}={path}")]
    methods = ["--methods", "naive,lvd,lac", "--seeds", "3"]
    assert main(["compare", *map(str, JUDGES.values()), *names, "--suite", "intervals",
                 "--id-col", "sample_id", *methods, "--bootstrap", "200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["n_items_shared"] == 5717 and set(doc["models"]) == set(JUDGES)
    for name, path in JUDGES.items():
        assert main(["intervals", "score", str(path), *methods, "--json"]) == 0
        (own,) = json.loads(capsys.readouterr().out)["results"].values()
        for method in ("naive", "lvd"):
            for key in ("coverage_raw", "width_raw", "coverage_adj", "width_adj"):
                assert doc["metrics"][f"{method}_{key}"]["models"][name]["value"] == \
                    pytest.approx(own["methods"][method][key]["mean"], abs=1e-12), (method, key)
        for key in ("coverage", "set_size"):
            assert doc["metrics"][f"lac_{key}"]["models"][name]["value"] == pytest.approx(
                own["methods"]["lac"][key]["mean"], abs=1e-12)
    assert {p["test"] for p in doc["metrics"]["lvd_coverage_adj"]["pairs"]} == {
        "mcnemar_exact"}
    assert not doc["metrics"]["naive_width_raw"]["higher_is_better"]
    # a coverage ranks by its distance to the promised 1 - alpha, not higher first
    coverage = doc["metrics"]["naive_coverage_raw"]
    assert coverage["higher_is_better"] is None and coverage["target"] == pytest.approx(0.9)
    distance = {n: abs(r["value"] - 0.9) for n, r in coverage["models"].items()}
    by_rank = sorted(coverage["models"], key=lambda n: coverage["models"][n]["rank"])
    assert [distance[n] for n in by_rank] == sorted(distance.values())
    # each judge's trust card: its first interval method's raw coverage and width, ranked
    for name in JUDGES:
        card = doc["cards"][name]
        for aspect, metric in (("coverage", "naive_coverage_raw"),
                               ("interval width", "naive_width_raw")):
            row = doc["metrics"][metric]["models"][name]
            assert card[aspect]["metric"] == metric and card[aspect]["of"] == 3
            assert (card[aspect]["value"], card[aspect]["rank"]) == (row["value"], row["rank"])


def test_simulated_judges_rated_on_different_scales_are_refused(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for k, levels in enumerate((5, 4)):
        frame = pd.DataFrame({"sample_id": range(60),
                              "gt_score": rng.integers(1, levels + 1, 60)})
        for j in range(1, levels + 1):
            frame[f"s2_lp{j}"] = np.log(rng.dirichlet(np.ones(levels), 60)[:, j - 1])
        path = tmp_path / f"judge{k}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    assert main(["compare", *map(str, paths), "--suite", "intervals", "--id-col", "sample_id",
                 "--methods", "naive"]) == 2
    err = capsys.readouterr().err
    assert "different scales" in err and err.count("\n") == 1

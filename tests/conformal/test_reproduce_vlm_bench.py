"""Exact reproduction of the VLM uncertainty benchmark tables (Kostumov et al., 2024) from the
per-sample logits in ../shared/data (skipped where the data is absent)."""

import json
from pathlib import Path

import pandas as pd
import pytest

from confeval.cli import main

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "vlm-uncertainty-bench"
pytestmark = pytest.mark.skipif(not (DATA / "tables").is_dir(),
                                reason=f"shared data not found at {DATA}")

CASES = [("mmbench", "llava-v1.6-34b"), ("mmbench", "Monkey-Chat"),
         ("oodcv", "internlm-xcomposer2-7b"), ("oodcv", "MobileVLM_V2-1.7B")]


def test_published_table_cells_to_1e6(capsys):
    files = [str(DATA / "per_sample" / ds / f"{model}.csv.gz") for ds, model in CASES]
    assert main(["sets", "score", *files, "--label-col", "answer", "--logit-cols", "logit_*",
                 "--alpha", "0.1", "--split-seed", "42", "--protocol", "vlm-bench",
                 "--scores", "lac,aps", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    checks = {"acc": ("accuracy",), "ece": ("ece",), "mce": ("mce",),
              "coverage_all_LAC": ("scores", "lac", "coverage"),
              "set_sizes_LAC": ("scores", "lac", "set_size"),
              "coverage_all_APS": ("scores", "aps", "coverage"),
              "set_sizes_APS": ("scores", "aps", "set_size"),
              "uacc_LAC": ("scores", "lac", "uacc"), "uacc_APS": ("scores", "aps", "uacc")}
    for table, path in checks.items():
        published = pd.read_csv(DATA / "tables" / f"{table}.csv").set_index("model_name")
        for (ds, model), file in zip(CASES, files):
            value = results[file]
            for key in path:
                value = value[key]
            assert value == pytest.approx(published.loc[model, ds], abs=1e-6), (table, model)
    first = results[files[0]]
    assert first["n_cal"] + first["n_test"] == first["n_used"] == 4377

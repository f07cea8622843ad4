"""Exact reproduction of the VLM uncertainty benchmark tables (Kostumov et al., 2024) from the
per-sample logits in ../shared/data (skipped where the data is absent)."""

from pathlib import Path

import pandas as pd
import pytest

from confeval.suites.sets import SetsOptions, score_sets_file

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "vlm-uncertainty-bench"
pytestmark = pytest.mark.skipif(not (DATA / "tables").is_dir(),
                                reason=f"shared data not found at {DATA}")

CASES = [("mmbench", "llava-v1.6-34b"), ("mmbench", "Monkey-Chat"),
         ("oodcv", "internlm-xcomposer2-7b"), ("oodcv", "MobileVLM_V2-1.7B")]


def test_published_table_cells_to_1e6():
    files = [str(DATA / "per_sample" / ds / f"{model}.csv.gz") for ds, model in CASES]
    config = SetsOptions(alpha=0.1, split_seed=42, protocol="vlm-bench", scores=("lac", "aps"),
                         label_col="answer", logit_cols="logit_*")
    results = {f: score_sets_file(f, config) for f in files}
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

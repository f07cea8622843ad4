"""The VLM-judge paper's conformal tables, reproduced from ../shared/data, in one run.

For LLaVA-Critic (results/v2/all_methods_results.csv), Gemini and Phi-4
(results/v2_*/cp_methods_results.csv): every published method over seeds 1-10 with the
paper's protocol (``PAPER_PROTOCOL``: CHR uncalibrated, CHR and the boosted methods fitted and
calibrated on the same half), mean raw coverage and width beside the published means, and
whether each is within one published std (or +-0.01 coverage / +-0.05 width, whichever is
larger; the Gemini and Phi-4 tables publish no std). Then the multi-judge fusion table
(results/v2_multijudge) and the Mondrian table (results/v2_mondrian). Slow (CHR's published
network trains 500 epochs): about 15 minutes on two cores. Not a pass/fail test.

    python benchmarks/reproduce_judge_tables.py [--quick]   # --quick: skip CHR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from confeval.suites.intervals import PAPER_DIFFICULTY, PAPER_PROTOCOL, score_intervals

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "vlm-judge-uncertainty" / \
    "results"
NAMES = {"NaiveSplitCP": "naive", "CQR": "cqr", "AsymCQR": "asym_cqr", "CHR": "chr",
         "LVD": "lvd", "BoostedCQR": "boosted_cqr", "BoostedLCP": "boosted_lcp",
         "R2CCP": "r2ccp", "OrdinalAPS": "ordinal_aps"}
TABLES = {"LLaVA-Critic": ("v2", "all_methods_results.csv"),
          "Gemini": ("v2_gemini", "cp_methods_results.csv"),
          "Phi-4": ("v2_phi4", "cp_methods_results.csv")}


def _tasks() -> np.ndarray:
    """The paper's difficulty group of every item, joined by sample_id (error_analysis.csv
    lists 5,716 of the 5,717 items: the one without a parsed score is "(none)")."""
    items = pd.read_csv(ROOT / "v2" / "features_s2.csv")[["sample_id"]]
    tasks = pd.read_csv(ROOT / "v2" / "error_analysis.csv")[["sample_id", "orig_dataset"]]
    merged = items.merge(tasks, on="sample_id", how="left", validate="one_to_one")
    return merged.orig_dataset.map(PAPER_DIFFICULTY).fillna("(none)").to_numpy()


def features(folder: str) -> tuple[np.ndarray, np.ndarray]:
    df = pd.read_csv(ROOT / folder / "features_s2.csv")
    return df[[f"s2_lp{k}" for k in range(1, 6)]].to_numpy(), df.gt_score.to_numpy(float)


def within(ours: float, published: float, std: float | None, floor: float) -> str:
    tol = max(std if std is not None and np.isfinite(std) else 0.0, floor)
    return "ok" if abs(ours - published) <= tol else "OFF"


def method_tables(skip: set[str]) -> None:
    for judge, (folder, table) in TABLES.items():
        X, y = features(folder)
        published = pd.read_csv(ROOT / folder / table).set_index("method")
        methods = [NAMES[m] for m in published.index if NAMES[m] not in skip]
        start = time.perf_counter()
        res = score_intervals(X, y, methods=methods, method_options=PAPER_PROTOCOL)
        print(f"\n{judge} ({time.perf_counter() - start:.0f} s)")
        print(f"  {'method':12s} {'cov':>7s} {'paper':>7s}    {'width':>7s} {'paper':>7s}")
        for row, p in published.iterrows():
            name = NAMES[row]
            if name in skip:
                continue
            m = res["methods"][name]
            cov, width = m["coverage_raw"]["mean"], m["width_raw"]["mean"]
            print(f"  {name:12s} {cov:7.4f} {p.cov_raw:7.4f} "
                  f"{within(cov, p.cov_raw, p.get('cov_raw_std'), 0.01):>3s} "
                  f"{width:7.4f} {p.width_raw:7.4f} "
                  f"{within(width, p.width_raw, p.get('width_raw_std'), 0.05):>3s}")


def multijudge_table() -> None:
    X = {name: features(folder)[0] for name, (folder, _) in TABLES.items()}
    y = features("v2")[1]
    published = pd.read_csv(ROOT / "v2_multijudge" / "multijudge_comparison.csv")
    configs = {"Multi-Judge (15 feat)": ["LLaVA-Critic", "Phi-4", "Gemini"],
               "LLaVA+Gemini (10 feat)": ["LLaVA-Critic", "Gemini"],
               "LLaVA+Phi4 (10 feat)": ["LLaVA-Critic", "Phi-4"]}
    print("\nMulti-judge fusion, R2CCP on concatenated features")
    for config, judges in configs.items():
        res = score_intervals(np.hstack([X[j] for j in judges]), y, methods=["r2ccp"])
        m, p = res["methods"]["r2ccp"], published.set_index("config").loc[config]
        cov, width = m["coverage_raw"]["mean"], m["width_raw"]["mean"]
        print(f"  {config:24s} cov {cov:.4f} (paper {p.cov_raw_mean:.4f} "
              f"{within(cov, p.cov_raw_mean, p.cov_raw_std, 0.01)})  width {width:.4f} "
              f"(paper {p.width_raw_mean:.4f} "
              f"{within(width, p.width_raw_mean, p.width_raw_std, 0.05)})")


def mondrian_table() -> None:
    X, y = features("v2")
    tasks = _tasks()
    published = pd.read_csv(ROOT / "v2_mondrian" / "mondrian_comparison.csv").set_index("method")
    print("\nBy task difficulty, R2CCP, boundary-adjusted (ours / paper)")
    standard = score_intervals(X, y, methods=["r2ccp"], groups=tasks)["methods"]["r2ccp"]
    one_model = score_intervals(X, y, methods=["r2ccp"], groups=tasks,
                                mondrian=True)["methods"]["r2ccp"]
    per_group = {g: score_intervals(X[tasks == g], y[tasks == g],
                                    methods=["r2ccp"])["methods"]["r2ccp"]
                 for g in ("easy", "medium", "hard")}
    sizes = {g: int((tasks == g).sum()) for g in per_group}
    pooled = {k: sum(per_group[g][k]["mean"] * sizes[g] for g in sizes) / sum(sizes.values())
              for k in ("coverage_adj", "width_adj")}
    rows = {"Standard": ("Standard", {"overall": standard, **standard["groups"]}),
            "one model, per-group thresholds (--mondrian)": ("Mondrian", {
                "overall": one_model, **one_model["groups"]}),
            "a model per group (--separately)": ("Mondrian", {
                "overall": {k: {"mean": v} for k, v in pooled.items()}, **per_group})}
    for label, (paper_row, cells) in rows.items():
        p = published.loc[paper_row]
        print(f"  {label}")
        print("    " + "  ".join(
            f"{g}: cov {cells[g]['coverage_adj']['mean']:.4f}/{p[f'{g}_coverage']:.4f} "
            f"width {cells[g]['width_adj']['mean']:.3f}/{p[f'{g}_width']:.3f}"
            for g in ("overall", "easy", "medium", "hard")))


def main() -> None:
    if not ROOT.is_dir():
        sys.exit(f"shared data not found at {ROOT}")
    start = time.perf_counter()
    method_tables(skip={"chr"} if "--quick" in sys.argv else set())
    multijudge_table()
    mondrian_table()
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

"""Write docs/reproductions.md: every published table we reproduce, the paper's value beside
ours and the difference, computed now from ../shared/data and the reference values the tests
hold (tests/reproductions/) — generated, never typed. tests/cli/test_reproductions_page.py
checks that the committed page equals what this script writes.

    python benchmarks/reproductions_page.py [--out docs/reproductions.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
VLM = DATA / "vlm-uncertainty-bench"
JUDGE = DATA / "vlm-judge-uncertainty" / "results"
METRICS = {  # the authors' table -> (our key path, label)
    "acc": (("accuracy",), "accuracy"), "ece": (("ece",), "ECE"), "mce": (("mce",), "MCE"),
    "coverage_all_LAC": (("scores", "lac", "coverage"), "LAC coverage"),
    "set_sizes_LAC": (("scores", "lac", "set_size"), "LAC set size"),
    "uacc_LAC": (("scores", "lac", "uacc"), "LAC UAcc"),
    "coverage_all_APS": (("scores", "aps", "coverage"), "APS coverage"),
    "set_sizes_APS": (("scores", "aps", "set_size"), "APS set size"),
    "uacc_APS": (("scores", "aps", "uacc"), "APS UAcc"),
}
SHOWN = ["llava-v1.6-34b", "Yi-VL-34B", "Qwen-VL-Chat", "MobileVLM_V2-1.7B"]


def _vlm_section() -> list[str]:
    from confeval.suites.sets import SetsOptions, score_sets_file

    config = SetsOptions(alpha=0.1, split_seed=42, protocol="vlm-bench", scores=("lac", "aps"),
                         label_col="answer", logit_cols="logit_*")
    files = sorted((VLM / "per_sample").glob("*/*.csv.gz"))
    ours = {(f.parent.name, f.name[:-len(".csv.gz")]): score_sets_file(str(f), config)
            for f in files}
    lines = ["## VLM uncertainty benchmark (Kostumov et al., 2024)", "",
             f"Conformal prediction sets over the options of {len({m for _, m in ours})} VLMs "
             f"on MMBench and OOD-CV ({len(ours)} files of per-sample logits), the authors' "
             "protocol: alpha 0.1, one 50/50 split with seed 42, their float32 softmax and "
             "ECE binning.", "", "```bash",
             "confeval sets score ../shared/data/vlm-uncertainty-bench/per_sample/*/*.csv.gz "
             "--label-col answer --logit-cols 'logit_*' --alpha 0.1 --split-seed 42 "
             "--protocol vlm-bench --scores lac,aps --json", "```", "",
             "| table | cells | largest difference |", "|---|---|---|"]
    shown = []
    for table, (path, label) in METRICS.items():
        published = pd.read_csv(VLM / "tables" / f"{table}.csv").set_index("model_name")
        diffs = []
        for (dataset, model), res in ours.items():
            value = res
            for key in path:
                value = value[key]
            paper = float(published.loc[model, dataset])
            diffs.append(abs(value - paper))
            if dataset == "mmbench" and model in SHOWN and table in ("acc", "coverage_all_LAC",
                                                                       "set_sizes_LAC"):
                shown.append((model, label, paper, value))
        lines.append(f"| {label} (`{table}.csv`) | {len(diffs)} | {_difference(max(diffs))} |")
    lines += ["", "Some cells of MMBench, the paper's value (its table, as published) and ours:",
              "", "| model | metric | paper | ours | difference |", "|---|---|---|---|---|"]
    for model, label, paper, value in sorted(shown):
        lines.append(f"| {model} | {label} | {paper:.6f} | {value:.6f} | "
                     f"{_difference(abs(value - paper))} |")
    return lines


def _difference(value: float) -> str:
    """A difference as the tests bound it: the authors compute in float32, so below 1e-6 the
    last digits depend on the machine's float32 arithmetic, not on the method."""
    return "0" if value == 0 else ("< 1e-6" if value < 1e-6 else f"{value:.1e}")


def _judge_section() -> list[str]:
    sys.path.insert(0, str(ROOT))   # the tests' reference values and their computation
    from tests.reproductions.test_published_judge_table import DIGITS, TABLE_1, table_1_values

    names = {"v2": "LLaVA-Critic-7B", "v2_phi4": "Phi-4-reasoning",
             "v2_gemini": "Gemini 2.5 Flash"}
    columns = ("Pearson", "Spearman", "Kendall", "accuracy %", "±1 accuracy %", "MAE",
               "P(top) > .99 %", "P(top) > .999 %")
    lines = ["## VLM-judge uncertainty, Table 1 (point metrics)", "",
             "A judge's 1–5 scores against human scores on MLLM-as-a-Judge (5,717 items): "
             "correlations, accuracy and MAE over the parsed scores, overconfidence over all "
             "items with the score-token probabilities renormalised (the paper's protocol; "
             "`confeval agreement` gives the same numbers, except that its overconfidence "
             "counts the parsed items only). The paper prints rounded values; ours are rounded "
             "the same way, and the difference is that of the rounded numbers.", "",
             "```bash",
             "confeval agreement ../shared/data/vlm-judge-uncertainty/results/v2/features_s2.csv "
             "-p parsed_score -g gt_score --logprob-cols 's2_lp*' --json", "```", "",
             "| judge | metric | paper | ours | difference |", "|---|---|---|---|---|"]
    for folder, published in TABLE_1.items():
        ours, _ = table_1_values(pd.read_csv(JUDGE / folder / "features_s2.csv"))
        for column, value, paper, d in zip(columns, ours, published, DIGITS):
            mine = round(float(value), d)
            lines.append(f"| {names[folder]} | {column} | {paper:.{d}f} | {mine:.{d}f} | "
                         f"{mine - paper:+.{d}f} |")
    return lines


def page() -> str:
    head = ["# Reproductions", "",
            "Each published table confeval reproduces, computed from the authors' public data "
            "in `../shared/data` and compared with the values the tests hold "
            "(`tests/reproductions/`). This page is written by "
            "`python benchmarks/reproductions_page.py`, not by hand, and a test checks that it "
            "still matches what the code computes. The slow reproductions (the nine interval "
            "methods of the VLM-judge paper over ten seeds) run with "
            "`CONFEVAL_SLOW=1 pytest tests/reproductions/test_judge_tables.py`.", ""]
    lines = head + _vlm_section() + [""] + _judge_section()
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "reproductions.md")
    args = parser.parse_args()
    if not VLM.is_dir() or not JUDGE.is_dir():
        raise SystemExit(f"the shared data is not at {DATA}")
    args.out.write_text(page(), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    np.seterr(all="raise")
    main()

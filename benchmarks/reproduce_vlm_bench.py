"""Reproduce the VLM uncertainty benchmark's published tables from its per-sample logits.

One ``confeval sets score`` call over all 52 files (26 models x MMBench, OOD-CV) with the
authors' protocol (alpha 0.1, 50/50 split with seed 42, ``--protocol vlm-bench``), compared
with ``tables/*.csv``: prints the max absolute difference per metric and the wall time of
the call (target <= 10 s). Needs ../shared/data (see its README); not a pass/fail test.

    python benchmarks/reproduce_vlm_bench.py [--data ../shared/data/vlm-uncertainty-bench]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from pathlib import Path

import pandas as pd

from confeval.cli import main as confeval

METRICS = {  # table file -> path into our JSON result
    "acc": ("accuracy",), "ece": ("ece",), "mce": ("mce",),
    "coverage_all_LAC": ("scores", "lac", "coverage"),
    "set_sizes_LAC": ("scores", "lac", "set_size"),
    "uacc_LAC": ("scores", "lac", "uacc"),
    "coverage_all_APS": ("scores", "aps", "coverage"),
    "set_sizes_APS": ("scores", "aps", "set_size"),
    "uacc_APS": ("scores", "aps", "uacc"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parents[1]
    parser.add_argument("--data", type=Path,
                        default=here.parent / "shared" / "data" / "vlm-uncertainty-bench")
    args = parser.parse_args()
    files = sorted(str(p) for p in (args.data / "per_sample").glob("*/*.csv.gz"))
    if not files:
        raise SystemExit(f"no per-sample files under {args.data}; see ../shared/data/README.md")
    buffer = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(buffer):
        code = confeval(["sets", "score", *files, "--label-col", "answer", "--logit-cols",
                         "logit_*", "--alpha", "0.1", "--split-seed", "42", "--protocol",
                         "vlm-bench", "--scores", "lac,aps", "--json"])
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"confeval exited with {code}")
    results = json.loads(buffer.getvalue())["results"]
    tables = {name: pd.read_csv(args.data / "tables" / f"{name}.csv").set_index("model_name")
              for name in METRICS}
    print(f"{len(files)} files in one call: {elapsed:.2f} s (target <= 10 s)")
    print(f"{'metric':18s} {'cells':>5s} {'max |diff|':>12s}")
    worst_all = 0.0
    for name, path in METRICS.items():
        worst, cells = 0.0, 0
        for file, res in results.items():
            dataset, model = Path(file).parent.name, Path(file).name[:-len(".csv.gz")]
            value = res
            for key in path:
                value = value[key]
            worst = max(worst, abs(value - tables[name].loc[model, dataset]))
            cells += 1
        worst_all = max(worst_all, worst)
        print(f"{name:18s} {cells:5d} {worst:12.3e}")
    print(f"overall max |diff|: {worst_all:.3e} (target <= 1e-6)")


if __name__ == "__main__":
    main()

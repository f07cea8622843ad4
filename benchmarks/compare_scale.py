"""``confeval compare`` at paper scale: the 26 VLMs of the VLM uncertainty benchmark on MMBench
(4,377 items each; 325 pairs), the sets suite with the authors' protocol, 1,000 paired
resamples. Prints the wall time of the one call (files read, every model scored, every pair
tested; target <= 20 s on 2 cores). Needs ../shared/data; not a pass/fail test.

    python benchmarks/compare_scale.py [--data ../shared/data/vlm-uncertainty-bench]
                                       [--bootstrap 1000] [--models 26]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from pathlib import Path

from confeval.cli import main as confeval


def run(files: list[Path], bootstrap: int) -> tuple[float, dict]:
    """(seconds, the comparison) of one ``confeval compare --suite sets`` call."""
    buffer = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(buffer):
        code = confeval(["compare", *map(str, files), "--suite", "sets", "--id-col", "index",
                         "--protocol", "vlm-bench", "--scores", "lac,aps", "--split-seed", "42",
                         "--bootstrap", str(bootstrap), "--json"])
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"confeval exited with {code}")
    return elapsed, json.loads(buffer.getvalue())["compare"]


def model_files(folder: Path) -> list[Path]:
    """The per-sample MMBench files of the benchmark's models, in name order."""
    return sorted((folder / "per_sample" / "mmbench").glob("*.csv.gz"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parents[1]
    parser.add_argument("--data", type=Path,
                        default=here.parent / "shared" / "data" / "vlm-uncertainty-bench")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--models", type=int, default=26)
    args = parser.parse_args()
    files = model_files(args.data)[: args.models]
    if len(files) < 2:
        raise SystemExit(f"no per-sample files under {args.data}; see ../shared/data/README.md")
    elapsed, doc = run(files, args.bootstrap)
    pairs = len(doc["metrics"]["accuracy"]["pairs"])
    print(f"{len(files)} models x {doc['n_items_shared']:,} items, {pairs} pairs x "
          f"{len(doc['metrics'])} metrics, {args.bootstrap:,} paired resamples: "
          f"{elapsed:.2f} s (target <= 20 s)")
    best = {m: doc["metrics"][m]["models"][doc["models"][0]] for m in ("accuracy",)}
    print(f"best by accuracy: {doc['models'][0]} {best['accuracy']['value']:.4f} "
          f"(group {best['accuracy']['group']})")


if __name__ == "__main__":
    main()

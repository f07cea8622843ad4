"""Scoring 100,000 process-judge step rows (``confeval steps score``), timed in one run.

Target (issue 6): <= 2 s for 100,000 rows. Prints the metric computation alone, with the
default 1,000 item-bootstrap resamples, and the whole command on a CSV file (reading and
validating included). Not a pass/fail test.

    python benchmarks/steps_scale.py
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path

from confeval.cli import main
from confeval.simulate import simulate
from confeval.suites.steps.scoring import score_steps


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main_() -> None:
    df = simulate("steps", 6700, seed=1)
    n = len(df)
    t0 = timed(lambda: score_steps(df, n_resamples=0))
    t1 = timed(lambda: score_steps(df, n_resamples=1000, group_cols=["difficulty"]))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "steps.csv"
        df.to_csv(path, index=False)
        with contextlib.redirect_stdout(io.StringIO()):
            t2 = timed(lambda: main(["steps", "score", str(path), "--json"]))
    print(f"{n:,} step rows ({(df.variant == 'original').sum():,} original, "
          f"{(df.variant != 'original').sum():,} perturbed)")
    print(f"  metrics, no bootstrap:                   {t0:6.2f} s")
    print(f"  metrics + 1,000 item resamples + groups: {t1:6.2f} s")
    print(f"  'confeval steps score FILE --json':      {t2:6.2f} s  (target <= 2 s; "
          f"{2 / t2:.1f}x under)")


if __name__ == "__main__":
    main_()

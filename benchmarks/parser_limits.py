"""Parsing hostile judge replies: wall time and peak resident memory of ``confeval steps parse``
on one reply of 100,000 '[' then 100,000 ']' (once 19 s and 14.8 GB), a 1 MB soup of quotes,
and a 10 MB soup over the length cap, each measured with ``/usr/bin/time -v`` in one run.
Target: < 2 s and < 200 MB of parsing each (the process itself, imports included, is
printed as measured). Not a pass/fail test.

    python benchmarks/parser_limits.py
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPLIES = {
    "brackets 100k+100k": "[" * 100_000 + "]" * 100_000,
    "quote soup 1 MB": "[[1, 0.5, " + '"a"b' * 250_000 + "]]",
    "bracket/quote/backslash soup 10 MB": ('[{"\\\\' * 2_621_440)[: 10 * 1024 * 1024],
}


def measure(argv: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one command."""
    if shutil.which("time") is None and not Path("/usr/bin/time").exists():
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        return time.perf_counter() - started, float("nan")
    done = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True,
                          check=True)
    rss = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)[1])
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)[1]
    seconds = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
    return seconds, rss / 1024


def main() -> None:
    confeval = [sys.executable, "-m", "confeval.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.jsonl"
        empty.write_text(json.dumps({"item_id": "x", "raw_output": "", "labels": [1]}) + "\n")
        base_s, base_mb = measure([*confeval, "steps", "parse", str(empty), "--out",
                                   str(Path(tmp) / "e.jsonl")])
        print(f"baseline (imports, one empty reply): {base_s:.2f} s, {base_mb:.0f} MB")
        for name, reply in REPLIES.items():
            path = Path(tmp) / "replies.jsonl"
            path.write_text(json.dumps({"item_id": "x", "raw_output": reply,
                                        "labels": [1, 0, 1]}) + "\n")
            seconds, mb = measure([*confeval, "steps", "parse", str(path), "--out",
                                   str(Path(tmp) / "out.jsonl"), "--json"])
            print(f"{name:38s} {len(reply) / 1e6:5.1f} MB reply: {seconds:5.2f} s, "
                  f"{mb:5.0f} MB peak ({seconds - base_s:+.2f} s, {mb - base_mb:+.0f} MB over "
                  "the baseline; target < 2 s, < 200 MB)")


if __name__ == "__main__":
    main()

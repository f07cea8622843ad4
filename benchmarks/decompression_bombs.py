"""Decompression bombs refused: wall time and peak resident memory of ``confeval score`` on
compressed files that expand to about 940 MB each — an lm-eval ``.jsonl.gz``, a record
``.csv.gz``, and an Inspect ``.eval`` archive of four zstd members (once read whole: 2 GB of
memory and 43 s for one member, 115 s for four) — each measured with ``/usr/bin/time -v``,
beside a baseline run on a small file. Every one should end in one error line naming the file
and the cap, within a second or two of the baseline and a few tens of MB over it. Not a
pass/fail test.

    python benchmarks/decompression_bombs.py
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

EXPANDED = 940 << 20
"""Bytes each bomb expands to."""

LM_EVAL_LINE = {"doc_id": 0, "doc": {}, "target": "0", "arguments": {
    "gen_args_0": {"arg_0": "Q", "arg_1": " a"}, "gen_args_1": {"arg_0": "Q", "arg_1": " b"}},
    "filtered_resps": [["-0.5", "False"], ["-1.5", "False"]], "acc": 1.0}


def run(argv: list[str]) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, the last line of stderr) of one command."""
    if shutil.which("time") is None and not Path("/usr/bin/time").exists():
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True)
        return time.perf_counter() - started, float("nan"), done.stderr.strip()[-200:]
    done = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True)
    rss = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)[1])
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)[1]
    seconds = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
    said = next((line for line in done.stderr.splitlines() if line.startswith("error:")), "")
    return seconds, rss / 1024, said


def gzip_bomb(path: Path, head: bytes) -> Path:
    """``head``, then blanks to :data:`EXPANDED` bytes, gzipped in 64 MB pieces."""
    block = b" " * (64 << 20)
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(head)
        for _ in range(EXPANDED // len(block)):
            out.write(block)
    return path


def eval_bomb(path: Path, members: int = 4) -> Path | None:
    """An Inspect-shaped archive whose sample members are zstd bombs (None: zstd missing)."""
    try:
        import zipfile_zstd  # noqa: F401  (adds zstd to zipfile)
    except ImportError:
        return None
    with zipfile.ZipFile(path, "w", compression=93) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "eval": {}}))
        for i in range(members):
            with archive.open(f"samples/{i}_epoch_1.json", "w") as member:
                for _ in range(EXPANDED // (64 << 20)):
                    member.write(b" " * (64 << 20))
    return path


def main() -> None:
    confeval = [sys.executable, "-c", "import sys; from confeval.cli import main; "
                "sys.exit(main(sys.argv[1:]))"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        small = tmp / "small.csv"
        small.write_text("p,y\n0.2,0\n0.9,1\n0.6,1\n")
        base_s, base_mb, _ = run([*confeval, "score", str(small), "-c", "p", "-y", "y",
                                  "--bootstrap", "0"])
        print(f"baseline (imports, a 3-row file): {base_s:.2f} s, {base_mb:.0f} MB")
        line = (json.dumps(LM_EVAL_LINE) + "\n").encode()
        bombs = {
            "lm-eval samples .jsonl.gz": gzip_bomb(
                tmp / "samples_t_2026-01-01T00-00-00.jsonl.gz", line),
            "records .csv.gz": gzip_bomb(tmp / "records.csv.gz", b"p,y\n0.5,1\n"),
            "Inspect .eval, 4 zstd members": eval_bomb(tmp / "log.eval"),
        }
        for name, path in bombs.items():
            if path is None:
                print(f"{name:32s} skipped (zipfile_zstd is not installed)")
                continue
            argv = [*confeval, "score", str(path), "--bootstrap", "0"]
            if name.startswith("records"):
                argv += ["-c", "p", "-y", "y"]
            seconds, mb, said = run(argv)
            size = path.stat().st_size
            expanded = EXPANDED * (4 if name.startswith("Inspect") else 1) / 2**20
            print(f"{name:32s} {size / 1024:8,.0f} KB -> {expanded:5,.0f} MB: "
                  f"{seconds:5.2f} s, {mb:5.0f} MB peak ({seconds - base_s:+.2f} s, "
                  f"{mb - base_mb:+.0f} MB over the baseline)\n    {said[:160]}")


if __name__ == "__main__":
    main()

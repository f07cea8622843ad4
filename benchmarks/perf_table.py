"""The performance tables of ``docs/performance.md`` and the README, written from the last full
run of ``benchmarks/run_all.py`` and nothing else.

``run_all.py`` saves every row of a full run, with the date, commit, load and thread settings,
to ``benchmarks/results/run_all.json`` and then rewrites the two tables between their
``<!-- run_all:... -->`` markers from that file. ``tests/benchmarks/test_perf_table.py`` renders
the committed file again and requires both pages to hold exactly that text: a figure edited by
hand, or a table left behind by a newer run, fails the test.

    python benchmarks/perf_table.py        # rewrite the pages from the saved run (no timing)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "run_all.json"
PAGES = {"full": REPO / "docs" / "performance.md", "summary": REPO / "README.md"}
START, END = "<!-- run_all:{name}:start -->", "<!-- run_all:{name}:end -->"

# The README's short table: (the start of a row's `work` in the full run, the README's label).
SUMMARY_ROWS = (
    ("TokenSAR, 10,000 answers, per call", "TokenSAR, 10,000 answers, one call each"),
    ("CSL all heads, 10,000 answers x 32 heads, per call",
     "CSL, 10,000 answers x 32 heads, one call each"),
    ("SL, 10,000 answers, per call", "SL, 10,000 answers, one call each"),
    ("Deg, 1,000 questions x 20 samples, batched", "Deg, 1,000 questions x 20 samples, batched"),
    ("EigV, 1,000 questions x 20 samples, batched", "EigV, same, batched"),
    ("Ecc, 1,000 questions x 20 samples, batched", "Ecc, same, batched (numpy's eigh)"),
    ("Ecc, 1,000 questions x 20 samples, batched, torch's eigh",
     "Ecc, same, batched (torch's eigh)"),
    ("AUARC, 10^6 rows", "AUARC, 10^6 rows"),
    ("PRR, 10^6 rows", "PRR, 10^6 rows"),
    ("judge sweep", "judge sweep, 12 methods x 10 seeds"),
    ("score: every metric", "`score` with 1,000 bootstrap resamples, 10^6 rows"),
    ("option injection", "options scored on the embedded model, 10 questions x 5"),
    ("sampling", "sampling on the embedded model, 10 questions x 20 answers"),
    ("confeval --help", "`confeval --help` (median)"),
    ("confeval score, a 500-row CSV", "`confeval score`, a 500-row CSV (median)"),
)


def seconds(s: float | None) -> str:
    """A time as the tables print it: milliseconds below a second, else seconds."""
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "–"
    if s < 1:
        text = f"{s * 1e3:.1f}" if s < 0.1 else f"{s * 1e3:.0f}"
        return f"{text} ms"
    return f"{s:.2f} s"


def ratio_text(row: dict) -> str:
    ratio = row.get("ratio")
    if ratio is None:
        return ""
    return f"{ratio:.2f}" if ratio < 10 else f"{ratio:.1f}"


def target_text(row: dict) -> str:
    if row.get("budget") is not None:
        return f"<= {row['budget']:g} s"
    if row.get("target") is not None:
        return f">= {row['target']:g}"
    return ""


def _references(row: dict) -> str:
    return ", ".join(f"{name} {seconds(s)}" for name, s in row["references"].items())


def _fastest(row: dict) -> str:
    if not row["references"]:
        return ""
    name = min(row["references"], key=row["references"].get)
    return f"{name} {seconds(row['references'][name])}"


def _on_every_core(probe: dict) -> str:
    """The probe run on every core at once, the slowest core's time (runs saved before
    2026-11-27 06:30 UTC have none)."""
    if "both_before" not in probe:
        return ""
    return (f" (run on every core at once, the slowest took {probe['both_before'] * 1e3:.0f} "
            f"and {probe['both_after'] * 1e3:.0f} ms)")


def provenance(run: dict) -> str:
    load = run["load"]
    threads = run.get("omp_num_threads") or "unset"
    probe = run.get("probe")   # (runs saved before 2026-11-26 22:30 UTC have none)
    speed = "" if probe is None else (
        f" A fixed probe of the host's speed (10^6 additions in Python and a sort of 10^6 "
        f"numbers, best of 3) took {probe['before'] * 1e3:.0f} ms before the run and "
        f"{probe['after'] * 1e3:.0f} ms after{_on_every_core(probe)}; on this machine it has "
        "ranged over tens of percent within minutes.")
    return (f"Written by `python benchmarks/run_all.py` from one run on {run['date']} "
            f"(commit {run['commit']}, {run['cores']} cores, load average "
            f"{load['before']:.2f} before and {load['after']:.2f} after, best of "
            f"{run['repeats']} interleaved, `OMP_NUM_THREADS` {threads}).{speed}")


def render_full(run: dict) -> str:
    lines = ["| work | confeval | reference(s) | ratio | target | met |",
             "|---|---|---|---|---|---|"]
    for row in run["rows"]:
        work = row["work"] + (f" ({row['note']})" if row.get("note") else "")
        lines.append(f"| {work} | {seconds(row['seconds'])} | {_references(row)} | "
                     f"{ratio_text(row)} | {target_text(row)} | {row['met']} |")
    return "\n".join([*lines, "", provenance(run)])


def render_summary(run: dict) -> str:
    by_start = {}
    for start, label in SUMMARY_ROWS:
        found = [r for r in run["rows"] if r["work"].startswith(start)]
        if found:
            by_start[label] = found[0]
    lines = ["| work | confeval | fastest reference | ratio | target |", "|---|---|---|---|---|"]
    for label, row in by_start.items():
        lines.append(f"| {label} | {seconds(row['seconds'])} | {_fastest(row)} | "
                     f"{ratio_text(row)} | {target_text(row)} |")
    return "\n".join([*lines, "", provenance(run)])


RENDER = {"full": render_full, "summary": render_summary}


def block(text: str, name: str) -> str:
    """The text between a page's two markers for ``name`` (ValueError when they are missing)."""
    start, end = START.format(name=name), END.format(name=name)
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ValueError(f"the page needs exactly one {start} before one {end}")
    return text[text.index(start) + len(start):text.index(end)].strip("\n")


def _replace(text: str, name: str, body: str) -> str:
    block(text, name)   # the markers are there, once, in order
    start, end = START.format(name=name), END.format(name=name)
    head, rest = text.split(start)
    _, tail = rest.split(end)
    return f"{head}{start}\n{body}\n{end}{tail}"


def load(path: Path = RESULTS) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write_pages(run: dict, pages: dict[str, Path] = PAGES) -> None:
    for name, page in pages.items():
        text = page.read_text(encoding="utf-8")
        page.write_text(_replace(text, name, RENDER[name](run)), encoding="utf-8")


def main() -> None:
    import argparse

    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    write_pages(load())
    print(f"rewrote {', '.join(str(p.relative_to(REPO)) for p in PAGES.values())} "
          f"from {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()

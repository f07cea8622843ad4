"""The published performance tables are one run's, written by ``benchmarks/run_all.py``: the
committed tables of docs/performance.md and the README equal what ``benchmarks/perf_table.py``
renders from the saved run, ``benchmarks/results/run_all.json`` (no hand-edited figures)."""

import copy
import math
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import perf_table  # noqa: E402
import run_all  # noqa: E402


def _saved_run() -> dict:
    if not perf_table.RESULTS.is_file():
        pytest.fail(f"{perf_table.RESULTS} is missing: run `python benchmarks/run_all.py`")
    return perf_table.load()


@pytest.mark.parametrize("name", sorted(perf_table.PAGES))
def test_committed_table_equals_the_saved_run(name):
    page = perf_table.PAGES[name]
    written = perf_table.block(page.read_text(encoding="utf-8"), name)
    assert written == perf_table.RENDER[name](_saved_run()), (
        f"{page.name}'s table differs from {perf_table.RESULTS.name}: rerun "
        "`python benchmarks/run_all.py` (or `python benchmarks/perf_table.py`)")


def test_the_saved_run_is_a_full_run_with_its_provenance():
    run = _saved_run()
    assert run["groups"] == list(run_all.GROUPS)
    assert {"date", "commit", "cores", "repeats", "load", "probe"} <= set(run)
    assert all(0 < run["probe"][k] < 60 for k in ("before", "after"))
    assert all(row["met"] in {"yes", "NO", ""} for row in run["rows"])
    # every row the README's summary names is in the run
    starts = [start for start, _ in perf_table.SUMMARY_ROWS]
    assert all(any(r["work"].startswith(s) for r in run["rows"]) for s in starts)


def _toy_run() -> dict:
    rows = [run_all.Row("Deg, 1,000 questions x 20 samples, batched", 0.0005,
                        {"UQ-NLG": 0.0048, "LM-Polygraph": 0.0066}, target=5.0),
            run_all.Row("judge sweep, 12 methods x 10 seeds", 27.9, budget=30.0),
            run_all.Row("compare", float("nan"), budget=20.0, note="skipped: data absent")]
    return {"date": "2026-11-26 16:00 UTC", "commit": "abc1234", "cores": 2, "repeats": 5,
            "omp_num_threads": None, "load": {"before": 0.1, "after": 0.25},
            "groups": list(run_all.GROUPS), "rows": [r.as_dict() for r in rows]}


def test_rendering_by_hand_computed_values():
    run = _toy_run()
    full = perf_table.render_full(run).splitlines()
    # ratio = fastest reference / confeval = 0.0048 / 0.0005 = 9.6
    assert full[2] == ("| Deg, 1,000 questions x 20 samples, batched | 0.5 ms | "
                       "UQ-NLG 4.8 ms, LM-Polygraph 6.6 ms | 9.60 | >= 5 | yes |")
    assert full[3] == "| judge sweep, 12 methods x 10 seeds | 27.90 s |  |  | <= 30 s | yes |"
    assert full[4] == "| compare (skipped: data absent) | – |  |  | <= 20 s | NO |"
    assert full[-1].startswith("Written by `python benchmarks/run_all.py` from one run on "
                               "2026-11-26 16:00 UTC (commit abc1234, 2 cores, load average "
                               "0.10 before and 0.25 after")
    assert "probe" not in full[-1]   # a run saved without the probe says nothing of it
    run["probe"] = {"before": 0.1234, "after": 0.1876}
    assert perf_table.render_full(run).splitlines()[-1].endswith(
        "`OMP_NUM_THREADS` unset). A fixed probe of the host's speed (10^6 additions in Python "
        "and a sort of 10^6 numbers, best of 3) took 123 ms before the run and 188 ms after; on "
        "this machine it has ranged over tens of percent within minutes.")
    run["probe"].update(both_before=0.0456, both_after=0.0987)
    assert perf_table.render_full(run).splitlines()[-1].endswith(
        "took 123 ms before the run and 188 ms after (run on every core at once, the slowest "
        "took 46 and 99 ms); on this machine it has ranged over tens of percent within minutes.")
    summary = perf_table.render_summary(run).splitlines()
    assert summary[2] == ("| Deg, 1,000 questions x 20 samples, batched | 0.5 ms | UQ-NLG 4.8 ms"
                          " | 9.60 | >= 5 |")


def test_pages_are_rewritten_between_their_markers_only(tmp_path):
    run = _toy_run()
    pages = {}
    for name in perf_table.PAGES:
        page = tmp_path / f"{name}.md"
        start, end = perf_table.START.format(name=name), perf_table.END.format(name=name)
        page.write_text(f"before\n{start}\nold figures\n{end}\nafter\n", encoding="utf-8")
        pages[name] = page
    perf_table.write_pages(run, pages)
    for name, page in pages.items():
        text = page.read_text(encoding="utf-8")
        assert text.startswith("before\n") and text.endswith("\nafter\n")
        assert perf_table.block(text, name) == perf_table.RENDER[name](run)
    changed = copy.deepcopy(run)
    changed["rows"][0]["seconds"] = 0.0006
    assert perf_table.render_full(changed) != perf_table.render_full(run)


def test_a_page_without_its_markers_is_refused(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="run_all:full:start"):
        perf_table.write_pages(_toy_run(), {"full": page})
    assert page.read_text(encoding="utf-8") == "no markers\n"


def test_nan_time_prints_a_dash():
    assert perf_table.seconds(math.nan) == "–" and perf_table.seconds(None) == "–"
    assert perf_table.seconds(0.0123) == "12.3 ms" and perf_table.seconds(0.5) == "500 ms"
    assert perf_table.seconds(1.234) == "1.23 s"

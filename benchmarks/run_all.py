"""Every benchmark in one run and one table: the work, confeval's time, each reference's time
measured in the same run (interleaved, best of ``--repeats``), the ratio and its target.

ratio = reference time / confeval time (above 1: confeval is faster); for a row with a time
budget (judge sweep, large bootstrap, start-up) the ratio column is empty and the target is
the budget in seconds. "per call" rows loop confeval's single-answer function over the work as
the references loop over theirs; "batched" rows make one call of the batched form, against the
fastest reference's loop. The references are transcriptions of public code in
``benchmarks/peers/`` (tested equal to confeval, ``tests/benchmarks/test_peers.py``) or the
installed library itself (scikit-learn, torchmetrics). Not a pass/fail test.

    python benchmarks/run_all.py [--repeats 5] [--only measures,metrics,...] [--skip-slow]
                                 [--no-save]

Groups: measures, metrics, sweep (needs ../shared/data), bootstrap, live (the embedded model),
compare (needs ../shared/data), startup. ``--skip-slow`` leaves out sweep, bootstrap, live and
compare.

A full run (every group, no ``--only`` or ``--skip-slow``) saves its rows with the date, commit,
load and thread settings to ``benchmarks/results/run_all.json`` and rewrites the tables of
``docs/performance.md`` and the README from that file (``benchmarks/perf_table.py``), so the
published figures are always one run's; ``--no-save`` only prints.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from host_probe import host_probe
from peers import contextsl, lm_polygraph, sar, uq_nlg

from confeval import measures as MS
from confeval import metrics as M

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass
class Row:
    work: str
    seconds: float
    references: dict[str, float] = field(default_factory=dict)
    target: float | None = None        # ratio target (vs the fastest reference) ...
    budget: float | None = None        # ... or a time budget in seconds
    note: str = ""

    def ratio(self) -> float | None:
        return min(self.references.values()) / self.seconds if self.references else None

    def met(self) -> str:
        if self.budget is not None:
            return "yes" if self.seconds <= self.budget else "NO"
        if self.target is None or self.ratio() is None:
            return ""
        return "yes" if self.ratio() >= self.target else "NO"

    def as_dict(self) -> dict:
        return {"work": self.work, "seconds": self.seconds, "references": self.references,
                "target": self.target, "budget": self.budget, "note": self.note,
                "ratio": self.ratio(), "met": self.met()}


def interleaved(functions: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best time of each function over ``repeats`` rounds, the functions taking turns within
    each round (so that a noisy moment costs every contender alike)."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats):
        for name, function in functions.items():
            started = time.perf_counter()
            function()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def _compare(work: str, ours: Callable, references: dict[str, Callable], repeats: int,
             target: float | None, note: str = "") -> Row:
    times = interleaved({"confeval": ours, **references}, repeats)
    ours_s = times.pop("confeval")
    return Row(work, ours_s, times, target=target, note=note)


# ---------------------------------------------------------------------------- measures


def _similarity_data(rng, questions=1000, samples=20):
    stack = rng.random((questions, samples, samples))
    stack = (stack + stack.transpose(0, 2, 1)) / 2
    stack[:, np.arange(samples), np.arange(samples)] = 1.0
    return stack, list(stack)


def _token_data(rng, answers=10_000, heads=32):
    lps = [-rng.exponential(size=rng.integers(1, 21)) for _ in range(answers)]
    sims = [rng.random(lp.size) for lp in lps]
    relevance = [1.0 - s for s in sims]
    attention = [rng.random((heads, lp.size)) for lp in lps]
    return lps, sims, relevance, attention


def _eigh_route(route: str, function: Callable, *args):
    """``function(*args)`` with batched Ecc's ``eigh`` fixed to numpy's or torch's (by default
    torch's only when torch is imported already, which would make the row depend on which
    group ran first)."""
    from confeval.measures import similarity

    previous, similarity._EIGH_ROUTE = similarity._EIGH_ROUTE, route
    try:
        return function(*args)
    finally:
        similarity._EIGH_ROUTE = previous


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def measures_rows(repeats: int, questions: int = 1000, answers: int = 10_000) -> list[Row]:
    rng = np.random.default_rng(0)
    stack, matrices = _similarity_data(rng, questions)
    lps, sims, relevance, attention = _token_data(rng, answers)
    nll = [-lp for lp in lps]
    padded, lengths = MS.pad_ragged(lps)
    rel_padded = MS.pad_ragged(relevance)[0]
    att_padded = MS.pad_ragged(attention)[0]
    rows = []
    black_box = {
        "Deg": (MS.degree, MS.degree_batch, uq_nlg.degree, lm_polygraph.deg_mat),
        "Ecc": (MS.eccentricity, MS.eccentricity_batch, uq_nlg.eccentricity,
                lm_polygraph.eccentricity),
        "EigV": (MS.eigenvalue, MS.eigenvalue_batch, uq_nlg.eigv, lm_polygraph.eig_val_laplacian),
    }
    for name, (single, batched, uq, poly) in black_box.items():
        refs = {"UQ-NLG": lambda f=uq: [f(w) for w in matrices],
                "LM-Polygraph": lambda f=poly: [f(w) for w in matrices]}
        work = f"{name}, {questions:,} questions x 20 samples"
        rows.append(_compare(f"{work}, per call", lambda f=single: [f(w) for w in matrices],
                             refs, repeats, 1.0))
        rows.append(_compare(f"{work}, batched", lambda f=batched: _eigh_route("numpy", f, stack),
                             refs, repeats, 5.0))
        if name == "Ecc" and _torch_installed():
            import torch  # noqa: F401  (imported before the clock starts, as the note says)

            rows.append(_compare(f"{work}, batched, torch's eigh",
                                 lambda f=batched: _eigh_route("torch", f, stack), refs, repeats,
                                 5.0, note="torch imported already"))
    white_box = [
        (f"TokenSAR, {answers:,} answers",
         lambda: [MS.token_sar(lp, r) for lp, r in zip(lps, relevance)],
         lambda: MS.token_sar_batch(padded, rel_padded, lengths),
         {"LM-Polygraph": lambda: lm_polygraph.token_sar(lps, sims),
          "SAR (numpy)": lambda: sar.token_sar(nll, relevance)}),
        (f"CSL all heads, {answers:,} answers x 32 heads",
         lambda: [MS.csl(lp, a) for lp, a in zip(lps, attention)],
         lambda: MS.csl_batch(padded, att_padded, lengths),
         {"LM-Polygraph": lambda: lm_polygraph.csl(lps, attention),
          "ContextSL (numpy)": lambda: contextsl.attn_nll_all(nll, attention)}),
        (f"SL, {answers:,} answers",
         lambda: [MS.sequence_likelihood(lp) for lp in lps],
         lambda: MS.sequence_likelihood_batch(padded, lengths),
         {"LM-Polygraph": lambda: lm_polygraph.max_sequence_probability(lps)}),
    ]
    for work, single, batched, refs in white_box:
        rows.append(_compare(f"{work}, per call", single, refs, repeats, 1.0))
        rows.append(_compare(f"{work}, batched", batched, refs, repeats, 5.0))
    return rows


# ---------------------------------------------------------------------------- metrics


def metrics_rows(repeats: int, n: int = 1_000_000) -> list[Row]:
    rows_label = "10^6 rows" if n == 1_000_000 else f"{n:,} rows"
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    conf = rng.uniform(size=n)
    correct = (rng.uniform(size=n) < conf).astype(np.float64)
    rows = [
        _compare(f"AUARC, {rows_label}", lambda: M.auarc(conf, correct),
                 {"LM-Polygraph": lambda: lm_polygraph.prediction_rejection_area(-conf, correct),
                  "UQ-NLG": lambda: uq_nlg.auarc(-conf, correct)}, repeats, 1.5),
        _compare(f"AURC, {rows_label}", lambda: M.aurc(conf, 1 - correct),
                 {"LM-Polygraph": lambda: lm_polygraph.risk_coverage_auc(-conf, correct)},
                 min(repeats, 3), 1.5),
        _compare(f"PRR, {rows_label}", lambda: M.prediction_rejection_ratio(conf, correct),
                 {"LM-Polygraph": lambda: lm_polygraph.prediction_rejection_ratio(-conf,
                                                                                   correct)},
                 repeats, 1.5),
        _compare(f"AUROC, {rows_label}", lambda: M.auroc(conf, correct),
                 {"scikit-learn": lambda: roc_auc_score(correct, conf)}, repeats, None),
    ]
    try:
        import torch
        from torchmetrics.functional.classification import binary_calibration_error
    except ImportError:
        rows.append(Row(f"ECE (15 bins), {rows_label}", _time_once(
            lambda: M.expected_calibration_error(conf, correct)),
            note="torchmetrics not installed"))
    else:
        preds, target = torch.from_numpy(conf), torch.from_numpy(correct.astype(np.int64))
        rows.append(_compare(
            f"ECE (15 bins), {rows_label}", lambda: M.expected_calibration_error(conf, correct),
            {"torchmetrics": lambda: binary_calibration_error(preds, target, n_bins=15)},
            repeats, None, note="torchmetrics bins are left-closed in float32"))
    return rows


def _time_once(function: Callable) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


# ---------------------------------------------------------------------------- slow rows


def sweep_rows(repeats: int) -> list[Row]:
    features = DATA / "vlm-judge-uncertainty" / "results" / "v2" / "features_s2.csv"
    if not features.is_file():
        return [Row("judge sweep (9 methods + 3 label sets x 10 seeds)", float("nan"),
                    budget=30.0, note=f"skipped: {features} absent")]
    import pandas as pd

    from confeval.suites.intervals.scoring import DEFAULT_METHODS, score_intervals

    df = pd.read_csv(features)
    X = df[[f"s2_lp{k}" for k in range(1, 6)]].to_numpy()
    seconds = _time_once(lambda: score_intervals(X, df.gt_score.to_numpy(),
                                                 methods=DEFAULT_METHODS, seeds=range(1, 11)))
    return [Row(f"judge sweep, {len(DEFAULT_METHODS)} methods x 10 seeds, {len(df):,} items",
                seconds, budget=30.0, note=f"{os.cpu_count()} cores")]


def bootstrap_rows(repeats: int, n: int = 1_000_000, resamples: int = 1000) -> list[Row]:
    from confeval.evaluate import evaluate_confidence

    rng = np.random.default_rng(0)
    conf = rng.uniform(size=n)
    correct = (rng.uniform(size=n) < conf).astype(np.float64)
    seconds = _time_once(lambda: evaluate_confidence(conf, correct, n_resamples=resamples))
    return [Row(f"score: every metric + {resamples:,} bootstrap resamples, 10^6 rows", seconds,
                budget=60.0)]


def live_rows(repeats: int, questions: int = 10) -> list[Row]:
    from confeval.backends.local import local_backend

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from live_throughput import _time, _workloads

    backend = local_backend()
    work = _workloads(questions)["measures"]
    backend.kv_reuse, backend.batch_size = True, 8
    _time(backend, work[:2], True)
    fast, _ = _time(backend, work, True)
    backend.kv_reuse, backend.batch_size = False, 1
    slow, _ = _time(backend, work, True)
    rows = [Row(f"option injection, {questions} questions x 5 options (embedded model)", fast,
                {"one option at a time": slow}, target=3.0)]
    rows.extend(_sampling_rows(backend, work, questions))
    rows.append(_startup_row(repeats))
    return rows


def _startup_row(repeats: int) -> Row:
    """``benchmarks/live_startup.py``: a new process to its first forward pass, on our Llama
    engine against transformers (medians, the engines taking turns)."""
    import live_startup

    times = live_startup.measure(max(repeats, 5), threads=1)
    ours, theirs = (statistics.median(times[e]) for e in live_startup.ENGINES)
    return Row("live run: a new process to its first forward pass (embedded model exported, "
               "median)", ours, {"transformers engine": theirs}, budget=live_startup.TARGET)


def _sampling_rows(backend, work, questions: int) -> list[Row]:
    """A measures run's sampling: 20 answers to each question, drawn as one batch (the prompt
    once, its cache repeated) against one at a time (kv_reuse off) — the same seeded samples."""
    from confeval.backends import GenerateParams

    samples = 20
    params = GenerateParams(max_tokens=16, temperature=1.0, seed=1, stop=("\n",),
                            logprobs=True)

    def draw(together: bool):
        backend.kv_reuse = together
        for prompt, _ in work:
            asyncio.run(backend.generate(prompt, params, n=samples))
        backend.kv_reuse = True

    times = interleaved({"batched": lambda: draw(True), "loop": lambda: draw(False)}, 1)
    return [Row(f"sampling, {questions} questions x {samples} answers (embedded model)",
                times["batched"], {"one answer at a time": times["loop"]}, target=3.0)]


def compare_rows(repeats: int) -> list[Row]:
    """``benchmarks/compare_scale.py``'s call: 26 VLMs x 4,377 items, 1,000 paired resamples."""
    import compare_scale

    folder = DATA / "vlm-uncertainty-bench"
    files = compare_scale.model_files(folder) if folder.is_dir() else []
    work = "`compare --suite sets`, 26 VLMs x 4,377 items, 1,000 paired resamples"
    if len(files) < 26:
        return [Row(work, float("nan"), budget=20.0, note=f"skipped: {folder} absent")]
    seconds, _ = compare_scale.run(files[:26], 1000)
    return [Row(work, seconds, budget=20.0)]


def installed_env() -> dict[str, str]:
    """This process's environment with bytecode caching on, as after ``pip install`` (which
    compiles every module), for child processes whose start-up is timed."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def startup_rows(repeats: int) -> list[Row]:
    """``confeval --help`` and ``confeval score`` on a 500-row CSV (defaults), as a user runs
    them: the installed entry point, a new process each time, median of at least 5, after one
    untimed run. Bytecode caching is on, as after ``pip install`` (which compiles every
    module): with ``PYTHONDONTWRITEBYTECODE`` set (as on this workplace's machines) an editable
    install would compile the confeval modules it imports from source in every process, which
    no installed copy does (on 2026-11-26 --help 582 ms with it, 328 ms without)."""
    entry = Path(sys.executable).with_name("confeval")
    exe = [str(entry)] if entry.exists() else [sys.executable, "-m", "confeval.cli"]
    env = installed_env()
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "small.csv"
        rng = np.random.default_rng(0)
        conf = rng.uniform(size=500)
        lines = ["confidence,correct"] + [f"{c:.6f},{int(rng.uniform() < c)}" for c in conf]
        csv.write_text("\n".join(lines) + "\n")
        commands = {"confeval --help": ([*exe, "--help"], 0.3),
                    "confeval score, a 500-row CSV": ([*exe, "score", str(csv), "-c", "confidence",
                                                        "-y", "correct"], 0.8)}
        rows = []
        for work, (argv, budget) in commands.items():
            subprocess.run(argv, capture_output=True, check=True, cwd=tmp, env=env)
            times = []
            for _ in range(max(repeats, 5)):
                started = time.perf_counter()
                subprocess.run(argv, capture_output=True, check=True, cwd=tmp, env=env)
                times.append(time.perf_counter() - started)
            rows.append(Row(f"{work} (median)", statistics.median(times), budget=budget))
        return rows


GROUPS = {"measures": measures_rows, "metrics": metrics_rows, "sweep": sweep_rows,
          "bootstrap": bootstrap_rows, "live": live_rows, "compare": compare_rows,
          "startup": startup_rows}
SLOW = ("sweep", "bootstrap", "live", "compare")


def _seconds(s: float) -> str:
    if s != s:
        return "–"
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def print_table(rows: list[Row]) -> None:
    print(f"{'work':58s} {'confeval':>10s}  {'reference(s)':34s} {'ratio':>6s} "
          f"{'target':>7s} {'met':>4s}")
    for r in rows:
        refs = ", ".join(f"{k} {_seconds(v)}" for k, v in r.references.items())
        ratio = r.ratio()
        target = (f"<= {r.budget:g} s" if r.budget is not None
                  else f">= {r.target:g}" if r.target is not None else "")
        print(f"{r.work:58s} {_seconds(r.seconds):>10s}  {refs:34s} "
              f"{'' if ratio is None else f'{ratio:.2f}':>6s} {target:>7s} {r.met():>4s}"
              + (f"  ({r.note})" if r.note else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated groups: "
                        + ", ".join(GROUPS))
    parser.add_argument("--skip-slow", action="store_true",
                        help=f"leave out {', '.join(SLOW)}")
    parser.add_argument("--no-save", action="store_true",
                        help="print only; a full run otherwise saves and rewrites the tables")
    args = parser.parse_args()
    chosen = [g for g in (args.only.split(",") if args.only else GROUPS) if g]
    unknown = [g for g in chosen if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {unknown}; choose from {', '.join(GROUPS)}")
    if args.skip_slow:
        chosen = [g for g in chosen if g not in SLOW]
    load_before = os.getloadavg()[0]
    probe = {"before": host_probe(), "both_before": host_probe_on_every_core()}
    rows: list[Row] = []
    for group in chosen:
        rows.extend(GROUPS[group](args.repeats))
    probe.update(after=host_probe(), both_after=host_probe_on_every_core())
    print(f"confeval benchmarks on {os.cpu_count()} cores, best of {args.repeats} interleaved "
          "(ratio = reference / confeval; above 1 = confeval faster)")
    print_table(rows)
    print(f"host probe: {probe['before'] * 1e3:.0f} ms before, {probe['after'] * 1e3:.0f} ms "
          f"after; on every core at once {probe['both_before'] * 1e3:.0f} ms before, "
          f"{probe['both_after'] * 1e3:.0f} ms after")
    if chosen == list(GROUPS) and not args.no_save:
        save(rows, args.repeats, load_before, probe)


def host_probe_on_every_core() -> float:
    """:func:`host_probe` in one new process per core (each held on its core where the
    system allows), all starting at the same moment; the slowest one's seconds. The one-process
    probe can read quiet while another core is taken by a neighbour: on 2026-11-27 a run with
    that probe at 43 and 47 ms had its two-core rows ~25% slower than runs minutes apart, and
    the same loop held on each core in turn took a steady ~44 ms on the first and 36-125 ms on
    the second. This probe sees that."""
    script = str(Path(__file__).with_name("host_probe.py"))
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        list(range(os.cpu_count() or 1))
    start_at = f"{time.time() + 1.0:.6f}"   # after every child has imported numpy
    children = [subprocess.Popen([sys.executable, script, "--start-at", start_at,
                                  "--core", str(core)],
                                 stdout=subprocess.PIPE, text=True) for core in cores]
    return max(float(child.communicate()[0]) for child in children)


def _commit() -> str:
    """The commit measured, marked ``+changes`` when the work tree differs from it."""
    repo = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=repo, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty.strip() else "")


def save(rows: list[Row], repeats: int, load_before: float, probe: dict[str, float]) -> None:
    """Save the full run and rewrite the pages' tables from it (``perf_table.py``)."""
    import perf_table

    run = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "commit": _commit(), "cores": os.cpu_count(), "repeats": repeats,
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "load": {"before": load_before, "after": os.getloadavg()[0]}, "probe": probe,
           "groups": list(GROUPS), "rows": [r.as_dict() for r in rows]}
    perf_table.RESULTS.parent.mkdir(exist_ok=True)
    perf_table.RESULTS.write_text(json.dumps(run, indent=1, allow_nan=True) + "\n",
                                  encoding="utf-8")
    perf_table.write_pages(run)
    print(f"saved {perf_table.RESULTS} and rewrote the tables of docs/performance.md and "
          "README.md")


if __name__ == "__main__":
    main()

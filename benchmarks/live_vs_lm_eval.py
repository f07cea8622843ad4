"""Live option scoring, confeval against lm-evaluation-harness (issue 41): the same exported
embedded model folder (``confeval.backends.local.export_dir()``), the same questions and
prompts, the same thread count, each tool end to end in its own process (start-up, model
load, scoring), the two run interleaved.

* **Questions**: CommonsenseQA dev (``../shared/data/commonsenseqa``, see its README) when
  present, else confeval's built-in ``arith-mc`` task. Prompt: the measures suite's free-form
  prompt (``GENERATION_PROMPT``, ending ``A:``); each option scored as the continuation
  ``" " + option`` — lm-eval's ``multiple_choice`` with its default target delimiter ``" "``.
* **confeval**: the live runner every ``confeval SUITE run`` goes through
  (``confeval.verbs.run.run_suite``: a run folder, items in flight, their scoring calls
  gathered so that several questions share a forward pass, each question's options packed after
  its prompt; records.jsonl, metrics.json, report.html), on ``local_backend(threads=T)`` as
  ``--threads T`` loads it, without the response cache; one item per question whose
  ``run_item`` scores its options (``backend.score_tokens``).
* **lm-eval**: ``lm_eval --model hf`` (``pretrained=<export folder>,dtype=float32``) on a local
  task written here, ``OMP_NUM_THREADS=MKL_NUM_THREADS=T``, at its best batch size: every
  ``--lm-eval-batch-sizes`` candidate is run on the first size and the fastest in CPU time is
  used for all sizes (``--lm-eval-batch-size`` fixes it). lm-eval comes from the python of
  ``--lm-eval-python``, else ``$CONFEVAL_LM_EVAL_PYTHON``, else ``/tmp/lmeval-venv/bin/python``
  or this python (``pip install 'confeval[lm-eval]'``); where lm-eval is absent the benchmark
  says where it looked and times confeval alone.
* **Agreement**: every option's log-likelihood from both tools, compared at float32 tolerance
  (|a - b| <= 1e-5 + 1e-5 |b|), printed per size.
* **Speed**: questions per CPU-second (user + system time of the tool's process and its
  children, from ``wait4``) and per wall-second. ``ratio`` = confeval's questions per
  CPU-second / lm-eval's at the largest size (= lm-eval's CPU time / confeval's): above 1
  confeval is faster. The last line is ``ratio: X``.

    python benchmarks/live_vs_lm_eval.py [--sizes 50 500] [--threads 2] [--repeats 1]

Run fully (50 and 500 questions, the batch-size sweep) it takes 15-45 minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CQA = ROOT.parent / "shared" / "data" / "commonsenseqa" / "dev_rand_split.jsonl"
DEFAULT_LM_EVAL_PYTHON = "/tmp/lmeval-venv/bin/python"
REL = ABS = 1e-5   # float32 tolerance (tests/float32.py)
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

TASK_YAML = """\
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    validation: {data}
validation_split: validation
output_type: multiple_choice
doc_to_text: "{{{{prompt}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{label}}}}"
metric_list:
  - metric: acc
"""


# ---------------------------------------------------------------------------- the questions
def questions(n: int) -> tuple[list[dict], str]:
    """``n`` questions ``{id, prompt, choices, label}`` and where they come from."""
    sys.path.insert(0, str(ROOT / "src"))
    from confeval.suites._multiple_choice import load_mc_items
    from confeval.suites.measures.live import GENERATION_PROMPT

    source = str(CQA) if CQA.is_file() else "builtin:arith-mc"
    items = load_mc_items(source, n)
    if len(items) < n:
        raise SystemExit(f"{source} holds {len(items)} askable questions, fewer than {n}")
    return [{"id": str(it["item_id"]), "prompt": GENERATION_PROMPT.format(
        question=it["question"]), "choices": [str(o).strip() for o in it["options"]],
        "label": it["letters"].index(it["answer"])} for it in items], source


def write_task(folder: Path, qs: list[dict]) -> str:
    """The questions as lm-eval reads a local task; its name."""
    name = f"confeval_live_{len(qs)}"
    data = folder / f"{name}.jsonl"
    data.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    (folder / f"{name}.yaml").write_text(TASK_YAML.format(name=name, data=data))
    return name


# ---------------------------------------------------------------------------- one run
def timed(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """Run ``cmd``; its (CPU seconds of the process and its children, wall seconds,
    stderr's tail)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        err.seek(0)
        tail = err.read().decode(errors="replace")[-3000:]
    if proc.returncode:
        raise SystemExit(f"{cmd[0]} ... failed ({proc.returncode}):\n{tail}")
    return usage.ru_utime + usage.ru_stime, wall, tail


def run_confeval(qs_file: Path, out: Path, threads: int, env: dict) -> tuple[float, float]:
    return timed([sys.executable, __file__, "--worker", str(qs_file), str(out),
                  "--threads", str(threads)], env)[:2]


def run_lm_eval(python: str, model: Path, tasks: Path, task: str, batch: int, out: Path,
                env: dict) -> tuple[float, float]:
    cpu, wall, _ = timed([python, "-m", "lm_eval", "--model", "hf", "--model_args",
                          f"pretrained={model},dtype=float32", "--tasks", task,
                          "--include_path", str(tasks), "--device", "cpu", "--batch_size",
                          str(batch), "--log_samples", "--output_path", str(out)], env)
    return cpu, wall


def lm_eval_loglikelihoods(out: Path) -> dict[str, list[float]]:
    """Per question id, the options' log-likelihoods lm-eval logged."""
    found = sorted(out.rglob("samples_*.jsonl"))
    if not found:
        raise SystemExit(f"lm-eval wrote no samples file under {out}")
    result = {}
    for line in found[-1].read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        result[str(sample["doc"]["id"])] = [float(r[0][0]) for r in sample["resps"]]
    return result


def worker(qs_file: str, out: str, threads: int) -> None:
    """confeval's side, in its own process: load the embedded model, score every question's
    options through the live runner (a run folder under ``out``'s folder), write the
    log-likelihoods."""
    sys.path.insert(0, str(ROOT / "src"))
    from confeval.backends import raw_prompt
    from confeval.backends.local import local_backend
    from confeval.suites.base import LiveSuite
    from confeval.verbs.run import run_suite

    class OptionScoring(LiveSuite):
        """One record per question: the log-likelihood of each option (``" " + option``)
        after the question's prompt, as lm-eval's ``multiple_choice`` scores it."""

        name = "option-scoring"

        def needs(self, backend, options):
            return ["token_scores"]

        def load_items(self, data, n, seed, *, image_root=None):
            raise NotImplementedError("the benchmark gives its items")

        async def run_item(self, item, backend, options):
            scored = await backend.score_tokens(raw_prompt(item["prompt"]),
                                                [" " + c for c in item["choices"]])
            return {"item_id": item["item_id"], "status": "ok", "reason": None,
                    "loglikelihoods": [sum(s.logprobs) for s in scored]}

        def score(self, records, options, model_name):
            return {"title": f"option scoring — {model_name}", "simulated": False,
                    "n_records": len(records), "sections": []}

    qs = [json.loads(line) for line in Path(qs_file).read_text(encoding="utf-8").splitlines()]
    backend = local_backend(threads=threads)
    items = [{"item_id": q["id"], "prompt": q["prompt"], "choices": q["choices"]} for q in qs]
    run_dir = Path(out).with_suffix(".run")
    shutil.rmtree(run_dir, ignore_errors=True)   # a fresh run each time (never resumed)
    result = run_suite(OptionScoring(), backend, items, run_dir, model_name="local")
    if result.failures or result.n_new != len(items):
        raise SystemExit(f"the run failed on {len(result.failures)} question(s): "
                         f"{result.failures[:3]}")
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text(
        encoding="utf-8").splitlines()]
    Path(out).write_text(json.dumps({r["item_id"]: r["loglikelihoods"] for r in records}),
                         encoding="utf-8")


# ---------------------------------------------------------------------------- comparison
def agreement(ours: dict, theirs: dict) -> tuple[int, int, float]:
    """(options within float32 tolerance, options compared, largest |difference|)."""
    within = total = 0
    largest = 0.0
    for key, values in ours.items():
        for a, b in zip(values, theirs[key]):
            total += 1
            diff = abs(a - b)
            largest = max(largest, diff)
            within += diff <= ABS + REL * abs(b)
    return within, total, largest


def find_lm_eval(given: str | None) -> tuple[str | None, str]:
    """The python that runs lm_eval, and where it was looked for: only the one named by
    ``--lm-eval-python`` or ``$CONFEVAL_LM_EVAL_PYTHON`` when one is, else the default
    environment and this python."""
    named = given or os.environ.get("CONFEVAL_LM_EVAL_PYTHON")
    candidates = [named] if named else [DEFAULT_LM_EVAL_PYTHON, sys.executable]
    for python in candidates:
        if shutil.which(python) or Path(python).is_file():
            probe = subprocess.run([python, "-c", "import lm_eval"], capture_output=True)
            if probe.returncode == 0:
                return python, ""
    return None, ", ".join(candidates)


def load() -> str:
    try:
        return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "load average unknown"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads of both tools (default: the usable cores)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each tool per size (the fastest in CPU time is kept)")
    parser.add_argument("--lm-eval-python", default=None)
    parser.add_argument("--lm-eval-batch-size", type=int, default=None)
    parser.add_argument("--lm-eval-batch-sizes", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--worker", nargs=2, metavar=("QUESTIONS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker, args.threads or 1)
        return
    sys.path.insert(0, str(ROOT / "src"))
    from confeval._threads import usable_cores
    from confeval.backends.local import export_dir, local_backend

    threads = args.threads or usable_cores()
    model = export_dir()
    if not (model / "config.json").is_file():
        local_backend(threads=1)   # exports the embedded model once
    env = {**os.environ, **OFFLINE, "OMP_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads)}
    python, looked = find_lm_eval(args.lm_eval_python)
    sizes = sorted(args.sizes)
    all_qs, source = questions(sizes[-1])
    print(f"model {model}; {source}; {threads} thread(s) each; {load()}")
    if python is None:
        print(f"lm-eval is absent: no 'import lm_eval' in {looked} (pip install "
              "'confeval[lm-eval]', or --lm-eval-python / CONFEVAL_LM_EVAL_PYTHON naming a "
              "python that has it); timing confeval alone")
    ratio = math.nan
    with tempfile.TemporaryDirectory(prefix="confeval-vs-lmeval-") as tmp:
        tmp = Path(tmp)
        batch = args.lm_eval_batch_size
        for k, n in enumerate(sizes):
            qs = all_qs[:n]
            folder = tmp / f"n{n}"
            folder.mkdir()
            task = write_task(folder, qs)
            qs_file = folder / "questions.jsonl"
            qs_file.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
            if python is not None and batch is None:
                sweep = {}
                for b in args.lm_eval_batch_sizes:
                    sweep[b] = run_lm_eval(python, model, folder, task, b,
                                           folder / f"sweep{b}", env)
                batch = min(sweep, key=lambda b: sweep[b][0])
                print(f"lm-eval batch sizes at {n} questions (CPU s): " + ", ".join(
                    f"{b}: {c:.1f}" for b, (c, _) in sweep.items()) + f" -> {batch}")
            ours, theirs = [], []
            for r in range(args.repeats):
                # interleaved: the order alternates between repeats and sizes
                order = ["confeval", "lm-eval"] if (r + k) % 2 == 0 else ["lm-eval", "confeval"]
                for tool in order:
                    if tool == "confeval":
                        ours.append((*run_confeval(qs_file, folder / "confeval.json",
                                                   threads, env), load()))
                    elif python is not None:
                        out = folder / f"lm_eval{r}"
                        theirs.append((*run_lm_eval(python, model, folder, task, batch,
                                                    out, env), load()))
            cpu, wall, when = min(ours)
            print(f"{n} questions: confeval {n / cpu:.2f} questions/CPU-s, {n / wall:.2f} "
                  f"questions/wall-s ({cpu:.1f} CPU s, {wall:.1f} s; {when})")
            if python is None:
                continue
            their_cpu, their_wall, when = min(theirs)
            print(f"{n} questions: lm-eval (batch size {batch}) {n / their_cpu:.2f} "
                  f"questions/CPU-s, {n / their_wall:.2f} questions/wall-s ({their_cpu:.1f} "
                  f"CPU s, {their_wall:.1f} s; {when})")
            within, total, largest = agreement(
                json.loads((folder / "confeval.json").read_text(encoding="utf-8")),
                lm_eval_loglikelihoods(folder / f"lm_eval{args.repeats - 1}"))
            print(f"{n} questions: log-likelihoods within float32 tolerance (1e-5 + 1e-5 "
                  f"|x|) for {within} of {total} options; largest difference {largest:.1e}")
            ratio = their_cpu / cpu
            print(f"{n} questions: confeval/lm-eval speed ratio, CPU {ratio:.2f}, wall "
                  f"{their_wall / wall:.2f}")
    print(f"ratio = confeval's questions per CPU-second / lm-eval's at {sizes[-1]} questions "
          "(> 1: confeval faster)")
    print(f"ratio: {ratio:.2f}" if python is not None else "ratio: unavailable (lm-eval absent)")


if __name__ == "__main__":
    main()

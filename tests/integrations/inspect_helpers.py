"""What the Inspect tests share: the fixture logs, the numbers a scored log reports, and a
seeded multiple-choice task answered by Inspect's mock model with log-probabilities."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
MC_LOG = ROOT / "tests" / "fixtures" / "ingest" / "inspect" / "arith_mc.eval"
"""Inspect 0.3.285 on the embedded model, choice(): every verdict wrong (the small model does
not write "ANSWER: X"), letters read from the log-probabilities."""
GEN_LOG = ROOT / "tests" / "fixtures" / "integrations" / "inspect" / "arith_gen.eval"
"""Inspect 0.3.285 with confeval's scorer on the embedded model (make_fixtures.py
--inspect-confidence-python): pattern(), then confeval/confidence answer_logprobs and
verbalised."""
TOL = 1e-12
NAMES = ("ece", "brier", "auroc", "auarc")
"""The metrics ``confeval score`` reports with an interval."""


def reported(log, scorer: str) -> dict[str, float]:
    """The metrics Inspect recorded for ``scorer`` in a log's results."""
    for score in log.results.scores:
        if score.name == scorer:
            return {name: m.value for name, m in score.metrics.items()}
    raise AssertionError(f"no scorer {scorer} in {[s.name for s in log.results.scores]}")


def same(got, want) -> bool:
    """Equal to TOL, or both undefined (NaN in Inspect, None in confeval's JSON)."""
    undefined = (want is None or (isinstance(want, float) and math.isnan(want)))
    if undefined:
        return got is None or math.isnan(got)
    return got is not None and abs(got - want) <= TOL


def assert_matches_confeval_score(metrics: dict, results: dict, names=NAMES,
                                  intervals: bool = True) -> None:
    """Each metric's value (and interval) reported by Inspect (``{ece, ece_low, ...}``, or
    results of confeval's own with their ``ci``) equals ``confeval score``'s."""
    for name in names:
        assert same(metrics.get(name), results[name]), (name, metrics.get(name),
                                                        results[name])
        if intervals:
            ci = results["ci"][name]
            for end in ("low", "high"):
                got = metrics["ci"][name][end] if "ci" in metrics else \
                    metrics.get(f"{name}_{end}")
                assert same(got, ci[end]), (name, end, got, ci)


def mock_mc_task(n: int = 24, seed: int = 7):
    """A multiple-choice task of ``n`` three-option questions, and the mock model's replies
    ("ANSWER: X", the letter token with the three letters' log-probabilities), drawn from
    ``seed``: the letter answered is the most likely one, and the gold letter is that one with
    probability 0.65, else drawn at random."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        Logprob,
        Logprobs,
        ModelOutput,
        ModelUsage,
        TopLogprob,
    )
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    from confeval.integrations.inspect_registry import confidence

    rng = np.random.default_rng(seed)
    samples, outputs = [], []
    for k in range(n):
        logits = rng.normal(0, 1.5, 3)
        lp = logits - np.log(np.exp(logits).sum())
        top = int(np.argmax(lp))
        gold = top if rng.random() < 0.65 else int(rng.integers(3))
        samples.append(Sample(input=f"Question {k}?", choices=["one", "two", "three"],
                              target="ABC"[gold], id=f"q{k}"))
        letter = "ABC"[top]
        tops = [TopLogprob(token=f" {L}", logprob=float(v)) for L, v in zip("ABC", lp)]
        tokens = [Logprob(token="ANSWER", logprob=-0.01), Logprob(token=":", logprob=-0.01),
                  Logprob(token=f" {letter}", logprob=float(lp[top]), top_logprobs=tops)]
        outputs.append(ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(
            message=ChatMessageAssistant(content=f"ANSWER: {letter}"),
            logprobs=Logprobs(content=tokens))],
            # given, or the mock model counts tokens with tiktoken, which downloads its table
            usage=ModelUsage(input_tokens=20, output_tokens=3, total_tokens=23)))
    task = Task(dataset=samples, solver=multiple_choice(),
                scorer=[choice(), confidence(method="letters")])
    return task, outputs

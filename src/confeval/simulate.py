"""A seeded simulator of judge and model behaviours — SIMULATED data, clearly labelled.

It lets every suite run (the demo, tests, coverage checks) without a model or a data download,
and lets users see what a calibrated, an overconfident or a score-compressing judge looks like
under each metric. Every generator takes ``seed`` and uses only its own
``numpy.random.default_rng(seed)``. Each record carries ``simulated = True``.

Generators and their behaviours
-------------------------------
``confidence`` — a binary-correctness confidence per answer (LLM confidence, P(true), a
judge's P(correct)). A latent probability of being right ``q ~ Beta(a, b)`` draws
``correct ~ Bernoulli(q)``; the reported confidence is ``sigmoid(sharpness * logit(q) + shift)``:

* ``calibrated``: sharpness 1, shift 0 (reported = q, calibrated by construction);
* ``overconfident``: sharpness 2.5, shift 1.0 (pushed towards 1);
* ``underconfident``: sharpness 0.4, shift 0 (squeezed towards 0.5);
* ``uninformative``: confidence drawn independently of correctness (AUROC 0.5).

``step`` (optional) rounds confidences to a verbalised grid (e.g. 0.05), a first-class case.

``scores`` — a judge rating on a K-point scale (default 1..5) with score-token log-probs. The
judge's belief over scores is a discretised Gaussian (centre ``m ~ U(0.5, K + 0.5)``, width
``s ~ U(0.5, 1.2)``); the human score is drawn from that belief, so the belief is calibrated
by construction. The reported distribution is:

* ``calibrated``: the belief itself;
* ``overconfident``: the belief at temperature 0.25 (peaked on its mode);
* ``compressing``: the belief re-centred at ``c + 0.4 (m - c)``, c the scale midpoint — the
  judge squeezes its scores towards the middle (a "score-compressing" judge).

Columns: ``item_id, gt_score, score_lp1..score_lpK`` (natural-log probabilities),
``parsed_score`` (the arg-max score), ``simulated``.

``steps`` — a process judge's P(correct) for every step of a reasoning chain, in the record
format of the ``steps`` suite (``item_id, step, variant, p_correct, label, error_type,
difficulty``). Steps are wrong with a probability that grows with difficulty; a wrong step
gets one of the seven ConfProBench error types. The judge's latent logit is
``2 - 4 d_t + noise`` for an error of type t (detectability ``d_t`` in ``ERROR_TYPES``) and
``2 + noise`` for a correct step; ``p_correct`` is verbalised to 0.01 steps in [0.01, 0.99].
This ``typical`` judge discriminates well but is *not* calibrated by construction (it is
underconfident on hard-to-detect errors' neighbours and overconfident on subtle errors).
Perturbed variants (``lexical``, ``syntactic``) repeat the same steps with logit jitter of
s.d. 0.25 and 0.5, and a 5% chance of a large jump (s.d. 2) — a judge whose confidence is not
fully robust. ``overconfident`` adds 1.5 to every logit.

``mcq`` — option-letter logits for multiple-choice questions (``answer, category,
logit_A..``). The true answer distribution is Dirichlet (concentration by category: easy 0.3,
medium 0.6, hard 1.2); the gold letter is drawn from it. Logits are ``log(p) * sharpness`` with
sharpness 1 (calibrated), 3 (overconfident) or 0.5 (underconfident).

``reruns`` — a judge rated k times on the same items (for ``confeval judge reruns``). The
belief and the human score are those of ``scores``; each rerun samples a score from the
reported distribution (``rerun_1..rerun_k``), as a judge sampling its score token at
temperature 1 would:

* ``sampling``: the belief itself (calibrated), sampled;
* ``overconfident``: the belief at temperature 0.25, sampled (few flips, overconfident);
* ``deterministic``: the arg-max every time (temperature 0: no flip).

``pairwise`` — a judge comparing answers A and B of each item in both orders (for
``confeval judge position``). Answer qualities ``q ~ N(0, 1)``; the human prefers the better.
In each order the judge picks the first slot with probability
``p1 = rho + (1 - rho) * sigmoid(2 (q_first - q_second) + v (words_first - words_second) / 20)``
and states the probability of its pick (``p1`` or ``1 - p1``, its logit plus N(0, 0.3^2)
noise) as its confidence:

* ``unbiased``: ``rho = 0``, ``v = 0`` (first-slot preference exactly 1/2);
* ``first-slot``: ``rho = 0.3`` (first-slot preference 0.3 + 0.7 / 2 = 0.65);
* ``verbose``: ``v = 1`` (prefers the longer answer, whatever its slot).

Columns: ``item_id, question, answer_a, answer_b, human, verdict_ab, verdict_ba, conf_ab,
conf_ba, simulated``; verdicts name the answer (``a``/``b``).

``lengths`` — a judge's 1-5 score of answers of varied length (for ``confeval judge
length``). The human score ``h`` is uniform on 1..5; the answer has ``30 + 20 h + N(0, 40)``
words (the humans' better answers are a little longer); the judge's score is ``h`` plus
noise, rounded and clipped, and its confidence a sigmoid of its closeness to ``h``:

* ``unbiased``: length adds nothing at a fixed human score;
* ``verbose``: the judge adds 0.5 points, and 0.5 to the logit of its confidence, per 100
  words above the mean.

Columns: ``item_id, gt_score, judge_score, confidence, answer, words, simulated``.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd
from scipy.special import expit, log_softmax, logit

from ._registry import Registry
from .taxonomy import error_types

__all__ = ["BEHAVIOURS", "ERROR_TYPES", "simulate", "simulate_confidence", "simulate_lengths",
           "simulate_mcq", "simulate_pairwise", "simulate_reruns", "simulate_scores",
           "simulate_steps"]

ERROR_TYPES: dict[str, float] = {
    "numerical_calculation": 0.9,
    "symbolic_calculation": 0.6,
    "reasoning": 0.5,
    "knowledge": 0.45,
    "visual_interpretation": 0.2,
    "question_understanding": 0.55,
    "no_solution_provided": 1.0,
}
"""The seven ConfProBench error types (:mod:`confeval.taxonomy`) with the simulated judge's
detectability (0..1); the order fixes the seeded draws."""
assert set(ERROR_TYPES) == set(error_types("confprobench"))

_CONFIDENCE = {"calibrated": (1.0, 0.0), "overconfident": (2.5, 1.0),
               "underconfident": (0.4, 0.0), "uninformative": (None, None)}
_SCORES = ("calibrated", "overconfident", "compressing")
_STEPS = ("typical", "overconfident")
_MCQ = {"calibrated": 1.0, "overconfident": 3.0, "underconfident": 0.5}

_RERUNS = {"sampling": 1.0, "overconfident": 0.25, "deterministic": 0.0}
_PAIRWISE = {"unbiased": (0.0, 0.0), "first-slot": (0.3, 0.0), "verbose": (0.0, 1.0)}
_LENGTHS = {"unbiased": 0.0, "verbose": 0.5}

BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "confidence": tuple(_CONFIDENCE), "scores": _SCORES, "steps": _STEPS, "mcq": tuple(_MCQ),
    "reruns": tuple(_RERUNS), "pairwise": tuple(_PAIRWISE), "lengths": tuple(_LENGTHS),
}


def _check(kind: str, behaviour: str, n: int) -> None:
    if behaviour not in BEHAVIOURS[kind]:
        raise ValueError(f"unknown {kind} behaviour {behaviour!r}; "
                         f"choose one of {', '.join(BEHAVIOURS[kind])}")
    if n < 1:
        raise ValueError("n must be at least 1")


def simulate_confidence(n: int = 2000, behaviour: str = "calibrated", *, seed: int = 0,
                        a: float = 4.0, b: float = 2.0, step: float | None = None
                        ) -> pd.DataFrame:
    """Simulated answers with a confidence and binary correctness (see module docstring)."""
    _check("confidence", behaviour, n)
    rng = np.random.default_rng(seed)
    q = np.clip(rng.beta(a, b, size=n), 1e-6, 1 - 1e-6)
    correct = (rng.uniform(size=n) < q).astype(np.int64)
    sharpness, shift = _CONFIDENCE[behaviour]
    if sharpness is None:
        conf = rng.beta(a, b, size=n)
    else:
        conf = expit(sharpness * logit(q) + shift)
    if step:
        conf = np.clip(np.round(conf / step) * step, 0.0, 1.0)
    return pd.DataFrame({"item_id": np.arange(n), "confidence": conf, "correct": correct,
                         "simulated": True})


def simulate_scores(n: int = 2000, behaviour: str = "calibrated", *, seed: int = 0,
                    n_levels: int = 5) -> pd.DataFrame:
    """Simulated judge ratings with score-token log-probabilities (see module docstring)."""
    _check("scores", behaviour, n)
    if n_levels < 2:
        raise ValueError("n_levels must be at least 2")
    rng = np.random.default_rng(seed)
    levels = np.arange(1, n_levels + 1, dtype=np.float64)
    centre = rng.uniform(0.5, n_levels + 0.5, size=n)
    width = rng.uniform(0.5, 1.2, size=n)
    belief = log_softmax(-((levels - centre[:, None]) ** 2) / (2 * width[:, None] ** 2), axis=1)
    cum = np.cumsum(np.exp(belief), axis=1)
    gt = 1 + (rng.uniform(size=(n, 1)) * cum[:, -1:] > cum).sum(axis=1)
    if behaviour == "overconfident":
        reported = log_softmax(belief / 0.25, axis=1)
    elif behaviour == "compressing":
        mid = (n_levels + 1) / 2
        squeezed = mid + 0.4 * (centre - mid)
        reported = log_softmax(-((levels - squeezed[:, None]) ** 2)
                               / (2 * width[:, None] ** 2), axis=1)
    else:
        reported = belief
    frame = pd.DataFrame({"item_id": np.arange(n), "gt_score": gt.astype(np.int64)})
    for k in range(n_levels):
        frame[f"score_lp{k + 1}"] = reported[:, k]
    frame["parsed_score"] = reported.argmax(axis=1) + 1
    frame["simulated"] = True
    return frame


def simulate_steps(n_items: int = 300, behaviour: str = "typical", *, seed: int = 0,
                   perturbations: tuple[str, ...] = ("lexical", "syntactic")) -> pd.DataFrame:
    """Simulated step-level judge records, original and perturbed (see module docstring)."""
    _check("steps", behaviour, n_items)
    jitter = {"lexical": 0.25, "syntactic": 0.5}
    unknown = [p for p in perturbations if p not in jitter]
    if unknown:
        raise ValueError(f"unknown perturbation(s) {unknown}; choose from {list(jitter)}")
    rng = np.random.default_rng(seed)
    difficulties = np.array(["middle_school", "high_school", "competition"])
    error_rate = np.array([0.12, 0.2, 0.3])
    n_steps = rng.integers(3, 8, size=n_items)
    item = np.repeat(np.arange(n_items), n_steps)
    step = np.arange(item.size) - np.repeat(np.cumsum(n_steps) - n_steps, n_steps)
    level = np.repeat(rng.integers(0, 3, size=n_items), n_steps)
    wrong = rng.uniform(size=item.size) < error_rate[level]
    types = np.array(list(ERROR_TYPES))
    type_idx = rng.integers(0, types.size, size=item.size)
    detect = np.array(list(ERROR_TYPES.values()))[type_idx]
    latent = np.where(wrong, 2.0 - 4.0 * detect, 2.0) + rng.normal(size=item.size)
    if behaviour == "overconfident":
        latent = latent + 1.5

    def verbalise(z):
        return np.clip(np.round(expit(z) * 100) / 100, 0.01, 0.99)

    base = pd.DataFrame({
        "item_id": item, "step": step, "variant": "original",
        "label": np.where(wrong, 0, 1), "error_type": np.where(wrong, types[type_idx], ""),
        "difficulty": difficulties[level], "simulated": True,
    })
    frames = [base.assign(p_correct=verbalise(latent))]
    for name in perturbations:
        jump = rng.uniform(size=item.size) < 0.05
        delta = rng.normal(scale=jitter[name], size=item.size)
        delta = np.where(jump, rng.normal(scale=2.0, size=item.size), delta)
        frames.append(base.assign(variant=name, p_correct=verbalise(latent + delta)))
    cols = ["item_id", "step", "variant", "p_correct", "label", "error_type", "difficulty",
            "simulated"]
    return pd.concat(frames, ignore_index=True)[cols]


def simulate_mcq(n: int = 2000, behaviour: str = "calibrated", *, seed: int = 0,
                 n_options: int = 4) -> pd.DataFrame:
    """Simulated option-letter logits for multiple-choice questions (see module docstring)."""
    _check("mcq", behaviour, n)
    if not 2 <= n_options <= 26:
        raise ValueError("n_options must be between 2 and 26")
    rng = np.random.default_rng(seed)
    categories = np.array(["easy", "medium", "hard"])
    concentration = np.array([0.3, 0.6, 1.2])
    cat = rng.integers(0, 3, size=n)
    # Dirichlet(alpha) as normalised Gamma draws, vectorised over rows with per-row alpha.
    gam = rng.gamma(concentration[cat][:, None], size=(n, n_options)) + 1e-12
    p = gam / gam.sum(axis=1, keepdims=True)
    cum = np.cumsum(p, axis=1)
    answer = np.minimum((rng.uniform(size=(n, 1)) > cum).sum(axis=1), n_options - 1)
    letters = np.array(list(string.ascii_uppercase[:n_options]))
    frame = pd.DataFrame({"item_id": np.arange(n), "answer": letters[answer],
                          "category": categories[cat]})
    logits = np.log(p) * _MCQ[behaviour]
    for k, letter in enumerate(letters):
        frame[f"logit_{letter}"] = logits[:, k]
    frame["simulated"] = True
    return frame


def _belief(rng: np.random.Generator, n: int, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``scores`` judge's log-belief over the levels and the human score drawn from it."""
    levels = np.arange(1, n_levels + 1, dtype=np.float64)
    centre = rng.uniform(0.5, n_levels + 0.5, size=n)
    width = rng.uniform(0.5, 1.2, size=n)
    belief = log_softmax(-((levels - centre[:, None]) ** 2) / (2 * width[:, None] ** 2), axis=1)
    cum = np.cumsum(np.exp(belief), axis=1)
    gt = 1 + (rng.uniform(size=(n, 1)) * cum[:, -1:] > cum).sum(axis=1)
    return belief, gt


def simulate_reruns(n: int = 500, behaviour: str = "sampling", *, seed: int = 0,
                    k: int = 5, n_levels: int = 5) -> pd.DataFrame:
    """Simulated reruns of a judge on the same items (see module docstring)."""
    _check("reruns", behaviour, n)
    if k < 2 or n_levels < 2:
        raise ValueError("k and n_levels must be at least 2")
    rng = np.random.default_rng(seed)
    belief, gt = _belief(rng, n, n_levels)
    temperature = _RERUNS[behaviour]
    reported = log_softmax(belief / temperature, axis=1) if temperature else belief
    frame = pd.DataFrame({"item_id": np.arange(n), "gt_score": gt.astype(np.int64)})
    for j in range(n_levels):
        frame[f"score_lp{j + 1}"] = reported[:, j]
    if temperature:
        cum = np.cumsum(np.exp(reported), axis=1)
        draws = rng.uniform(size=(n, k, 1)) * cum[:, None, -1:]
        reruns = 1 + (draws > cum[:, None, :]).sum(axis=2)
    else:
        reruns = np.repeat(reported.argmax(axis=1)[:, None] + 1, k, axis=1)
    for r in range(k):
        frame[f"rerun_{r + 1}"] = reruns[:, r].astype(np.int64)
    frame["simulated"] = True
    return frame


_FILLER = ("note", "that", "the", "result", "follows", "from", "each", "step", "above",
           "so", "we", "check", "it", "again", "carefully")


def _words(rng: np.random.Generator, count: int) -> str:
    return " ".join(rng.choice(_FILLER, size=max(0, int(count))).tolist())


def simulate_pairwise(n: int = 500, behaviour: str = "unbiased", *, seed: int = 0
                      ) -> pd.DataFrame:
    """Simulated pairwise verdicts in both orders (see module docstring)."""
    _check("pairwise", behaviour, n)
    rho, verbose = _PAIRWISE[behaviour]
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n, 2))
    words = rng.integers(3, 60, size=(n, 2))
    human = np.where(quality[:, 0] >= quality[:, 1], "a", "b")

    def judged(first: int) -> tuple[np.ndarray, np.ndarray]:
        second = 1 - first
        content = expit(2 * (quality[:, first] - quality[:, second])
                        + verbose * (words[:, first] - words[:, second]) / 20)
        p1 = rho + (1 - rho) * content
        picks_first = rng.uniform(size=n) < p1
        names = np.array(["a", "b"])
        verdict = np.where(picks_first, names[first], names[second])
        # the confidence it states: the probability of its pick, stated with some noise
        stated = expit(logit(np.clip(np.where(picks_first, p1, 1 - p1), 1e-6, 1 - 1e-6))
                       + rng.normal(0, 0.3, size=n))
        return verdict, stated

    verdict_ab, conf_ab = judged(0)
    verdict_ba, conf_ba = judged(1)
    answers = [[f"The answer is {i}. " + _words(rng, w - 4) for w in words[i]]
               for i in range(n)]
    return pd.DataFrame({"item_id": np.arange(n), "question": [f"Question {i}" for i in
                                                              range(n)],
                         "answer_a": [a for a, _ in answers], "answer_b": [b for _, b in answers],
                         "human": human, "verdict_ab": verdict_ab, "verdict_ba": verdict_ba,
                         "conf_ab": conf_ab, "conf_ba": conf_ba, "simulated": True})


def simulate_lengths(n: int = 500, behaviour: str = "unbiased", *, seed: int = 0
                     ) -> pd.DataFrame:
    """Simulated 1-5 scores of answers of varied length (see module docstring)."""
    _check("lengths", behaviour, n)
    effect = _LENGTHS[behaviour]
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=n)
    words = np.maximum(5, np.round(30 + 20 * human + rng.normal(0, 40, size=n))).astype(int)
    centred = (words - words.mean()) / 100
    noise = rng.normal(0, 0.7, size=n)
    judge = np.clip(np.round(human + noise + effect * centred), 1, 5).astype(np.int64)
    confidence = expit(1.5 - 1.5 * np.abs(noise) + effect * centred)
    return pd.DataFrame({"item_id": np.arange(n), "gt_score": human, "judge_score": judge,
                         "confidence": confidence,
                         "answer": [_words(rng, w) for w in words], "words": words,
                         "simulated": True})


_GENERATORS = Registry("kind", {"confidence": simulate_confidence, "scores": simulate_scores,
                               "steps": simulate_steps, "mcq": simulate_mcq,
                               "reruns": simulate_reruns, "pairwise": simulate_pairwise,
                               "lengths": simulate_lengths})


def simulate(kind: str, n: int, behaviour: str | None = None, *, seed: int = 0,
             **options) -> pd.DataFrame:
    """Dispatch to a generator by name: ``confidence``, ``scores``, ``steps``, ``mcq``,
    ``reruns``, ``pairwise`` or ``lengths``.

    ``behaviour=None`` takes the kind's first behaviour (``calibrated``, or ``typical`` for
    steps).
    """
    return _GENERATORS[kind](n, behaviour or BEHAVIOURS[kind][0], seed=seed, **options)

"""The confeval extension of Inspect: the module the ``inspect_ai`` entry point names.

``pip install 'confeval[inspect]'`` declares, in confeval's ``pyproject.toml``::

    [project.entry-points.inspect_ai]
    confeval = "confeval.integrations.inspect_registry"

Inspect imports this module the first time a name in the ``confeval/`` namespace is looked up
(``--metric confeval/ece``), and when it loads hooks at the start of an eval; importing it runs
the decorators below, which register:

* metrics ``confeval/ece``, ``confeval/brier``, ``confeval/auroc``, ``confeval/auarc``,
  ``confeval/prr`` — each a dict value ``{NAME: value, NAME_low: ..., NAME_high: ...}`` (the
  95% bootstrap interval), computed by confeval over every sample and epoch (Inspect's
  unreduced scores) as :mod:`.inspect_scores` says; arguments ``n_bins=15``,
  ``bootstrap=1000``, ``seed=0``, ``confidence_key="confidence"``, ``correct_key="correct"``
  (the defaults are ``confeval score``'s);
* scorer ``confeval/confidence`` — attaches a confidence to a verdict (:func:`confidence`);
* hook ``confeval/report`` — writes confeval's report beside every log it can score
  (:mod:`.inspect_report`); ``CONFEVAL_INSPECT_REPORT=0`` turns it off.
"""

from __future__ import annotations

import logging
import math
import os
from typing import Any

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    metric,
    scorer,
    value_to_float,
)
from inspect_ai.solver import TaskState

from .inspect_confidence import check_method, sample_confidence
from .inspect_scores import CONFIDENCE_KEY, CORRECT_KEY, metric_value, score_rows, scored_rows

__all__ = ["ConfevalReport", "REPORT_ENV", "auarc", "auroc", "brier", "confidence", "ece",
           "prr"]

logger = logging.getLogger(__name__)

REPORT_ENV = "CONFEVAL_INSPECT_REPORT"
"""Set to 0 (or false, no, off) to turn the report hook off."""


def _named(name: str) -> str:
    """``name``, prefixed with ``confeval/`` unless Inspect prefixes it itself.

    Inspect namespaces a name by the package of the decorated object only when it can tell
    that package is installed (in site-packages, or editable with PEP 610 metadata); a
    checkout on ``PYTHONPATH`` or an editable install without that metadata would register
    a bare ``ece``, which ``--metric confeval/ece`` then cannot find."""
    try:   # private in inspect_ai: when it moves, trust Inspect to namespace
        from inspect_ai._util.package import get_installed_package_name
    except ImportError:
        return name
    return name if get_installed_package_name(_named) else f"confeval/{name}"


def _confeval_metric(name: str, n_bins: int, bootstrap: int, seed: int, confidence_key: str,
                     correct_key: str) -> Metric:
    to_float = value_to_float()

    def compute(scores: list[SampleScore]) -> Value:
        rows = score_rows(scores, to_float, confidence_key=confidence_key,
                          correct_key=correct_key)
        found = scored_rows(rows, n_bins=n_bins, bootstrap=bootstrap, seed=seed)
        return metric_value(name, found, bootstrap=bootstrap, seed=seed)

    return compute


# scores="unreduced": one observation per sample and epoch, as `confeval score` reads a log
@metric(name=_named("ece"), scores="unreduced")
def ece(n_bins: int = 15, bootstrap: int = 1000, seed: int = 0,
        confidence_key: str = CONFIDENCE_KEY, correct_key: str = CORRECT_KEY) -> Metric:
    """Expected calibration error (``n_bins`` equal-width bins) with its 95% bootstrap
    interval: ``{"ece", "ece_low", "ece_high"}``."""
    return _confeval_metric("ece", n_bins, bootstrap, seed, confidence_key, correct_key)


@metric(name=_named("brier"), scores="unreduced")
def brier(n_bins: int = 15, bootstrap: int = 1000, seed: int = 0,
          confidence_key: str = CONFIDENCE_KEY, correct_key: str = CORRECT_KEY) -> Metric:
    """Brier score of the confidence against correctness (binary: the top answer's, not
    lm-eval's multi-class one), with its interval: ``{"brier", "brier_low", "brier_high"}``."""
    return _confeval_metric("brier", n_bins, bootstrap, seed, confidence_key, correct_key)


@metric(name=_named("auroc"), scores="unreduced")
def auroc(n_bins: int = 15, bootstrap: int = 1000, seed: int = 0,
          confidence_key: str = CONFIDENCE_KEY, correct_key: str = CORRECT_KEY) -> Metric:
    """AUROC of the confidence for telling right from wrong answers (NaN with one class or
    graded correctness), with its interval: ``{"auroc", "auroc_low", "auroc_high"}``."""
    return _confeval_metric("auroc", n_bins, bootstrap, seed, confidence_key, correct_key)


@metric(name=_named("auarc"), scores="unreduced")
def auarc(n_bins: int = 15, bootstrap: int = 1000, seed: int = 0,
          confidence_key: str = CONFIDENCE_KEY, correct_key: str = CORRECT_KEY) -> Metric:
    """Area under the accuracy-rejection curve, with its interval:
    ``{"auarc", "auarc_low", "auarc_high"}``."""
    return _confeval_metric("auarc", n_bins, bootstrap, seed, confidence_key, correct_key)


@metric(name=_named("prr"), scores="unreduced")
def prr(n_bins: int = 15, bootstrap: int = 1000, seed: int = 0,
        confidence_key: str = CONFIDENCE_KEY, correct_key: str = CORRECT_KEY) -> Metric:
    """Prediction rejection ratio, with a bootstrap interval (``seed``) that ``confeval
    score`` does not report: ``{"prr", "prr_low", "prr_high"}``."""
    return _confeval_metric("prr", n_bins, bootstrap, seed, confidence_key, correct_key)


def _wrapped(verdict_scorer: Scorer | str | None, scorer_args: dict | None
             ) -> tuple[Scorer | None, str | None]:
    """The scorer whose verdict gets a confidence (a registry name is created, so that
    ``inspect score -S scorer=choice`` works), and its name."""
    if verdict_scorer is None:
        return None, None
    if isinstance(verdict_scorer, str):
        from inspect_ai.util import registry_create

        return registry_create("scorer", verdict_scorer, **(scorer_args or {})), verdict_scorer
    from inspect_ai.util import registry_info

    return verdict_scorer, registry_info(verdict_scorer).name


def _earlier_verdict(state: TaskState, name: str | None) -> tuple[str | None, Score | None]:
    """A score given to the sample before this scorer ran: the one named, else the first (in
    ``inspect score --action append``, the log's own scores in the log's order)."""
    scores = state.scores or {}
    if name is not None:
        return name, scores.get(name)
    return next(iter(scores.items()), (None, None))


def _unscored(score: Score | None) -> bool:
    return score is None or (isinstance(score.value, float) and math.isnan(score.value))


@scorer(metrics=[ece(), brier(), auroc(), auarc(), prr()], name=_named("confidence"))
def confidence(scorer: Scorer | str | None = None, method: str = "letters", *,
               verdict: str | None = None, tokens: str = "sequence", span: str = "answer",
               fallback: str = "none", scorer_args: dict[str, Any] | None = None) -> Scorer:
    """A verdict with a confidence attached: the verdict's value, answer and explanation,
    and ``metadata["confidence"]`` (None when it cannot be read, with
    ``metadata["confeval"]["confidence_missing"]`` saying why).

    Parameters
    ----------
    scorer : Scorer or str, optional
        The scorer giving the verdict (a registry name such as ``"choice"`` or ``"match"``
        is created with ``scorer_args``). Without one, the verdict is a score the sample
        already has: ``verdict`` names it, else the first (a scorer listed before this one
        in the task, or the log's own with ``inspect score --action append``).
    method : {"letters", "answer_logprobs", "verbalised"}
        Where the confidence comes from (:mod:`confeval.integrations.inspect_confidence`).
    tokens : {"sequence", "normalised", "first"}
        ``answer_logprobs``: the answer's probability, its length-normalised probability, or
        its first token's.
    span : {"answer", "reply"}
        ``answer_logprobs``: the tokens of the verdict's answer, or the whole reply.
    fallback : {"none", "last_number"}
        ``verbalised``: without a word such as "confidence", read the reply's last number.
    """
    check_method(method, tokens, span)
    inner, inner_name = _wrapped(scorer, scorer_args)

    async def score(state: TaskState, target: Target) -> Score | None:
        if inner is not None:
            name, given = inner_name, await inner(state, target)
        else:
            name, given = _earlier_verdict(state, verdict)
        if _unscored(given):
            return Score.unscored(reason="scoring_failed", explanation=(
                f"confeval/confidence: no verdict from {name or 'an earlier scorer'} to attach "
                "a confidence to (name one with scorer=, or score after one)"))
        value, details = sample_confidence(
            method, state.output, n_choices=len(state.choices or []), answer=given.answer,
            tokens=tokens, span=span, fallback=fallback)
        metadata = {**(given.metadata or {}), CONFIDENCE_KEY: value,
                    "confeval": {"method": method, "verdict": name, **details}}
        return Score(value=given.value, answer=given.answer, explanation=given.explanation,
                     metadata=metadata)

    return score


@hooks(name=_named("report"), description="confeval: metrics.json and report.html of the log's "
       "confidence, in NAME.confeval/ beside the log (CONFEVAL_INSPECT_REPORT=0: off)")
class ConfevalReport(Hooks):
    """Writes confeval's report beside each log at the end of its task; a failure is one
    warning, never the eval's."""

    def enabled(self) -> bool:
        return os.environ.get(REPORT_ENV, "1").strip().lower() not in ("0", "false", "no",
                                                                       "off")

    async def on_task_end(self, data: TaskEnd) -> None:
        import anyio

        from .inspect_report import write_report_beside

        try:
            # scoring and drawing are CPU work: off the event loop
            out = await anyio.to_thread.run_sync(write_report_beside, data.log)
        except Exception as exc:   # the eval has finished; the report is extra
            logger.warning("confeval: no report for %s: %s",
                           getattr(data.log, "location", "the log"), exc)
            return
        if out is not None:
            logger.info("confeval: report of %s in %s", data.log.location, out)

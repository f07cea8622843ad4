"""``confeval score`` and ``confeval agreement``: a confidence against correctness, a judge's
scores against reference scores."""

from __future__ import annotations

from ..suites.generic import AgreementOptions, ConfidenceOptions
from ._common import Files, ForceOpt, JsonOpt, OutOpt, score_inputs
from ._options import Given, with_options

__all__ = ["agreement", "score"]


@with_options(ConfidenceOptions, "score")
def score(
    given: Given,
    files: Files,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Score a confidence column against correctness: ECE, MCE, Brier, AUROC, AUARC, PRR, RCE."""
    score_inputs("score", [[path] for path in files], given, as_json=as_json, out_dir=out_dir,
                 force=force, bootstrap_progress=True)


@with_options(AgreementOptions, "score")
def agreement(
    given: Given,
    files: Files,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Agreement of a judge's scores with reference scores (correlations, accuracy, bias)."""
    score_inputs("agreement", [[path] for path in files], given, as_json=as_json,
                 out_dir=out_dir, force=force)

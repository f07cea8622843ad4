"""Confidence measures: model outputs -> a confidence (or uncertainty) per answer — the
functional core of the measures suite (MCQA-Eval).

``MEASURES`` maps each measure of the suite (by its record column) to its label and function:
white-box measures of an answer's token
log-probabilities (:mod:`.likelihood`) and of their attention (:mod:`.attention`: CSL,
CSL-Next), black-box measures of a similarity matrix over sampled answers (:mod:`.similarity`;
Jaccard there, sentence embeddings and NLI in :mod:`.semantic`), P(true) (:mod:`.verbal`), and
measures of a predictive distribution (:mod:`.distribution`).

Every measure has a batched form (``*_batch``) over many answers or questions at once — ragged
token arrays padded with their lengths (:func:`pad_ragged`), similarity matrices stacked with
their sizes — validated once per batch; the single-answer functions compute the same formula
on one (tested equal to 1e-12).
"""

from dataclasses import dataclass

from .._registry import Registry
from .attention import csl, csl_batch, csl_per_head, csl_per_head_batch, select_heads
from .distribution import predictive_entropy
from .likelihood import (
    normalised_likelihood,
    normalised_likelihood_batch,
    perplexity,
    perplexity_batch,
    sequence_likelihood,
    sequence_likelihood_batch,
    token_relevance,
    token_sar,
    token_sar_batch,
)
from .ragged import pad_ragged
from .similarity import (
    SimilarityMeasure,
    degree,
    degree_batch,
    eccentricity,
    eccentricity_batch,
    eigenvalue,
    eigenvalue_batch,
    jaccard_similarity,
    laplacian_eigen,
    option_confidences,
    option_confidences_batch,
)
from .verbal import P_TRUE_CONTINUATIONS, p_true, p_true_batch, p_true_prompt

__all__ = ["MEASURES", "Measure", "P_TRUE_CONTINUATIONS", "SimilarityMeasure", "csl",
           "csl_batch", "csl_per_head", "csl_per_head_batch", "degree", "degree_batch",
           "eccentricity", "eccentricity_batch", "eigenvalue", "eigenvalue_batch",
           "jaccard_similarity", "laplacian_eigen", "normalised_likelihood",
           "normalised_likelihood_batch", "option_confidences", "option_confidences_batch",
           "p_true", "p_true_batch", "p_true_prompt", "pad_ragged", "perplexity",
           "perplexity_batch", "predictive_entropy", "select_heads", "sequence_likelihood",
           "sequence_likelihood_batch", "token_relevance", "token_sar", "token_sar_batch"]

@dataclass(frozen=True)
class Measure:
    """One confidence measure of the measures suite as records name it: its display
    ``label`` (a black-box measure's label names the similarity it reads: J Jaccard, S
    embeddings, E entailment, C contradiction). Higher = more confident for every one
    (perplexity and entropy, uncertainties, are functions here but not suite measures)."""

    label: str


MEASURES: Registry[Measure] = Registry("measure", {
    "sl": Measure("SL"), "sl_norm": Measure("SL(norm)"), "token_sar": Measure("TokenSAR"),
    "csl": Measure("CSL"), "csl_next": Measure("CSL-Next"), "p_true": Measure("P(true)"),
    **{f"{kind}_{key}": Measure(f"{label}({key.upper()})") for key in "jsec"
       for kind, label in (("deg", "Deg"), ("ecc", "Ecc"))},
})
"""The measures suite's record column -> its :class:`Measure` (the one table of measure names:
``confeval measures score`` finds these columns in records, ``measures run`` writes them)."""

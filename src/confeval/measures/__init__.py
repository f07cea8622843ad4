"""Confidence measures: model outputs -> a confidence (or uncertainty) per answer — the
functional core of the measures suite (MCQA-Eval).

``MEASURES`` maps a name to its function: white-box measures of an answer's token
log-probabilities (:mod:`.likelihood`) and of their attention (:mod:`.attention`: CSL,
CSL-Next), black-box measures of a similarity matrix over sampled answers (:mod:`.similarity`;
Jaccard there, sentence embeddings and NLI in :mod:`.semantic`), P(true) (:mod:`.verbal`), and
measures of a predictive distribution (:mod:`.distribution`).
"""

from collections.abc import Callable

from .attention import csl, csl_per_head, select_heads
from .distribution import predictive_entropy
from .likelihood import (
    normalised_likelihood,
    perplexity,
    sequence_likelihood,
    token_relevance,
    token_sar,
)
from .similarity import (
    SimilarityMeasure,
    degree,
    eccentricity,
    eigenvalue,
    jaccard_similarity,
    laplacian_eigen,
    option_confidences,
)
from .verbal import P_TRUE_CONTINUATIONS, p_true, p_true_prompt

__all__ = ["MEASURES", "P_TRUE_CONTINUATIONS", "SimilarityMeasure", "csl", "csl_per_head",
           "degree", "eccentricity",
           "eigenvalue", "get_measure", "jaccard_similarity", "laplacian_eigen",
           "normalised_likelihood", "option_confidences", "p_true", "p_true_prompt", "perplexity",
           "predictive_entropy", "select_heads", "sequence_likelihood", "token_relevance",
           "token_sar"]

MEASURES: dict[str, Callable] = {
    "sequence_likelihood": sequence_likelihood,
    "normalised_likelihood": normalised_likelihood,
    "perplexity": perplexity,
    "token_sar": token_sar,
    "csl": csl,
    "csl_next": csl,
    "p_true": p_true,
    "degree": degree,
    "eccentricity": eccentricity,
    "eigenvalue": eigenvalue,
    "predictive_entropy": predictive_entropy,
}
"""Measure name -> function (white-box: token log-probs -> float; black-box: W -> (confidence,
uncertainty); distribution: probabilities -> entropy per row)."""


def get_measure(name: str) -> Callable:
    """The measure ``name``; a :class:`ValueError` lists the choices."""
    if name not in MEASURES:
        raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURES)}")
    return MEASURES[name]

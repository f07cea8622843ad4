"""Confidence measures: model outputs -> one confidence (or uncertainty) per answer.

The functional core of the measures suite (MCQA-Eval). Today: measures of a predictive
distribution over answers (:mod:`.distribution`).
"""

from .distribution import predictive_entropy

__all__ = ["predictive_entropy"]

"""Meaning-preserving perturbations of process-judge inputs (ConfProBench): lexical and
syntactic rewrites of reasoning steps by a model, validated mechanically, and image
perturbations (scaling, rotation, Gaussian noise, colour inversion)."""

from .dataset import (
    TEXT_KINDS,
    images_relative_to,
    perturb_images,
    perturb_text,
    with_originals,
)
from .image import IMAGE_PERTURBATIONS, perturb_image
from .text import Rewrite, rewrite_messages, rewrite_step
from .validate import SYNTACTIC_TRANSFORMATIONS, protected_content, validate_rewrite

__all__ = ["IMAGE_PERTURBATIONS", "SYNTACTIC_TRANSFORMATIONS", "TEXT_KINDS", "Rewrite",
           "images_relative_to", "perturb_image", "perturb_images", "perturb_text",
           "protected_content",
           "rewrite_messages", "rewrite_step", "validate_rewrite", "with_originals"]

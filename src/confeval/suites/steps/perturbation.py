"""A perturbed copy of a step dataset (ConfProBench's lexical, syntactic or image level), written
as a file the steps suite runs on: the originals (optionally) followed by the perturbed items,
image paths relative to the written file's folder."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd

from ...backends import Backend
from ...perturb import (
    IMAGE_PERTURBATIONS,
    TEXT_KINDS,
    images_relative_to,
    perturb_images,
    perturb_text,
    with_originals,
)
from ...records import write_table
from .inputs import load_step_items

__all__ = ["PERTURBATION_KINDS", "check_perturbation", "write_perturbed_dataset"]

PERTURBATION_KINDS = (*TEXT_KINDS, "image")


def check_perturbation(kind: str, image_kind: str | None, out_file: Path) -> None:
    """A :class:`ValueError` for a kind, image kind or output name that cannot be written,
    before any item is loaded or model built."""
    if kind not in PERTURBATION_KINDS:
        raise ValueError(f"--kind must be lexical, syntactic or image, got {kind!r}")
    if image_kind is not None and image_kind not in IMAGE_PERTURBATIONS:
        raise ValueError(f"--image-kind must be one of {', '.join(IMAGE_PERTURBATIONS)}")
    if not str(out_file).lower().endswith((".jsonl", ".jsonl.gz")):
        raise ValueError(f"--out {out_file}: use a .jsonl name (lists stay lists)")


def write_perturbed_dataset(data: str, kind: str, out_file: str | Path, *,
                            backend: Backend | None = None, n: int | None = None,
                            seed: int = 0, image_root: str | Path | None = None,
                            images_dir: str | Path | None = None,
                            image_kind: str | None = None, retries: int = 3,
                            concurrency: int = 8, with_original: bool = True) -> dict:
    """Perturb the items of ``data`` and write them to ``out_file``; a summary of what was
    written (``images_outside`` counts image paths outside the file's folder: a run on it then
    needs ``--image-root``). Text kinds need a rewriting ``backend``."""
    out_file = Path(out_file)
    check_perturbation(kind, image_kind, out_file)
    items = load_step_items(data, n, seed, image_root=image_root)
    if kind == "image":
        target = Path(images_dir) if images_dir else \
            out_file.with_suffix("").with_name(out_file.stem + "-images")
        perturbed, summary = perturb_images(items, target, seed=seed, kind=image_kind)
    else:
        if backend is None:
            raise ValueError(f"--kind {kind} rewrites steps with a model: give one")
        perturbed, summary = asyncio.run(perturb_text(items, kind, backend, seed=seed,
                                                      retries=retries,
                                                      concurrency=concurrency))
    rows = with_originals(items, perturbed, kind) if with_original else [
        {k: v for k, v in it.items() if k != "run_id"} for it in perturbed]
    rows, outside = images_relative_to(rows, out_file.parent)
    write_table(pd.DataFrame(rows), out_file)
    summary.update(kind=kind, out=str(out_file), seed=seed,
                   originals_written=len(rows) - len(perturbed),
                   excluded_at_load=items.excluded, images_outside=outside)
    return summary

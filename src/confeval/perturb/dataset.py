"""Perturbed copies of a step dataset (``confeval steps perturb``), ready for ``steps run``.

Input: items as :func:`confeval.suites.steps.load_step_items` reads them. Output: the same
items with ``variant`` set to the perturbation name, the rewritten ``steps`` (or perturbed
``images``) and a ``perturbation`` record: per step the chosen transformation, or the reasons
a step kept its original text; per image the transformation and its parameters. Labels and
error types are unchanged — the perturbations preserve meaning.

Every random choice comes from ``numpy.random.default_rng([seed, item index, step index])``,
so a dataset is reproducible whatever the order in which the model answers.
"""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..backends import Backend
from ..images import image_url
from .image import perturb_image
from .text import rewrite_step

__all__ = ["TEXT_KINDS", "images_relative_to", "perturb_images", "perturb_text",
           "with_originals"]

TEXT_KINDS = ("lexical", "syntactic")


async def perturb_text(items: Sequence[dict], kind: str, backend: Backend, *, seed: int = 0,
                       retries: int = 3, concurrency: int = 8) -> tuple[list[dict], dict]:
    """Rewrite every step of every item; returns (perturbed items, summary counts)."""
    if kind not in TEXT_KINDS:
        raise ValueError(f"kind must be one of {TEXT_KINDS}")
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, s: int, step: str):
        async with gate:
            rng = np.random.default_rng([seed, i, s])
            return await rewrite_step(backend, step, kind, rng, retries=retries)

    jobs = [(i, s, step) for i, item in enumerate(items) for s, step in enumerate(item["steps"])]
    results = await asyncio.gather(*(one(i, s, step) for i, s, step in jobs))
    by_item: dict[int, list] = {}
    for (i, _, _), r in zip(jobs, results):
        by_item.setdefault(i, []).append(r)
    out = []
    rejected: dict[str, int] = {}
    for i, item in enumerate(items):
        rewrites = by_item.get(i, [])
        for r in rewrites:
            for reason, count in r.rejected.items():
                rejected[reason] = rejected.get(reason, 0) + count
        out.append({**_base(item), "variant": kind, "steps": [r.text for r in rewrites],
                    "perturbation": {"kind": kind, "seed": seed, "steps": [
                        {"ok": r.ok, "transformation": r.transformation,
                         "attempts": r.attempts, "rejected": r.rejected} for r in rewrites]}})
    n_steps = len(results)
    n_ok = sum(r.ok for r in results)
    return out, {"items": len(out), "steps": n_steps, "rewritten": n_ok,
                 "kept_original": n_steps - n_ok, "rejected_candidates": rejected}


def _base(item: dict) -> dict:
    return {k: v for k, v in item.items() if k not in ("run_id", "problem_id")}


def _open_image(ref: str):
    """An image the loader checked (:func:`~confeval.images.check_image`): an
    absolute path or a data: URL, decoded again under the same caps."""
    from PIL import Image

    url = image_url(ref)
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def perturb_images(items: Sequence[dict], out_dir: Path, *, seed: int = 0,
                   kind: str | None = None) -> tuple[list[dict], dict]:
    """Perturb the images of the items that have any (others are skipped and counted);
    perturbed images are written as PNG files under ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out, skipped, kinds = [], 0, {}
    for i, item in enumerate(items):
        refs = item.get("images") or []
        if not refs:
            skipped += 1
            continue
        rng = np.random.default_rng([seed, i])
        # one transformation per item (as the paper), applied to each of its images
        chosen = kind or str(rng.choice(("scale", "rotate", "noise", "invert")))
        paths, params = [], []
        for k, ref in enumerate(refs):
            image, p = perturb_image(_open_image(str(ref)), rng, kind=chosen)
            path = out_dir / f"{_safe(item['item_id'])}-{k}.png"
            image.save(path)
            paths.append(str(path))
            params.append(p)
        kinds[chosen] = kinds.get(chosen, 0) + 1
        out.append({**_base(item), "variant": "image", "images": paths,
                    "perturbation": {"kind": "image", "seed": seed, "images": params}})
    return out, {"items": len(out), "skipped_without_images": skipped, "by_kind": kinds}


def _safe(name: Any) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))[:80]


def images_relative_to(rows: Sequence[dict], folder: Path) -> tuple[list[dict], int]:
    """``rows`` with each image path inside ``folder`` made relative to it, so that a dataset
    written there finds its images wherever the folder is moved (image paths resolve against
    the data file's folder), and how many paths lie outside it (a run on the file then needs
    ``--image-root``)."""
    base = Path(folder).resolve()
    outside, out = 0, []
    for row in rows:
        refs = []
        for ref in row.get("images") or []:
            path = Path(ref)
            if path.is_absolute() and path.resolve().is_relative_to(base):
                ref = str(path.resolve().relative_to(base))
            elif path.is_absolute():
                outside += 1
            refs.append(ref)
        out.append({**row, "images": refs} if row.get("images") else dict(row))
    return out, outside


def with_originals(items: Sequence[dict], perturbed: Sequence[dict], kind: str) -> list[dict]:
    """The original items (those that were perturbed, for images) followed by the perturbed
    ones: one dataset on which a steps run measures CRS. ``problem_id`` and ``run_id`` (the
    loader's bookkeeping) are left out."""
    originals = [{k: v for k, v in it.items() if k != "problem_id"} for it in items]
    if kind == "image":  # only the problems that were perturbed
        done = {it["item_id"] for it in perturbed}
        originals = [it for it in originals if it["item_id"] in done]
    return [{k: v for k, v in it.items() if k != "run_id"} for it in [*originals, *perturbed]]

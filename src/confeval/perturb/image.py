"""Image perturbations of ConfProBench's multimodal level: scaling, rotation, Gaussian noise
and colour inversion — low-level changes that keep what the image shows.

Each call draws the transformation (unless given) and its parameters from a seeded
``numpy.random.Generator`` and returns them with the image, so a perturbed dataset records
exactly what was done to every image. Parameter ranges (ours; the paper does not state them)
are mild on purpose, so that no content leaves the frame or drowns in noise:

``scale``   resize by a factor in [0.6, 0.85] or [1.15, 1.5] (never ~1), Lanczos resampling;
``rotate``  rotate by ±[5, 15] degrees, canvas expanded, corners filled white;
``noise``   add N(0, σ²) per pixel and channel, σ in [8, 20] on the 0–255 scale, clipped;
``invert``  255 − value on every RGB channel (alpha kept).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._registry import Registry

__all__ = ["IMAGE_PERTURBATIONS", "perturb_image"]

def _params(kind: str, rng: np.random.Generator) -> dict[str, Any]:
    if kind == "scale":
        low = rng.uniform() < 0.5
        return {"factor": round(float(rng.uniform(0.6, 0.85) if low
                                      else rng.uniform(1.15, 1.5)), 4)}
    if kind == "rotate":
        return {"degrees": round(float(rng.uniform(5, 15) * rng.choice([-1, 1])), 3)}
    if kind == "noise":
        return {"sigma": round(float(rng.uniform(8, 20)), 3),
                "noise_seed": int(rng.integers(2**31))}
    return {}


def perturb_image(image, seed: int | np.random.Generator = 0, kind: str | None = None):
    """Return (perturbed PIL image, {"kind", **parameters}) for a PIL image.

    Examples
    --------
    >>> from PIL import Image
    >>> img = Image.new("RGB", (40, 30), (10, 200, 30))
    >>> out, params = perturb_image(img, seed=1, kind="invert")
    >>> out.getpixel((0, 0)), params
    ((245, 55, 225), {'kind': 'invert'})
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if kind is None:
        kind = str(rng.choice(IMAGE_PERTURBATIONS))
    transform = IMAGE_TRANSFORMS[kind]
    params = _params(kind, rng)
    img = image.convert("RGBA") if image.mode in ("RGBA", "LA", "P") else image.convert("RGB")
    return transform(img, params), {"kind": kind, **params}


def _scale(img, params):
    from PIL import Image

    size = (max(1, round(img.width * params["factor"])),
            max(1, round(img.height * params["factor"])))
    return img.resize(size, Image.Resampling.LANCZOS)


def _rotate(img, params):
    from PIL import Image

    fill = (255, 255, 255, 255) if img.mode == "RGBA" else (255, 255, 255)
    return img.rotate(params["degrees"], resample=Image.Resampling.BICUBIC, expand=True,
                      fillcolor=fill)


def _noise(img, params):
    from PIL import Image

    arr = np.asarray(img, dtype=np.float64)
    noise_rng = np.random.default_rng(params["noise_seed"])
    arr[..., :3] += noise_rng.normal(0, params["sigma"], arr[..., :3].shape)
    return Image.fromarray(np.clip(np.rint(arr), 0, 255).astype(np.uint8), mode=img.mode)


def _invert(img, params):
    from PIL import Image, ImageOps

    if img.mode == "RGBA":
        r, g, b, a = img.split()
        inv = ImageOps.invert(Image.merge("RGB", (r, g, b)))
        return Image.merge("RGBA", (*inv.split(), a))
    return ImageOps.invert(img)


IMAGE_TRANSFORMS = Registry("image perturbation", {"scale": _scale, "rotate": _rotate,
                                                   "noise": _noise, "invert": _invert})
"""Perturbation name -> ``fn(image, parameters)`` (parameters drawn by :func:`_params`)."""

IMAGE_PERTURBATIONS = tuple(IMAGE_TRANSFORMS)

"""Images in prompts, from untrusted data files: checked once when the items are loaded, sent
inline (so nothing is fetched from the web and every backend receives the same bytes).

A data file is untrusted input: an ``"image": "/etc/passwd"`` must never turn a local file into
base64 in a request body. :func:`check_image` is the one gate every input format goes through
(flat diagnose and steps files, the MMErroR folder). A reference is

* a path, relative to the *image root* (the data file's folder, or an explicit
  ``--image-root``) or absolute, or a ``file://`` URL: resolved with symbolic links followed,
  and refused unless it lies inside the root (``image_outside_dataset``) and is a regular file
  (``missing_image``);
* a ``data:`` URL with base64 content;
* anything else is refused: a web URL (``remote_image`` — a dataset must not make a model server
  fetch addresses of its choosing), a number or a list (``invalid_image_ref``).

The bytes must then decode whole with Pillow (``unreadable_image``: corrupt or truncated data,
or not an image), within :data:`MAX_IMAGE_BYTES` and :data:`MAX_IMAGE_PIXELS`
(``image_too_large``; read from the header before any pixel is decoded, so a decompression bomb
costs nothing). PNG, JPEG, WebP and GIF are sent as they are; other formats (BMP, TIFF, ...) are
re-encoded as PNG. :func:`image_url` checks again at send time and sends exactly the bytes it
decoded.
"""

from __future__ import annotations

import base64
import binascii
import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["IMAGE_REASONS", "MAX_IMAGE_BYTES", "MAX_IMAGE_PIXELS", "ImageError", "check_image",
           "checked_images", "image_url"]

MAX_IMAGE_BYTES = 32 * 2**20
"""Largest image file (or decoded ``data:`` URL) accepted, in bytes."""

MAX_IMAGE_PIXELS = 50_000_000
"""Largest image accepted, in pixels (width x height; e.g. 8,000 x 6,000 = 48 M)."""

IMAGE_REASONS = ("invalid_image_ref", "remote_image", "image_outside_dataset", "missing_image",
                 "image_too_large", "unreadable_image")
"""Why an image reference was refused; each is an exclusion reason of the item."""

_SENT_AS_IS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp",
               "GIF": "image/gif"}


class ImageError(ValueError):
    """An image reference that cannot be sent; ``reason`` is one of :data:`IMAGE_REASONS`."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


@dataclass(frozen=True)
class _Decoded:
    mime: str
    data: bytes


def _decode(data: bytes, what: str) -> _Decoded:
    """The bytes as they will be sent, after a full decode under the pixel cap."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            # our own cap below replaces Pillow's bomb warning, which would say nothing useful
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                width, height = im.size
                if width * height > MAX_IMAGE_PIXELS:
                    raise ImageError("image_too_large", f"{what}: {width}x{height} pixels "
                                     f"(at most {MAX_IMAGE_PIXELS:,})")
                im.load()
                fmt = im.format
                if fmt in _SENT_AS_IS:
                    return _Decoded(_SENT_AS_IS[fmt], data)
                out = io.BytesIO()
                im.save(out, format="PNG")
                return _Decoded("image/png", out.getvalue())
    except ImageError:
        raise
    except Image.DecompressionBombError:  # Pillow's own, larger cap, met while opening
        raise ImageError("image_too_large", f"{what}: more than {MAX_IMAGE_PIXELS:,} pixels"
                         ) from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        # Pillow reports corrupt data as any of these (UnidentifiedImageError is an OSError)
        raise ImageError("unreadable_image", f"{what}: {type(exc).__name__}") from None


def _data_url_bytes(ref: str) -> bytes:
    head, _, payload = ref.partition(",")
    if not head.endswith(";base64"):
        raise ImageError("unreadable_image", "a data: URL image must be base64-encoded")
    if len(payload) > MAX_IMAGE_BYTES * 4 // 3 + 4:
        raise ImageError("image_too_large", f"data: URL of {len(payload):,} characters "
                         f"(at most {MAX_IMAGE_BYTES:,} bytes)")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError("unreadable_image", "a data: URL that is not valid base64") from None


def _confined(ref: str, root: Path) -> Path:
    text = ref[len("file://"):] if ref.startswith("file://") else ref
    base = root.resolve()
    path = (base / text).resolve()  # an absolute text replaces the root: checked below
    if not path.is_relative_to(base):
        raise ImageError("image_outside_dataset", f"{ref!r} is outside {base}")
    if not path.is_file():
        raise ImageError("missing_image", f"{ref!r}: no such file under {base}")
    if path.stat().st_size > MAX_IMAGE_BYTES:
        raise ImageError("image_too_large", f"{ref!r}: {path.stat().st_size:,} bytes "
                         f"(at most {MAX_IMAGE_BYTES:,})")
    return path


def check_image(ref: Any, root: str | Path) -> str:
    """A reference that is safe to send: an absolute path inside ``root`` or a ``data:`` URL,
    its bytes decoded whole under the caps (module docstring); else :class:`ImageError`."""
    if not isinstance(ref, str) or not ref.strip():
        raise ImageError("invalid_image_ref", f"an image reference must be a path or a data: "
                         f"URL, not {type(ref).__name__}")
    ref = ref.strip()
    low = ref[:16].lower()
    if low.startswith("data:"):
        _decode(_data_url_bytes(ref), "data: URL")
        return ref
    if "://" in low and not low.startswith("file://"):
        raise ImageError("remote_image", f"{ref[:60]!r}: only local files and data: URLs are "
                         "sent (download the image next to the data file)")
    path = _confined(ref, Path(root))
    _decode(path.read_bytes(), str(path))
    return str(path)


def checked_images(refs: Any, root: str | Path) -> tuple[list[str], str | None]:
    """Every reference of an item checked: ``(references, None)``, or ``([], reason)`` with
    the first refusal's reason (the item is then left out and counted, never sent without
    its images). ``None`` or an empty list: no images."""
    if refs is None or (isinstance(refs, float) and refs != refs):
        return [], None
    out = []
    for ref in refs if isinstance(refs, (list, tuple)) else [refs]:
        try:
            out.append(check_image(ref, root))
        except ImageError as exc:
            return [], exc.reason
    return out, None


def image_url(ref: str) -> str:
    """The inline ``data:`` URL of a reference :func:`check_image` accepted: decoded again
    under the same caps, and sent as exactly the bytes decoded."""
    if ref.startswith("data:"):
        decoded = _decode(_data_url_bytes(ref), "data: URL")
    else:
        path = Path(ref)
        if not path.is_absolute() or not path.is_file():
            raise ImageError("missing_image", f"image not found: {ref}")
        decoded = _decode(path.read_bytes(), ref)
    return f"data:{decoded.mime};base64,{base64.b64encode(decoded.data).decode('ascii')}"

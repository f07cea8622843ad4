"""Images in prompts: every local image is sent inline, so nothing is fetched from the web and
every backend (servers included) receives the same bytes."""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path

__all__ = ["image_url"]


def image_url(ref: str) -> str:
    """A local image path becomes an inline ``data:`` URL; data: and file: URLs pass through
    (web URLs too: the backends refuse or fetch them by their own rules)."""
    if ref.startswith(("data:", "file://", "http://", "https://")):
        return ref
    path = Path(ref)
    if not path.is_file():
        raise ValueError(f"image not found: {ref}")
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"

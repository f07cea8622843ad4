"""Text helpers shared by every layer: names of any length shown in bounded space."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["NAME_WIDTH", "display_name", "display_names"]

NAME_WIDTH = 40
"""Characters of a model name shown in figures, terminal and HTML tables and messages; JSON,
``metrics.json`` and ``compare.csv`` keep names whole."""

ELLIPSIS = "…"


def display_name(name: object, width: int = NAME_WIDTH) -> str:
    """``name`` as text of at most ``width`` characters: whole when it fits, else its
    beginning, an ellipsis and its end (model names often differ only at the end:
    ``...-7b`` and ``...-70b``).

    Examples
    --------
    >>> display_name("a" * 30 + "-7b-instruct" + "z" * 30, width=20)
    'aaaaaaaaaaaaa…zzzzzz'
    >>> display_name("llava-v1.6-34b")
    'llava-v1.6-34b'
    """
    text = str(name)
    if len(text) <= width:
        return text
    keep = max(width - len(ELLIPSIS), 1)
    tail = keep // 3
    return text[:keep - tail] + ELLIPSIS + (text[len(text) - tail:] if tail else "")


def display_names(names: Iterable[object], width: int = NAME_WIDTH) -> dict[str, str]:
    """Each name's :func:`display_name`, distinct: names that would show alike (two long
    names with the same beginning and end) end in ``#1``, ``#2``, ... in their order instead.

    Examples
    --------
    >>> names = ["x" * 50 + "a" + "y" * 50, "x" * 50 + "b" + "y" * 50]
    >>> list(display_names(names, width=12).values())
    ['xxxxxxxxx…#1', 'xxxxxxxxx…#2']
    """
    texts = list(dict.fromkeys(str(n) for n in names))
    shown = {t: display_name(t, width) for t in texts}
    seen: dict[str, list[str]] = {}
    for text, label in shown.items():
        seen.setdefault(label, []).append(text)
    for same in seen.values():
        if len(same) > 1:
            for k, text in enumerate(same, start=1):
                mark = f"#{k}"
                head = max(width - len(ELLIPSIS) - len(mark), 1)
                shown[text] = text[:head] + ELLIPSIS + mark
    return shown

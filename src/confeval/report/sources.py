"""What the terminal says of each input beside its numbers: which part of another tool's file
was read (the lm-eval filter, the Inspect scorer), which confidence, the tool's own accuracy,
and the warnings its reader raised — each line naming the input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["source_lines", "source_warnings"]


def source_lines(results: Mapping[str, Any]) -> list[str]:
    """One line per input read from another tool's file, headed by its table label: "LABEL:
    scorer match; confidence p_answer (the answer tokens' probability: ...); the tool's own
    accuracy 0.0500 over 10 samples" (the scorer or filter left out where the label is it)."""
    from .terminal import file_labels

    lines = []
    labels = dict(zip(results, file_labels(dict(results)).labels))
    for name, res in results.items():
        if not isinstance(res, Mapping):
            continue
        notes = res.get("notes") or {}
        parts = [f"{kind} {notes[kind]}" for kind in ("filter", "scorer")
                 if kind in notes and f"({kind} {notes[kind]})" not in name]
        if "confidence" in notes:
            parts.append(f"confidence {notes['confidence']}")
        elif res.get("confidence_column") and res["confidence_column"] != "confidence":
            parts.append(f"confidence {res['confidence_column']} (-c)")
        told = res.get("tool_accuracy")
        if told:
            parts.append(f"the tool's own accuracy {told['value']:.4f} over "
                         f"{told['n_samples']:,} samples")
        if parts:
            lines.append(f"{labels[name]}: " + "; ".join(parts))
    return lines


def source_warnings(results: Mapping[str, Any]) -> list[str]:
    """``SOURCE: sentence`` for every warning a reader raised about an input."""
    return [f"{res.get('source', name)}: {sentence}" for name, res in results.items()
            if isinstance(res, Mapping) for sentence in res.get("warnings") or ()]

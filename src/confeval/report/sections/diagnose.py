"""The report section of the diagnose suite: the paper's ETC table by domain with n and
intervals in every cell, strict and parsed accuracy beside the baselines, recall per type,
the confusion between types, and the EPD drop split into its parts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ...taxonomy import error_types
from ..figures import confusion_figure, grouped_bars_figure
from ..html import _table, chart, esc, fmt, register_section, short_name, value_with_ci
from ..terminal import register_table, results_table

__all__ = ["render_diagnose"]

_NAMES = {k: t.name for k, t in error_types("mmerror").items()}


@register_section("diagnose")
def render_diagnose(section: Mapping[str, Any]) -> str:
    parts = ["<p class='muted'>Strict accuracy counts an unparseable reply as wrong (the "
             "paper's Total); parsed accuracy leaves it out. Intervals: Wilson 95% for "
             "proportions.</p>"]
    results = section["results"]
    rows = []
    for name, r in results.items():
        if "accuracy_strict" not in r:
            continue
        base = r.get("baselines", {})
        rows.append([esc(short_name(name)), esc(r.get("protocol")), fmt(r.get("n")),
                     value_with_ci(r.get("accuracy_strict"), r.get("ci")),
                     fmt(r.get("accuracy_parsed")), fmt(r.get("parse_rate")),
                     fmt(r.get("macro_f1")), fmt(r.get("kappa")),
                     fmt(base.get("random", {}).get("expected")),
                     f"{fmt(base.get('majority', {}).get('accuracy'))} "
                     f"({esc(base.get('majority', {}).get('type'))})",
                     fmt((base.get("human") or {}).get("total"))])
    parts.append("<h3>Accuracy against the baselines (Wilson 95% interval beneath)</h3>")
    parts.append(_table(["protocol", "n", "accuracy (strict)", "accuracy (parsed)",
                         "parse rate", "macro-F1", "kappa", "random", "majority", "human"],
                        rows, section.get("name_header", "file")))
    for name, r in results.items():
        parts.append(_per_file(short_name(name), r))
    return "".join(parts)


def _per_file(name: str, r: Mapping[str, Any]) -> str:
    parts = []
    domains = r.get("by_domain") or {}
    if domains:
        head = list(domains)
        parts.append(f"<h3>{esc(name)}: accuracy by domain</h3>")
        parts.append(_table([*head, "Total"], [["accuracy", *[
            value_with_ci(domains[d]["accuracy"], domains[d]["ci"]) for d in head],
            value_with_ci(r.get("accuracy_strict"), r.get("ci"))],
            ["n", *[fmt(domains[d]["n"]) for d in head], fmt(r.get("n"))]], "domain"))
    if r.get("failures"):
        parts.append(f"<p class='muted'>Unparseable replies: "
                     f"{esc(', '.join(f'{k} {v}' for k, v in r['failures'].items()))}</p>")
    parts.append(_pick_rates(name, r))
    by_type = r.get("by_type") or {}
    bars = {"recall": {_NAMES.get(t, t): v["recall"] for t, v in by_type.items()
                       if v["recall"] is not None},
            "precision": {_NAMES.get(t, t): v["precision"] for t, v in by_type.items()
                          if v["precision"] is not None}}
    if any(value for part in bars.values() for value in part.values()):
        # all zero (a model that never names the right type) is said in the tables; an
        # empty chart would only draw an axis
        parts.append(f"<h3>{esc(name)}: recall and precision per error type</h3>")
        parts.append(chart(f"per type ({name})", grouped_bars_figure, bars, xlabel="share",
                           title=f"Per error type ({name})"))
    confusion = r.get("confusion") or {}
    if confusion:
        labels = list(next(iter(confusion.values())))
        matrix = [[confusion.get(g, {}).get(p, 0) for p in labels] for g in labels
                  if g in confusion]
        gold = [g for g in labels if g in confusion]
        parts.append(f"<h3>{esc(name)}: confusion between error types</h3>")
        parts.append(chart(f"confusion ({name})", confusion_figure,
                           {name: {"matrix": matrix, "labels": gold, "columns": labels,
                                   "xlabel": "predicted", "ylabel": "gold"}}))
    ablation = r.get("ablation")
    if ablation:
        conditions = ablation.get("conditions", {})
        parts.append(f"<h3>{esc(name)}: answer accuracy by input condition</h3>" + _table(
            ["n", "accuracy"], [[esc(c), fmt(v["n"]),
                                 value_with_ci(v["accuracy"], v["ci"])]
                                for c, v in conditions.items()], "condition"))
        link = ablation.get("link")
        if link:
            parts.append(_table(
                ["n right", "accuracy | right", "n wrong", "accuracy | wrong", "difference"],
                [["plain question", fmt(link["n_diagnosed_right"]),
                  fmt(link["accuracy_if_right"]), fmt(link["n_diagnosed_wrong"]),
                  fmt(link["accuracy_if_wrong"]),
                  value_with_ci(link["difference"], link.get("ci"))]], "diagnosis"))
    drop = r.get("epd_drop")
    if drop:
        split = drop.get("split", {})
        parts.append(f"<h3>{esc(name)}: ETC → EPD</h3>" + _table(
            ["EPD", "drop", "missed detections", "type changed", "unparseable",
             "gained", "detection rate", "type acc. | detected"],
            [[fmt(drop["etc_accuracy"]), fmt(drop["epd_accuracy"]),
              value_with_ci(drop["drop"], drop.get("ci")), fmt(split.get("missed_detection")),
              fmt(split.get("type_changed")), fmt(split.get("unparseable")),
              fmt(split.get("gained")), fmt(drop.get("detection_rate")),
              fmt(drop.get("type_accuracy_given_detection"))]], "ETC"))
    return "".join(parts)


def _pick_rates(name: str, r: Mapping[str, Any]) -> str:
    """How often each letter and each type was chosen, beside the uniform rate: a model
    that always answers the first letter shows as one letter at 1.0 (and, with permuted
    letters, its types near uniform) — the reading of an accuracy at chance."""
    letters, types = r.get("letter_pick_rate") or {}, r.get("type_pick_rate") or {}
    if not letters and not types:
        return ""
    uniform = 1 / (5 if r.get("protocol") in ("epd", "epd5") else 4)  # choices offered
    rows = [[esc(what), esc(_NAMES.get(k, k)), fmt(v), fmt(uniform)]
            for what, rates in (("letter", letters), ("type", types)) for k, v in rates.items()]
    return (f"<h3>{esc(name)}: what the model picks</h3>"
            + _table(["choice", "rate", "if uniform"], rows, "by"))


@register_table("diagnose")
def diagnose_table(results: dict) -> Table:
    return results_table(results, [("n", "n"), ("accuracy_strict", "accuracy (strict)"),
                                  ("accuracy_parsed", "accuracy (parsed)"),
                                  ("parse_rate", "parse rate"), ("macro_f1", "macro-F1"),
                                  ("kappa", "kappa")], "Error diagnosis")

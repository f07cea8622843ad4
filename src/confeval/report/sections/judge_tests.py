"""The report sections of ``confeval judge reruns``, ``judge position`` and ``judge length``
(kinds ``judge_reruns``, ``judge_position``, ``judge_length``): per input the numbers of
:mod:`confeval.judge.reruns` and :mod:`confeval.judge.bias` with their intervals, as tables
(the verdict above each is :mod:`confeval.report.verdicts`'). Their terminal tables are here
too."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..html import _table, esc, fmt, register_section
from ..terminal import file_names, register_table, simple_table
from ..verdicts import p_cell

__all__ = ["confidence_table", "judge_length_table", "judge_position_table", "judge_reruns_table",
           "render_judge_length", "render_judge_position", "render_judge_reruns",
           "reruns_notes", "unstable_items_table"]

_MEASURES = {"rerun_agreement": "rerun agreement", "score_token": "score token"}


def _ci(block: Mapping[str, Any] | None, key: str = "estimate", digits: int = 3) -> str:
    """"0.336 [0.317, 0.355]", or the value alone (with its note) without an interval."""
    value = (block or {}).get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{block[key]:.{digits}f}"
    if _defined(block.get("low")) and _defined(block.get("high")):
        text += f" [{block['low']:.{digits}f}, {block['high']:.{digits}f}]"
    return text


def _defined(bound: Any) -> bool:
    """An interval's bound is shown when it is a number: None (no interval in JSON) and NaN
    (no interval from too few items, in memory) are not."""
    return bound is not None and not (isinstance(bound, float) and math.isnan(bound))


def _counts(res: Mapping[str, Any]) -> str:
    excluded = res.get("excluded") or {}
    text = f"{fmt(res.get('n_read'))} rows read, {fmt(res.get('n_used'))} used"
    if excluded:
        text += "; excluded: " + ", ".join(f"{esc(k)} {fmt(v)}" for k, v in excluded.items())
    notes = res.get("notes") or {}
    if notes:
        text += "; " + ", ".join(f"{esc(k)} {fmt(v)}" for k, v in notes.items())
    return text


# ------------------------------------------------------------------ reruns
@register_section("judge_reruns")
def render_judge_reruns(section: Mapping[str, Any]) -> str:
    return "".join(_reruns(name, res) for name, res in section["results"].items())


def _reruns(name: str, res: Mapping[str, Any]) -> str:
    flipping = res["items_flipping"]
    rows = [["items whose score changed", f"{fmt(flipping['count'])} of {fmt(flipping['n'])}",
             esc(_ci(flipping, "share"))],
            ["flip rate (a rerun differs from the majority)", "",
             esc(_ci(res["flip_rate"]))],
            ["pairwise disagreement (two reruns differ)", "",
             esc(_ci(res["pairwise_disagreement"]))],
            [f"Krippendorff's alpha ({esc(res['alpha']['level'])})", "",
             esc(_ci(res["alpha"]))]]
    parts = [f"<h3>{esc(name)}</h3>",
             f"<p>{fmt(res['n_items'])} items, {_reruns_text(res['reruns'])} reruns each (layout "
             f"{esc(res['layout'])}); scores within {fmt(res['tolerance'], 2)} count as the "
             f"same. {_counts(res)}. Intervals: 95%, exact (Clopper–Pearson) for the share of "
             "items, bootstrap over items for the means and alpha.</p>",
             _table(["count", "estimate [95% interval]"], rows, "")]
    notes = [esc(note) for note in reruns_notes(res)]
    if notes:
        parts.append("<p class='muted'>" + "<br>".join(notes) + "</p>")
    unstable = _least_stable(res, 20)
    if unstable:
        parts.append("<h4>Least stable items</h4>" + _table(
            ["majority", "reruns", "flip rate [exact 95%]"],
            [[esc(i["item"]), fmt(i["answer"], 2),
              esc(", ".join("–" if v is None else f"{v:g}" for v in i["reruns"])),
              esc(_ci({"estimate": i["flip_rate"], "low": i["low"], "high": i["high"]}))]
             for i in unstable], "item"))
    conf = res.get("as_confidence")
    if conf and conf.get("measures"):
        parts.append(f"<h4>Rerun agreement as a confidence</h4><p>The reruns' majority score "
                     f"is right when within {fmt(conf['tolerance'], 2)} of the human score: "
                     f"{fmt(conf['accuracy'], 3)} of {fmt(conf['n'])} labelled items.</p>")
        parts.append(_table(["mean confidence", "ECE", "Brier", "AUROC", "AUARC"], [
            [esc(_MEASURES.get(k, k)), fmt(m["mean_confidence"], 3),
             esc(_ci({"estimate": m["ece"], **(m.get("ci") or {}).get("ece", {})})),
             esc(_ci({"estimate": m["brier"], **(m.get("ci") or {}).get("brier", {})})),
             esc(_ci({"estimate": m["auroc"], **(m.get("ci") or {}).get("auroc", {})})),
             esc(_ci({"estimate": m["auarc"], **(m.get("ci") or {}).get("auarc", {})}))]
            for k, m in conf["measures"].items()], "confidence"))
        diff = conf.get("auroc_difference")
        if diff:
            parts.append(f"<p>AUROC of rerun agreement minus the score-token probability's: "
                         f"{esc(_ci(diff))}, paired bootstrap p {p_cell(diff['p_value'])}.</p>")
    elif conf and conf.get("skipped"):
        parts.append(f"<p class='muted'>Not scored as a confidence: {esc(conf['skipped'])}</p>")
    return "".join(parts)


_ESTIMATES = {"flip_rate": "flip rate", "pairwise_disagreement": "pairwise disagreement",
              "alpha": "alpha"}


def reruns_notes(result: Mapping[str, Any]) -> list[str]:
    """Why an estimate of the reruns has no interval (or says more), once per distinct
    sentence, naming the estimates it is about: "flip rate, pairwise disagreement: 3 items
    are too few ..." rather than the same sentence twice."""
    said: dict[str, list[str]] = {}
    for key, label in _ESTIMATES.items():
        note = (result.get(key) or {}).get("note")
        if note:
            said.setdefault(note, []).append(label)
    return [f"{', '.join(labels)}: {note}" for note, labels in said.items()]


def _reruns_text(k: Any) -> str:
    return f"{k[0]}-{k[1]}" if isinstance(k, list) else str(k)


@register_table("judge_reruns")
def judge_reruns_table(results: dict) -> Table:
    """One row per input: items, reruns, items flipping, flip rate, pairwise disagreement and
    alpha, with 95% intervals."""
    table = simple_table("Rerun variability, 95% intervals", tight=True)
    for header in ("file", "k", "changed", "share changed", "flip rate", "alpha"):
        table.add_column(header, justify="left" if header == "file" else "right",
                         overflow="fold")
    for name, res in zip(file_names(results), results.values()):
        f = res["items_flipping"]
        table.add_row(name, _reruns_text(res["reruns"]), f"{f['count']:,}/{f['n']:,}",
                      _ci(f, "share", 2), _ci(res["flip_rate"], digits=2),
                      _ci(res["alpha"], digits=2))
    return table


def _least_stable(result: Mapping[str, Any], top: int) -> list:
    """The ``top`` items with the highest flip rate, then pairwise disagreement."""
    return sorted((i for i in result.get("items") or [] if i["flip_rate"] > 0),
                  key=lambda i: (-i["flip_rate"], -i["pairwise_disagreement"]))[:top]


def unstable_items_table(result: Mapping[str, Any], top: int = 5) -> Table | None:
    """The ``top`` items with the highest flip rate (None when no item flipped)."""
    items = _least_stable(result, top)
    if not items:
        return None
    changed = sum(1 for i in result["items"] if i["flip_rate"] > 0)
    table = simple_table(f"Least stable items (of {changed:,} that changed)")
    for header in ("item", "majority", "reruns", "flip rate [exact 95%]"):
        table.add_column(header, justify="left" if header in ("item", "reruns") else "right",
                         overflow="fold")
    for i in items:
        table.add_row(i["item"], f"{i['answer']:g}",
                      " ".join("-" if v is None else f"{v:g}" for v in i["reruns"]),
                      _ci({"estimate": i["flip_rate"], "low": i["low"], "high": i["high"]},
                          digits=2))
    return table


def confidence_table(result: Mapping[str, Any]) -> Table | None:
    """Rerun agreement and the score-token probability scored as confidences."""
    conf = result.get("as_confidence") or {}
    if not conf.get("measures"):
        return None
    table = simple_table(f"As confidences in the majority score ({conf['accuracy']:.3f} of "
                         f"{conf['n']:,} right: within {conf['tolerance']:g} of the human)",
                         tight=True)
    for header in ("confidence", "mean", "ECE", "AUROC", "AUARC"):
        table.add_column(header, justify="left" if header == "confidence" else "right",
                         overflow="fold")
    for key, m in conf["measures"].items():
        ci = m.get("ci") or {}
        table.add_row(_MEASURES.get(key, key), f"{m['mean_confidence']:.2f}",
                      _ci({"estimate": m["ece"], **ci.get("ece", {})}, digits=2),
                      _ci({"estimate": m["auroc"], **ci.get("auroc", {})}, digits=2),
                      _ci({"estimate": m["auarc"], **ci.get("auarc", {})}, digits=2))
    return table


# ------------------------------------------------------------------ position
def _test_row(label: str, block: Mapping[str, Any] | None) -> list[str]:
    if not block:
        return [label, "–", "–", "–"]
    if block.get("share") is None:
        return [label, "0", "–", block.get("note", "no information")]
    return [label, f"{block['k']:,} of {block['n']:,}", _ci(block, "share"),
            p_cell(block.get("p_value"))]


def _position_rows(res: Mapping[str, Any]) -> list[list[str]]:
    flips = res["flips"]
    rows = [["verdict changed with the order", f"{flips['count']:,} of {flips['n']:,}",
             _ci(flips, "share"), "–"],
            _test_row("first slot picked (exact binomial)", res["first_slot"]),
            _test_row("of changed picks, first slot both times (sign test)", res["sign_test"])]
    longer = res.get("longer") or {}
    if longer.get("judge"):
        rows.append(_test_row("judge picked the longer answer", longer["judge"]))
    if longer.get("human"):
        rows.append(_test_row("humans picked the longer answer", longer["human"]))
    agreement = res.get("agreement")
    if agreement and agreement.get("share") is not None:
        rows.append(["verdicts agreeing with the humans",
                     f"{agreement['k']:,} of {agreement['n']:,}", _ci(agreement, "share"),
                     "–"])
    return rows


@register_section("judge_position")
def render_judge_position(section: Mapping[str, Any]) -> str:
    parts = []
    for name, res in section["results"].items():
        parts += [f"<h3>{esc(name)}</h3>",
                  f"<p>{fmt(res['n_items'])} items judged in both orders; ties: AB "
                  f"{fmt(res['ties']['ab'])}, BA {fmt(res['ties']['ba'])}. {_counts(res)}. "
                  "Shares with exact (Clopper–Pearson) 95% intervals; p-values of exact "
                  "binomial tests of 1/2.</p>",
                  _table(["count", "share [95%]", "p"],
                         [[esc(c) for c in row] for row in _position_rows(res)], "")]
        slot = res.get("confidence_by_slot")
        if slot:
            parts.append("<h4>Confidence by slot</h4>")
            if slot.get("mean_difference"):
                w = slot.get("wilcoxon") or {}
                parts.append(
                    f"<p>On {fmt(slot['n'])} items picked the same way in both orders, the "
                    f"judge's confidence in its pick averages {fmt(slot['mean_first'], 3)} "
                    f"when the pick is shown first and {fmt(slot['mean_second'], 3)} when it "
                    f"is shown second: a difference of {esc(_ci(slot['mean_difference']))} "
                    f"(bootstrap 95%); Wilcoxon signed-rank p {p_cell(w.get('p_value'))} "
                    f"({esc(w.get('method') or '–')}), sign test p "
                    f"{p_cell((slot.get('sign') or {}).get('p_value'))}.</p>")
            if slot.get("note"):
                parts.append(f"<p class='muted'>{esc(slot['note'])}</p>")
    return "".join(parts)


@register_table("judge_position")
def judge_position_table(results: dict) -> Table:
    """Per input the position tests: flips, first-slot share, sign test, length."""
    table = simple_table("Position bias: shares with exact 95% intervals", tight=True)
    lead = len(results) > 1
    if lead:
        table.add_column("file", overflow="fold")
    for header in ("test", "count", "share [95%]", "p"):
        table.add_column(header, justify="left" if header == "test" else "right",
                         overflow="fold")
    for name, res in zip(file_names(results), results.values()):
        for k, row in enumerate(_position_rows(res)):
            table.add_row(*([name if k == 0 else ""] if lead else []), *row)
    return table


# ------------------------------------------------------------------ length
_SLOTS = (("judge_slope_at_fixed_human", "judge score, fixed human score"),
          ("judge_slope", "judge score"), ("human_slope", "human score"),
          ("excess_slope", "judge minus human"),
          ("confidence_slope_at_fixed_human", "confidence, fixed human score"))


_CONTROL = {"levels": "a mean per human score", "linear": "the human score as a linear term"}


@register_section("judge_length")
def render_judge_length(section: Mapping[str, Any]) -> str:
    parts = []
    for name, res in section["results"].items():
        length = res["length"]
        parts += [f"<h3>{esc(name)}</h3>",
                  f"<p>{fmt(res['n'])} answers, {fmt(length['min'], 0)}–"
                  f"{fmt(length['max'], 0)} {esc(res['length_unit'])} (median "
                  f"{fmt(length['median'], 0)}). Slopes per {fmt(res['per'], 0)} "
                  f"{esc(res['length_unit'])}, least squares; at a fixed human score: "
                  f"{_CONTROL[res['control']]}. 95% bootstrap intervals over answers. "
                  f"{_counts(res)}.</p>",
                  _table(["slope [95%]"], [[esc(label), esc(_ci(res[key]))]
                                           for key, label in _SLOTS if key in res], "")]
    return "".join(parts)


@register_table("judge_length")
def judge_length_table(results: dict) -> Table:
    """Per input the length slopes with 95% intervals."""
    first = next(iter(results.values()))
    table = simple_table(f"Length: slopes per {first['per']:g} {first['length_unit']}, 95% "
                         "intervals", tight=True)
    lead = len(results) > 1
    if lead:
        table.add_column("file", overflow="fold")
    table.add_column("slope of")
    table.add_column("estimate [95%]", justify="right")
    for name, res in zip(file_names(results), results.values()):
        rows = [(label, _ci(res[key])) for key, label in _SLOTS if key in res]
        for k, (label, value) in enumerate(rows):
            table.add_row(*([name if k == 0 else ""] if lead else []), label, value)
    return table

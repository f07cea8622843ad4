"""The report section of ``confeval judge card`` (kind ``judge_card``): the cards of one or
several judges side by side, one row per aspect, each cell the number behind the aspect, the
words that read it and the verdict sentence (:func:`confeval.report.verdicts.card_lines`);
then, per judge, the rows it read and how each number was computed. Its terminal table and
verdict lines are here too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..html import _table, esc, fmt, register_section
from ..terminal import file_labels, register_table, simple_table
from ..verdicts import CARD_LABELS, CARD_METRICS, card_lines

__all__ = ["card_verdict_lines", "items_line", "judge_card_table", "render_judge_card"]


def _metric(aspect: str, cards: Mapping[str, Mapping]) -> str:
    """The number an aspect shows, with its interval's level."""
    if aspect == "mean":
        levels = {a.get("level") for c in cards.values()
                  if (a := (c.get("aspects") or {}).get("mean") or {}).get("measured")}
        level = next(iter(levels)) if len(levels) == 1 else None
        return "mean" + (f" [{level:.0%}]" if isinstance(level, float) else "")
    if aspect in ("ranking", "reruns", "position", "length"):
        return f"{CARD_METRICS[aspect]} [95%]"
    return CARD_METRICS[aspect]


def items_line(card: Mapping[str, Any]) -> str:
    """How many rows the judge scored on the scale, and how many of them humans scored."""
    items = card.get("items") or {}
    lo, hi = card.get("scale") or ("?", "?")
    text = (f"{items.get('n_judged', 0):,} of {items.get('n_read', 0):,} rows with a judge "
            f"score on {lo}-{hi}, {items.get('n_labelled', 0):,} of them with a human score")
    excluded = items.get("excluded") or {}
    if excluded:
        text += " (excluded: " + ", ".join(f"{k} {v:,}" for k, v in excluded.items()) + ")"
    return text


@register_table("judge_card")
def judge_card_table(results: dict) -> Table:
    """One row per aspect: for one judge the number behind it and the words that read it;
    for several, one column per judge with the two in each cell."""
    labels = file_labels(results).labels
    lines = [card_lines(card) for card in results.values()]
    aspects = [a for a in CARD_LABELS if any(a in one for one in lines)]
    if len(labels) == 1:
        table = simple_table(f"Judge trust card: {labels[0]}", tight=True)
        for header in ("aspect", "measure", "value", "reading"):
            table.add_column(header, justify="right" if header == "value" else "left",
                             overflow="fold")
        for aspect in aspects:
            line = lines[0][aspect]
            table.add_row(CARD_LABELS[aspect], _metric(aspect, results),
                          "" if line.number == "–" else line.number, line.reading)
        return table
    table = simple_table("Judge trust cards", tight=True)
    table.add_column("aspect", overflow="fold")
    for label in labels:
        table.add_column(label, justify="right", overflow="fold")
    for aspect in aspects:
        cells = []
        for one in lines:
            line = one.get(aspect)
            cells.append("–" if line is None else
                         line.reading if line.number == "–" else
                         f"{line.number}\n{line.reading}")
        table.add_row(f"{CARD_LABELS[aspect]}\n{_metric(aspect, results)}", *cells,
                      end_section=True)
    return table


def card_verdict_lines(results: Mapping[str, Mapping]) -> list[str]:
    """Each judge's rows, then each measured aspect's verdict ("aspect: sentence") and the
    aspects not measured; judges named by their column's label when there are several. Why
    an aspect was not measured is said once when it is the same for every judge lacking it."""
    labels = file_labels(dict(results)).labels
    every = [card_lines(card) for card in results.values()]
    why: dict[str, set[str]] = {}
    for lines in every:
        for aspect, line in lines.items():
            if line.reading == "not measured":
                why.setdefault(aspect, set()).add(line.verdict)
    once = {a for a, reasons in why.items() if len(reasons) == 1 and len(every) > 1}
    out = []
    for label, card, lines in zip(labels, results.values(), every):
        out.append(("" if len(labels) == 1 else f"{label}: ") + items_line(card))
        missing = []
        for aspect, line in lines.items():
            if line.reading != "not measured":
                out.append(f"  {CARD_LABELS[aspect]}: {line.verdict}")
            elif aspect in once:
                missing.append(CARD_LABELS[aspect])
            else:
                missing.append(f"{CARD_LABELS[aspect]} ({line.verdict[len(_NOT):]})")
        if missing:
            out.append(f"  {_NOT}" + "; ".join(missing))
    for aspect in (a for a in CARD_LABELS if a in once):
        out.append(f"{CARD_LABELS[aspect]}: {next(iter(why[aspect]))}")
    return out


_NOT = "not measured: "


_HOW = {
    "ranking": lambda a: (f"the agreement suite on {fmt(a.get('n'))} labelled items; "
                          f"{esc(a.get('interval') or 'no interval (--bootstrap 0)')}"),
    "scoring": lambda a: (f"the intervals suite, method {esc(a.get('method'))}, "
                          f"{len(a.get('seeds') or [])} random {fmt(a.get('cal_fraction'), 2)} "
                          f"calibration / test splits of {fmt(a.get('n'))} items (seeds "
                          f"{esc(_seeds(a.get('seeds') or []))}), level "
                          f"{fmt(a.get('target'), 2)}; coverage and width are means over the "
                          "splits"),
    "accept": lambda a: (f"confeval guarantee --suite agreement: Learn then Test "
                         f"({esc(a.get('fwer'))}, {fmt(a.get('starts'))} start(s)), target "
                         f"{fmt(a.get('target'), 2)}, delta {fmt(a.get('delta'), 2)}, "
                         f"tolerance {fmt(a.get('tolerance'), 2)}, every one of "
                         f"{fmt(a.get('n_calibration'))} labelled items calibrating"),
    "mean": lambda a: (f"confeval judge mean: {esc(a.get('method'))}, "
                       f"{fmt(a.get('n_labelled'))} labelled and {fmt(a.get('n_unlabelled'))}"
                       f" unlabelled items, normal-approximation interval at level "
                       f"{fmt(a.get('level'), 2)}"),
    "reruns": lambda a: (f"confeval judge reruns of {esc(', '.join(a.get('files') or []))} "
                         f"({fmt(a.get('n_items'))} items)"),
    "position": lambda a: f"confeval judge position of {esc(a.get('file'))}",
    "length": lambda a: (f"confeval judge length of this file ({fmt(a.get('n'))} answers, "
                         f"per {fmt(a.get('per'), 0)} {esc(a.get('length_unit'))})"),
}


def _seeds(seeds: list) -> str:
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(map(str, seeds)) or "–"


@register_section("judge_card")
def render_judge_card(section: Mapping[str, Any]) -> str:
    results = section["results"]
    names = list(results)
    lines = [card_lines(card) for card in results.values()]
    rows = []
    for aspect, label in CARD_LABELS.items():
        if not any(aspect in one for one in lines):
            continue
        cells = []
        for one in lines:
            line = one.get(aspect)
            cells.append("–" if line is None else
                         f"<strong>{esc(line.number)}</strong> {esc(line.reading)}<br>"
                         f"<span class='muted'>{esc(line.verdict)}</span>")
        rows.append([f"{esc(label)}<br><span class='muted'>"
                     f"{esc(_metric(aspect, results))}</span>", *cells])
    parts = [_table([esc(n) for n in names], rows, "aspect")]
    for name, card in results.items():
        how = [f"<li>{esc(CARD_LABELS[a])}: {_HOW[a](found)}</li>"
               for a, found in (card.get("aspects") or {}).items()
               if a in _HOW and isinstance(found, Mapping) and found.get("measured")]
        parts.append(f"<h3>{esc(name)}</h3><p>{esc(card.get('source'))}: "
                     f"{esc(items_line(card))}. Judge column {esc(card.get('judge_col'))}, "
                     f"human column {esc(card.get('human_col'))}.</p>"
                     + (f"<ul>{''.join(how)}</ul>" if how else ""))
    return "".join(parts)

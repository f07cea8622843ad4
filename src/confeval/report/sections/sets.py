"""The report section of the sets suite: coverage, size and UAcc per score, per-group tables,
accuracy against set size and set-size histograms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..figures import accuracy_vs_set_size_figure, set_size_figure
from ..html import _mean_std, chart, esc, fmt, register_section, scroll, short_name
from ..terminal import blank, file_table, fit_lead_column, number, register_table

__all__ = ["render_sets"]


@register_section("sets")
def render_sets(section: Mapping[str, Any]) -> str:
    """Accuracy, ECE and coverage / size / UAcc of every set score per file (mean ± std over
    seeds), per-group tables, accuracy against set size and set-size histograms."""
    results = section["results"]
    if not results:
        return "<p>No results.</p>"
    scores = list(next(iter(results.values()))["scores"])
    head = "".join(f"<th>{esc(h)}</th>" for h in ("n test", "accuracy", "ECE", "MCE",
                                                   "entropy"))
    head += "".join(f"<th>{esc(s)} coverage</th><th>{esc(s)} size</th><th>{esc(s)} UAcc</th>"
                    for s in scores)
    rows = []
    for name, r in results.items():
        cells = [fmt(r.get("n_test")), _mean_std(r.get("accuracy")), _mean_std(r.get("ece")),
                 _mean_std(r.get("mce")), _mean_std(r.get("entropy"))]
        for s in scores:
            m = r["scores"][s]
            cells += [_mean_std(m["coverage"]), _mean_std(m["set_size"]), _mean_std(m["uacc"])]
        rows.append(f"<tr><th scope='row'>{esc(short_name(name))}</th>"
                    + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    first = next(iter(results.values()))
    alpha = first.get("alpha")
    parts = [f"<p class='muted'>alpha = {fmt(alpha)} (target coverage "
             f"{fmt(1 - alpha) if alpha is not None else '–'}); protocol "
             f"{esc(first.get('protocol', ''))}.</p>",
             "<h3>Coverage, set size and UAcc per score (mean ± std over seeds)</h3>",
             scroll(f"<table><thead><tr><th>{esc(section.get('name_header', 'file'))}</th>"
                    f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")]
    for name, r in list(results.items())[:6]:
        if r.get("groups"):
            ghead = "".join(f"<th>{esc(s)} coverage</th><th>{esc(s)} size</th>" for s in scores)
            grows = "".join(
                f"<tr><th scope='row'>{esc(g)}</th><td>{_mean_std(v.get('n_test'))}</td>"
                f"<td>{_mean_std(v.get('accuracy'))}</td>" + "".join(
                    f"<td>{_mean_std(v['scores'][s]['coverage'])}</td>"
                    f"<td>{_mean_std(v['scores'][s]['set_size'])}</td>" for s in scores)
                + "</tr>" for g, v in r["groups"].items())
            parts.append(f"<h3>By group (Mondrian calibration): {esc(short_name(name))}</h3>"
                         + scroll(f"<table><thead><tr><th>group</th><th>n test</th>"
                                  f"<th>accuracy</th>{ghead}</tr></thead>"
                                  f"<tbody>{grows}</tbody></table>"))
    parts.append("<h3>Accuracy vs set size</h3>" + _accuracy_vs_size(results, scores))
    for name, r in list(results.items())[:6]:
        if "size_distribution" in r["scores"][scores[0]]:
            parts.append(f"<h3>Set sizes: {esc(short_name(name))}</h3>"
                         + chart(f"set sizes of {name}", set_size_figure, r, scores))
    return "".join(parts)


def _mean_of(value: Any) -> float | None:
    return value.get("mean") if isinstance(value, Mapping) else value


SAME_SPOT = 0.02
"""Two points of the accuracy-vs-set-size chart are drawn on one spot when they are this
share of the axis' range apart or closer, on both axes (a marker is about that wide)."""


def coinciding_points(results: Mapping[str, Any], scores: list[str]
                      ) -> dict[tuple[float, float], list[str]]:
    """The accuracy-vs-set-size chart's points grouped by where they are drawn: {(mean set
    size, accuracy) of a group's first point: the names of the points drawn there (closer
    than :data:`SAME_SPOT` of each axis' range)}, a point named by its score, and by its
    input too when there are several."""
    points = []
    for name, r in results.items():
        accuracy = _mean_of(r.get("accuracy"))
        for score in scores:
            size = _mean_of(r["scores"][score].get("set_size"))
            if size is not None and accuracy is not None:
                who = score if len(results) == 1 else f"{short_name(name)} {score}"
                points.append((float(size), float(accuracy), who))
    if not points:
        return {}
    near = [SAME_SPOT * (max(p[k] for p in points) - min(p[k] for p in points))
            for k in (0, 1)]
    spots: dict[tuple[float, float], list[str]] = {}
    for x, y, who in points:
        spot = next(((a, b) for a, b in spots
                     if abs(a - x) <= near[0] and abs(b - y) <= near[1]), (x, y))
        spots.setdefault(spot, []).append(who)
    return spots


def _accuracy_vs_size(results: Mapping[str, Any], scores: list[str]) -> str:
    """The chart, unless every point lies on one spot (the scores of a model that gives every
    question the same sets): then a sentence says where, since a chart would show one dot.
    Points that share a spot in a chart of several are named under it."""
    spots = coinciding_points(results, scores)
    if not spots:
        return "<p class='muted'>No point to draw (no set size or accuracy).</p>"
    if len(spots) == 1:
        (size, accuracy), who = next(iter(spots.items()))
        what = (", ".join(scores) if len(results) == 1 else
                f"{len(scores)} scores of {len(results)} inputs: {', '.join(scores)}")
        return (f"<p>All {len(who)} points ({esc(what)}) lie on one spot, mean set size "
                f"{size:.3f} and accuracy {accuracy:.3f}: every score gives sets of the same "
                "mean size here, so there is no chart to draw.</p>")
    shared = [f"{esc(', '.join(who))} at set size {size:.3f}, accuracy {accuracy:.3f}"
              for (size, accuracy), who in spots.items() if len(who) > 1]
    note = (f"<p class='muted'>Drawn on one spot: {'; '.join(shared)}.</p>" if shared else "")
    return chart("accuracy vs set size", accuracy_vs_set_size_figure, results, scores) + note


@register_table("sets")
def sets_table(results: dict) -> Table:
    """One row per (file, score): long format, so it fits a narrow terminal."""
    table, leads = file_table("Conformal prediction sets",
                              ("n test", "acc", "ECE", "score", "coverage", "size", "UAcc"),
                              results)
    for first, res in zip(leads, results.values()):
        for i, (name, m) in enumerate(res["scores"].items()):
            lead = ([*first, number(res["n_test"]), number(res["accuracy"]),
                     number(res["ece"])] if i == 0 else blank([*first, "", "", ""]))
            table.add_row(*lead, name, number(m["coverage"]), number(m["set_size"]),
                          number(m["uacc"]))
    return fit_lead_column(table)

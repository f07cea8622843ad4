import re
import shutil
import subprocess

import pytest

from confeval.report import render_report
from confeval.verbs.demo import run_demo

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_unknown_section_kind_falls_back_to_raw_results():
    page = render_report({"title": "t", "sections": [{"kind": "future", "title": "F",
                                                       "results": {"a": 1}}]})
    assert "No renderer for section kind future" in page and "&quot;a&quot;: 1" in page


def test_text_is_escaped():
    page = render_report({"title": "<script>x</script>", "sections": []})
    assert "<script>x" not in page and "&lt;script&gt;" in page


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                             "(apt-get install chromium)")
def test_report_renders_in_headless_chromium(tmp_path):
    run_demo(tmp_path / "run", n=200, n_resamples=20, live=False)
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,2400",
         f"--screenshot={shot}", (tmp_path / "run" / "report.html").as_uri()],
        check=True, capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a page with figures
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         f"--user-data-dir={tmp_path / 'profile2'}", "--dump-dom",
         (tmp_path / "run" / "report.html").as_uri()],
        check=True, capture_output=True, timeout=120, text=True).stdout
    assert "Reliability diagrams" in dom and dom.count("<img") >= 6


def test_diagnose_section_shows_pick_rates_and_no_empty_chart():
    """A model that always picks letter A and never names a right type: the pick rates say
    so beside the uniform rate, and no per-type chart is drawn from all-zero bars."""
    result = {"protocol": "etc", "n": 8, "accuracy_strict": 0.0, "accuracy_parsed": 0.0,
              "parse_rate": 1.0, "ci": {"low": 0.0, "high": 0.32},
              "letter_pick_rate": {"A": 1.0},
              "type_pick_rate": {"re": 0.5, "vpe": 0.25, "kde": 0.25},
              "by_type": {t: {"recall": 0.0, "precision": 0.0} for t in ("re", "vpe", "kde")},
              "baselines": {"random": {"expected": 0.25}}}
    page = render_report({"title": "t", "sections": [{"kind": "diagnose", "title": "D",
                                                       "results": {"m": result}}]})
    assert "what the model picks" in page and "if uniform" in page
    rows = [re.sub(r"<[^>]+>", " ", row).split() for row in re.findall(r"<tr>(.*?)</tr>", page)]
    assert ["letter", "A", "1.0000", "0.2500"] in rows
    assert "Per error type" not in page


def test_nan_is_never_shown_as_a_number():
    from confeval.report.html import fmt, value_with_ci
    from confeval.report.terminal import cell, number

    nan = float("nan")
    assert fmt(nan) == "–" and number(nan) == "–" and number({"mean": nan}) == "–"
    assert value_with_ci(0.5, {"low": nan, "high": nan}) == "0.5000"
    assert cell({"ece": nan}, "ece", True) == "–"
    assert cell({"ece": 0.1, "ci": {"ece": {"low": nan, "high": nan}}}, "ece", True) == "0.100"
    page = render_report({"title": "t", "sections": [{"kind": "confidence", "title": "C",
                                                       "results": {"m": {"ece": nan,
                                                                         "auroc": 0.7}}}]})
    assert ">nan<" not in page.lower() and "[nan" not in page.lower()


def test_every_section_shows_its_exclusions_and_warnings_and_the_run_its_notes():
    """Exclusions and warnings reach the report for every kind (they were only in
    metrics.json for a diagnose run), and so do a run's failed items and records not asked."""
    result = {"protocol": "etc", "n": 4, "accuracy_strict": 0.5,
              "excluded": {"error_free_chain_in_etc": 2},
              "warnings": ["only 3 calibration items: the sets' coverage is loose"]}
    page = render_report({"title": "t", "failed_items": 1,
                          "excluded_records": {"needs_image": 4},
                          "warnings": ["a run-level warning"],
                          "sections": [{"kind": "diagnose", "title": "D",
                                        "results": {"m": result}}]})
    assert "2 excluded (error_free_chain_in_etc: 2)" in page
    assert "warning: only 3 calibration items" in page
    assert "records not asked: needs_image: 4" in page
    assert "1 item(s) failed after retries" in page and "warning: a run-level warning" in page


def test_a_compare_section_with_an_ece_below_its_interval_draws_its_forest_plot():
    """Legitimate (binned ECE is biased upward on resamples), and once the loss of the whole
    section: the figure's error bars were lengths from the point, negative here."""
    from .test_figures import ECE_BELOW_ITS_INTERVAL

    doc = {"models": ["A", "B"], "suite": "sets", "n_items_shared": 40,
           "metrics": {"ece": ECE_BELOW_ITS_INTERVAL}}
    page = render_report({"title": "t", "sections": [{"kind": "compare", "title": "C",
                                                       "results": doc}]})
    assert "could not" not in page and "not drawn" not in page
    assert "<img src='data:image/png;base64," in page
    assert "alt='forest plot of ece'" in page
    assert "0.0426<div class='ci'>[0.0441, 0.2328]<sup class='outside'" in page   # the ranked table
    # two models: their one p-value is in the pairs table, not a 2 x 2 heat map
    assert "p-value heatmap" not in page
    # the point below its interval is marked, and the footer says what the mark means
    assert page.count("†</sup>") == 1 and "† marks a value outside its own interval" in page


def test_a_two_model_compare_shows_the_difference_with_its_interval_and_p_not_a_heat_map():
    from .test_figures import ECE_BELOW_ITS_INTERVAL

    table = {**ECE_BELOW_ITS_INTERVAL, "pairs": [
        {"a": "B", "b": "A", "diff": -0.3684, "low": -0.4512, "high": -0.2301, "p": 0.00041,
         "p_holm": 0.00041, "test": "paired_bootstrap"}]}
    doc = {"models": ["B", "A"], "suite": "sets", "n_items_shared": 40,
           "metrics": {"ece": table}}
    page = render_report({"title": "t", "sections": [{"kind": "compare", "title": "C",
                                                       "results": doc}]})
    assert "<caption class='muted'>the pair</caption>" in page
    assert ("<th scope='row'>B − A</th><td data-label='difference [95%]'><span class='v'>"
            "-0.3684<div class='ci'>[-0.4512, -0.2301]</div></span></td>"
            "<td data-label='p'><span class='v'>0.00041</span></td>") in page
    assert "alt='forest plot of ece'" in page and "p-value heatmap" not in page


def _broken(*args, **kwargs):
    raise RuntimeError("the figure\nbroke")


def test_a_chart_that_cannot_be_drawn_is_named_and_its_section_keeps_its_tables(monkeypatch):
    from confeval.report import ReportProblem, render_report_checked
    from confeval.report.sections import compare

    from .test_figures import ECE_BELOW_ITS_INTERVAL

    monkeypatch.setattr(compare, "forest_figure", _broken)
    doc = {"models": ["A", "B"], "suite": "sets", "n_items_shared": 40,
           "metrics": {"ece": ECE_BELOW_ITS_INTERVAL}}
    page, problems = render_report_checked(
        {"title": "t", "sections": [{"kind": "compare", "title": "C", "results": doc},
                                    {"kind": "confidence", "title": "fine", "results": {}}]})
    assert problems == [ReportProblem("C", "forest plot of ece",
                                      "RuntimeError: the figure broke")]
    assert str(problems[0]) == ("report incomplete: section 'C': chart 'forest plot of ece' "
                                "not drawn (RuntimeError: the figure broke)")
    # in the chart's place one line names it; the tables and the other chart are there
    assert "Chart not drawn: forest plot of ece (RuntimeError: the figure broke)." in page
    assert "could not be rendered" not in page and "alt='forest plot of ece'" not in page
    assert "0.0426<div class='ci'>[0.0441, 0.2328]<sup class='outside'" in page   # ranked
    assert "<table class='compare'>" in page                              # paper table
    assert "p-value heatmap" not in page and "<h2 id='s1'>fine</h2>" in page   # two models


def test_a_section_that_cannot_be_read_is_a_problem_too():
    from confeval.report import render_report_checked

    page, problems = render_report_checked(
        {"title": "t", "sections": [{"kind": "sets", "title": "odd", "results": {"f": 1}}]})
    assert "This section could not be rendered" in page
    assert [(p.section, p.chart) for p in problems] == [("odd", None)]
    assert str(problems[0]).startswith("report incomplete: section 'odd': section not "
                                       "rendered (")


OVERCONFIDENT = {"n": 2000, "accuracy": 0.67, "mean_confidence": 0.86, "ece": 0.20,
                 "auroc": 0.74, "ci": {"accuracy": {"low": 0.65, "high": 0.69},
                                       "ece": {"low": 0.18, "high": 0.22},
                                       "auroc": {"low": 0.71, "high": 0.76}}}
VERDICT = ("overconfident: states 0.86, right 0.67 [0.65, 0.69] (ECE 0.20 [0.18, 0.22]); "
           "ranks its right answers above its wrong ones (AUROC 0.74 [0.71, 0.76])")


def test_the_page_and_every_section_open_with_the_verdicts():
    section = {"kind": "confidence", "title": "C", "description": "what it is",
               "results": {"runs/judge.csv": OVERCONFIDENT}}
    page = render_report({"title": "t", "sections": [section, {**section, "title": "D"}]})
    item = f"<li><strong>runs/judge</strong>: {VERDICT}</li>"
    contents = page.index("<ol class='contents'>")
    heading = page.index("<h2 id='s0'>")
    # in the contents under the section's link, then first thing after the section heading,
    # before its description and its tables
    assert contents < page.index(item) < heading
    after = page[heading:]
    assert after.index(item) < after.index("what it is") < after.index("<table")
    # a page of one section opens with that section, its verdict said once
    one = render_report({"title": "t", "sections": [section]})
    assert "class='contents'" not in one and one.count(item) == 1
    assert one.index("<h2 id='s0'>") < one.index(item) < one.index("what it is")


def test_a_guarantee_page_says_its_sentence_once():
    sentence = ("Answer when the confidence is at least 0.9: selective error at most 0.1 with "
                "probability 0.9.")
    result = {"guarantee": sentence, "method": "ltt", "target": 0.1, "n_calibration": 100}
    page = render_report({"title": "t", "sections": [
        {"kind": "guarantee", "title": "G", "results": {"judge.csv": result}}]})
    assert page.count(sentence) == 1
    assert "<h2 id='s0'>G</h2><ul class='verdict'><li><strong>judge</strong>: " in page


def test_the_binned_ece_note_is_only_on_a_page_that_shows_an_ece():
    note = "Binned ECE is biased upward"
    with_ece = render_report({"title": "t", "sections": [
        {"kind": "confidence", "title": "C", "results": {"j": OVERCONFIDENT}}]})
    guarantee = {"guarantee": "Answer when the confidence is at least 0.9: selective error "
                              "at most 0.1 with probability 0.9.",
                 "method": "ltt", "target": 0.1, "n_calibration": 100}
    without = render_report({"title": "t", "sections": [
        {"kind": "guarantee", "title": "G", "results": {"j": guarantee}}]})
    assert note in with_ece and note not in without
    # the intervals' note only where intervals are shown (a guarantee shows a bound)
    assert "Intervals are 95% bootstrap percentile intervals." in with_ece
    assert "Generated by confeval.</p>" in without and "Intervals are" not in without


RELIABILITY = {"edges": [0, 0.5, 1], "accuracy": [0.3, 0.8], "mean_confidence": [0.4, 0.7],
               "counts": [10, 30]}


def test_single_charts_keep_a_readable_width_and_tables_scroll_in_their_own_box():
    """A chart of one PNG is never shrunk below 0.8 of its drawn width (its 6 pt text would
    be under 7 px): on a phone it scrolls sideways in its own box."""
    from confeval.report.html import png_width, readable_width

    curve = {"coverage": [0.5, 1.0], "risk": [0.1, 0.3]}
    page = render_report({"title": "t", "sections": [
        {"kind": "confidence", "title": "C",
         "results": {f"j{k}": {**OVERCONFIDENT, "risk_coverage": curve} for k in range(4)}}]})
    uri = page.split("alt='risk–coverage curves'")[0].rsplit("<img src='", 1)[1][:-2]
    drawn = png_width(uri)
    assert drawn > 500
    assert f"alt='risk–coverage curves' style='min-width:{round(drawn * 0.8)}px'" in page
    assert (readable_width(1400), readable_width(616), readable_width(200)) == (1120, 493, 200)
    assert "table{display:block;max-width:100%;overflow-x:auto" in page
    assert "figure{overflow-x:auto;max-width:100%}" in page


def test_a_figure_of_several_panels_is_one_image_per_panel_in_a_wrapping_row():
    """#37 item 10: five reliability diagrams were one PNG of 4 x 2 panels, cut or shrunk on
    a phone. Each panel is its own image, as wide as a phone shows whole, without a minimum
    width, the legend one more; their box wraps them onto as many rows as the screen needs."""
    from confeval.report.html import png_width

    page = render_report({"title": "t", "sections": [
        {"kind": "confidence", "title": "C",
         "results": {f"judge-{k}": {**OVERCONFIDENT, "reliability": RELIABILITY}
                     for k in range(5)}}]})
    box = re.search(r"<figure class='panels' aria-label='reliability diagrams'>(.*?)</figure>",
                    page)[1]
    imgs = re.findall(r"<img class='(\w+)' src='([^']*)' alt='([^']*)'>", box)
    assert [(kind, alt) for kind, _, alt in imgs] == [
        *[("panel", f"reliability diagrams: judge-{k}") for k in range(5)],
        ("legend", "reliability diagrams: legend")]
    assert all(png_width(uri) <= 380 for _, uri, _ in imgs)   # each fits a 420 px screen
    assert "min-width" not in box
    assert ("figure.panels{display:flex;flex-wrap:wrap;" in page
            and "figure.panels img{max-width:100%;height:auto}" in page)


def test_a_table_that_a_narrow_screen_would_cut_is_stacked_there():
    """#37 item 10, no cut table at 420 px: a table is shown one block per row, each cell
    beside its column's header and its interval beneath its value, on a screen narrower than
    it can be (rounded up to 40 px); on a wider screen it is unchanged, and a table that fits
    a phone is never stacked."""
    from confeval.report.html import stack_below, stack_css, stack_wide_tables, table_min_width

    page = render_report({"title": "t", "sections": [
        {"kind": "confidence", "title": "C",
         "results": {"a.csv": OVERCONFIDENT, "b.csv": OVERCONFIDENT}}]})
    table = page[page.index("<table"):page.index("</table>") + len("</table>")]
    below = stack_below(table)   # the labels are attributes: the same as before marking
    assert 420 < below <= 1000 and table.startswith(f"<table class='stack-{below}'>")
    assert "<thead><tr><th>judge</th><th>n</th><th>accuracy</th>" in table   # wide screens
    assert ("<tr><th scope='row'>a</th><td data-label='n'><span class='v'>2,000</span></td>"
            "<td data-label='accuracy'><span class='v'>0.6700<div class='ci'>[0.6500, "
            "0.6900]</div></span></td><td data-label='mean conf.'>") in table
    assert table.count("data-label=") == 2 * 11                 # every cell but the name
    assert stack_css(below) in page and f"@media (max-width:{below - 1}px){{" in page
    assert f"table.stack-{below} thead{{display:none}}" in page
    assert page.count("@media") == 1

    narrow = ("<table><thead><tr><th>quantity</th><th>value</th></tr></thead><tbody><tr>"
              "<th scope='row'>selective error</th><td>0.1500</td></tr></tbody></table>")
    assert stack_below(narrow) <= 320 and stack_wide_tables(narrow) == narrow
    guarantee = {"guarantee": "Answer when the confidence is at least 0.9: selective error "
                              "at most 0.1 with probability 0.9.",
                 "method": "ltt", "target": 0.1, "n_calibration": 100}
    page = render_report({"title": "t", "sections": [
        {"kind": "guarantee", "title": "G", "results": {"j": guarantee}}]})
    assert "<table" in page and "stack-" not in page and "@media" not in page

    # the narrowest a column can be: its longest word, an interval's in the small type; a
    # line breaks after a hyphen, never at a no-break space
    def cell(inner):
        return table_min_width(f"<table><tr><td>{inner}</td></tr></table>")

    assert cell("llava-v1.6-34b") == pytest.approx(6 * 8.3 + 19)
    assert cell("&lt;&nbsp;0.0001") == pytest.approx(8 * 8.3 + 19)
    assert cell("0.5<div class='ci'>[0.4000, 0.6000]</div>") == pytest.approx(8 * 6.9 + 19)


PROBE = ("(function(d){const w=d.documentElement.clientWidth;"
         "const cut=[...d.querySelectorAll('table')].filter(t=>t.scrollWidth>t.clientWidth+1"
         "||t.getBoundingClientRect().right>w+1).map(t=>t.querySelector('th').textContent);"
         "const stacked=[...d.querySelectorAll('thead')].filter("
         "h=>d.defaultView.getComputedStyle(h).display==='none').length;"
         "document.body.setAttribute('data-probe',JSON.stringify({width:w,cut,stacked}));"
         "})(this.contentDocument)")
"""Run in the page holding the report in an iframe: the iframe's width, the first header of
every table wider than its box or than the screen, and how many tables are stacked."""


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                             "(apt-get install chromium)")
@pytest.mark.parametrize("width, stacked", [(360, True), (420, True), (1400, False)])
def test_no_table_is_cut_on_a_phone_in_headless_chromium(tmp_path, width, stacked):
    """The report laid out by Chromium in a frame as wide as a phone (a window cannot be made
    narrower than 500 px): no table sticks out of its box, and the wide ones are stacked."""

    import numpy as np

    from confeval.metrics.compare import compare_metric

    rng = np.random.default_rng(0)
    names = [f"model-{j}-of-the-comparison" for j in range(6)]
    compared = compare_metric(rng.normal(np.linspace(0.1, 0.3, 6), 0.05, size=(100, 6)),
                              list(np.linspace(0.1, 0.3, 6)), names, higher_is_better=True)
    page = render_report({"title": "t", "sections": [
        {"kind": "confidence", "title": "C",
         "results": {f"judge-{k}.csv": OVERCONFIDENT for k in range(3)}},
        {"kind": "compare", "title": "K", "results": {"models": names,
                                                      "metrics": {"x": compared}}}]})
    probe = _probe_in_chromium(page, width, PROBE, tmp_path)
    assert width - 20 <= probe["width"] <= width          # less a scroll bar
    assert probe["cut"] == []
    assert (probe["stacked"] >= 2) == stacked


def _probe_in_chromium(page: str, width: int, script: str, tmp_path) -> dict:
    """``page`` in an iframe ``width`` px wide in headless Chromium; ``script`` runs on load
    and leaves its JSON findings in a ``data-probe`` attribute of the dumped DOM."""
    import html
    import json

    # the probe waits (up to 200 polls 25 ms apart) until every chart box that scrolls has
    # its faded edge: a scroll timeline is sampled at a frame after load, and a probe run at
    # once on a loaded machine read the edge's property before then; the virtual time
    # budget keeps the dump waiting for the polls
    probe = script.replace("this.contentDocument", "frame.contentDocument")
    wait = ("const frame=this;const tick=n=>{const d=frame.contentDocument;"
            "const settled=[...d.querySelectorAll('figure:not(.panels)')].every(f=>"
            "f.scrollWidth<=f.clientWidth+1||d.defaultView.getComputedStyle(f)"
            ".getPropertyValue('--cue').trim()!=='0px');"
            "if(settled||n>=200){" + probe + "}else setTimeout(()=>tick(n+1),25);};tick(0)")
    frame = tmp_path / "frame.html"
    frame.write_text(f"<!DOCTYPE html><html><body style='margin:0'><iframe width='{width}' "
                     f"height='1000' style='border:0' onload=\"{html.escape(wait)}\" "
                     f"srcdoc=\"{html.escape(page)}\"></iframe></body></html>")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1500,1100",
         "--virtual-time-budget=10000", "--dump-dom",
         frame.as_uri()], check=True, capture_output=True, timeout=120, text=True).stdout
    return json.loads(html.unescape(re.search(r'data-probe="([^"]*)"', dom)[1]))


CHART_PROBE = (
    "(function(d){const w=d.documentElement.clientWidth;const bad=[];"
    "for(const i of d.querySelectorAll('img')){const r=i.getBoundingClientRect();"
    "const scale=r.width/i.naturalWidth;"
    "if(scale<0.75){bad.push([i.alt,'shrunk',Math.round(scale*100)/100]);continue;}"
    "if(r.left>=-1&&r.right<=w+1)continue;"
    "let box=i.parentElement;while(box&&box!==d.body&&!['auto','scroll'].includes("
    "d.defaultView.getComputedStyle(box).overflowX))box=box.parentElement;"
    "const b=box&&box!==d.body?box.getBoundingClientRect():null;"
    "if(!b||b.right>w+1||i.closest('figure.panels'))bad.push([i.alt,'cut',Math.round(r.right)]);}"
    "const cue=[...d.querySelectorAll('figure:not(.panels)')].map(f=>[f.scrollWidth>"
    "f.clientWidth+1,d.defaultView.getComputedStyle(f).getPropertyValue('--cue').trim()]);"
    "document.body.setAttribute('data-probe',JSON.stringify({width:w,bad,cue,"
    "imgs:d.querySelectorAll('img').length}));})(this.contentDocument)")
"""Run in the page holding the report in an iframe: every image shown below 0.75 of its
drawn size (its text too small to read), and every image reaching past the screen's edge
unless it is a single chart in a box that scrolls sideways and itself fits the screen (a
panel of a figure of several is never out of sight); and, for every single chart, whether
its box scrolls sideways and the width of its faded edge (the cue that there is more)."""


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                             "(apt-get install chromium)")
@pytest.mark.parametrize("width", [420, 1400])
def test_no_chart_is_cut_or_shrunk_on_a_phone_in_headless_chromium(tmp_path, width):
    """#37 item 10: at 420 px five reliability diagrams showed two, and the forest plots and
    heat map of 26 models were shrunk to unreadable labels. Every panel is now whole on the
    screen, and a chart wider than the screen scrolls in its own box at a readable size."""

    import numpy as np

    from confeval.metrics.compare import compare_metric

    rng = np.random.default_rng(0)
    names = [f"model-{j}" for j in range(26)]
    means = np.linspace(0.1, 0.3, 26)
    compared = compare_metric(rng.normal(means, 0.05, size=(100, 26)), list(means), names,
                              higher_is_better=True)
    page = render_report({"title": "t", "sections": [
        {"kind": "confidence", "title": "C",
         "results": {f"judge-{k}.csv": {**OVERCONFIDENT, "reliability": RELIABILITY}
                     for k in range(5)}},
        {"kind": "compare", "title": "K", "results": {"models": names,
                                                      "metrics": {"x": compared}}}]})
    probe = _probe_in_chromium(page, width, CHART_PROBE, tmp_path)
    assert width - 20 <= probe["width"] <= width          # less a scroll bar
    assert probe["bad"] == []
    # a chart whose box scrolls fades out at its right edge; one that fits does not
    assert probe["cue"] and all(cue == ("40px" if scrolls else "0px")
                                for scrolls, cue in probe["cue"])
    assert any(scrolls for scrolls, _ in probe["cue"]) == (width < 1000)
    assert probe["imgs"] == page.count("<img") >= 5 + 1 + 2   # panels, legend, forest, map


def test_charts_name_each_result_as_its_table_and_verdict_do(monkeypatch):
    """A score of calibrated.csv: its row, its verdict and its chart panel all say
    "calibrated" (the charts said "calibrated.csv"); two files that would share a short name
    keep their whole names in the charts."""
    import confeval.report.html as report_html

    drawn = []

    def spy(data):
        drawn.append(list(data))
        return "data:image/png;base64,"

    monkeypatch.setattr(report_html, "reliability_figure", spy)
    monkeypatch.setattr(report_html, "risk_coverage_figure", spy)
    reliability = {"edges": [0, 1], "accuracy": [0.5], "mean_confidence": [0.5], "counts": [2]}
    curve = {"coverage": [0.5, 1.0], "risk": [0.0, 0.5]}
    result = {**OVERCONFIDENT, "reliability": reliability, "risk_coverage": curve}

    def page(names):
        return render_report({"title": "t", "sections": [
            {"kind": "confidence", "title": "C", "results": {n: result for n in names}}]})

    shown = page(["calibrated.csv", "runs/over.jsonl"])
    assert drawn == [["calibrated", "runs/over"]] * 2
    assert "<th scope='row'>calibrated</th>" in shown and "<strong>runs/over</strong>" in shown
    drawn.clear()
    page(["judge.csv", "judge.jsonl"])
    assert drawn == [["judge.csv", "judge.jsonl"]] * 2


def test_risk_coverage_curves_that_coincide_are_named():
    """calibrated and overconfident (the simulator's same answers, confidences in the same
    order) draw one risk-coverage curve: the legend lists three, the chart shows two. The
    page names the ones drawn on one line; different curves get no note."""
    same = {"coverage": [0.5, 1.0], "risk": [0.1, 0.3]}
    other = {"coverage": [0.5, 1.0], "risk": [0.3, 0.3]}

    def page(curves):
        return render_report({"title": "t", "sections": [
            {"kind": "confidence", "title": "C",
             "results": {n: {**OVERCONFIDENT, "risk_coverage": c} for n, c in curves.items()}}]})

    shown = page({"calibrated.csv": same, "overconfident.csv": dict(same),
                  "uninformative.csv": other})
    assert ("Drawn on one line, so only the last is seen: calibrated, overconfident (the same "
            "curve: their confidences order the answers alike).") in shown
    assert "Drawn on one line" not in page({"a": same, "b": other})

def _sets_result(size: float, accuracy: float) -> dict:
    return {"n_test": 9, "accuracy": accuracy, "alpha": 0.1,
            "scores": {s: {"coverage": 1.0, "set_size": size, "uacc": 0.1}
                       for s in ("lac", "aps")}}


def test_accuracy_vs_set_size_points_on_one_spot_are_said_not_drawn():
    same = render_report({"title": "t", "sections": [{"kind": "sets", "title": "S", "results": {
        f"model ({g})": _sets_result(5.0, 0.222) for g in ("marginal", "by type")}}]})
    assert ("All 4 points (2 scores of 2 inputs: lac, aps) lie on one spot, mean set size "
            "5.000 and accuracy 0.222: every score gives sets of the same mean size here"
            in same)
    assert "alt='accuracy vs set size'" not in same
    two = render_report({"title": "t", "sections": [{"kind": "sets", "title": "S", "results": {
        "a": _sets_result(5.0, 0.2), "b": _sets_result(2.0, 0.8)}}]})
    assert "alt='accuracy vs set size'" in two
    assert "Drawn on one spot: a lac, a aps at set size 5.000, accuracy 0.200; b lac, b aps" \
        in two


def test_interval_methods_with_the_same_numbers_are_one_row():
    from confeval.report.sections.intervals import merged_rows

    rows = [["naive", "1.0", "4.0"], ["cqr", "1.0", "4.0"], ["ordinal_aps", "1.0", "3.87"],
            ["lvd", "1.0", "4.0"]]
    assert merged_rows(rows) == [["naive, cqr, lvd", "1.0", "4.0"],
                                 ["ordinal_aps", "1.0", "3.87"]]


def test_a_compare_section_shows_whole_ranks_even_from_an_older_document():
    """Rank intervals are whole numbers (2.0 is shown "2"); a document written before they
    were (a percentile of mid-ranks, 2.9875) is shown as it is, not rounded into a claim."""
    from .test_figures import ECE_BELOW_ITS_INTERVAL

    table = dict(ECE_BELOW_ITS_INTERVAL)   # its ranks are 2.0 and 1.0
    doc = {"models": ["A", "B"], "suite": "sets", "n_items_shared": 40,
           "metrics": {"ece": table}}
    page = render_report({"title": "t", "sections": [{"kind": "compare", "title": "C",
                                                       "results": doc}]})
    # whole, never broken over two lines in a narrow column
    assert "2 <span class='muted nowrap'>[2–2]</span>" in page and "[2.0" not in page
    old = {**table, "models": {**table["models"],
                               "A": {**table["models"]["A"], "rank_low": 1.9875}}}
    page = render_report({"title": "t", "sections": [{"kind": "compare", "title": "C",
                                                       "results": {**doc, "metrics":
                                                                   {"ece": old}}}]})
    assert "[1.9875–2]" in page


@pytest.mark.parametrize("k, rows, caption", [
    (2, 1, "the pair"), (5, 10, "all 10 pairs"),
    (6, 5, "each model against the next ranked (5 of 15 pairs; every pair is in "
           "metrics.json)")])
def test_the_pairs_table_has_every_pair_of_five_models_and_the_neighbours_of_more(k, rows,
                                                                                   caption):
    import numpy as np

    from confeval.metrics.compare import compare_metric

    rng = np.random.default_rng(k)
    reps = rng.normal(np.linspace(0.1, 0.3, k), 0.05, size=(100, k))
    names = [f"m{j}" for j in range(k)]
    table = compare_metric(reps, list(np.linspace(0.1, 0.3, k)), names,
                           higher_is_better=True)
    page = render_report({"title": "t", "sections": [{"kind": "compare", "title": "C",
                                                       "results": {"models": names,
                                                                   "metrics": {"x": table}}}]})
    pairs_html = page.split("<table class='pairs")[1].split("</table>")[0]
    assert f"<caption class='muted'>{caption}</caption>" in pairs_html
    assert pairs_html.count("<tr><th scope='row'>") == rows
    if k == 6:   # neighbours in rank order: m5 − m4, m4 − m3, ...
        shown = [f"m{j} − m{j - 1}" for j in range(5, 0, -1)]
        assert [c.split("</th>")[0] for c in pairs_html.split("<th scope='row'>")[1:]] == shown

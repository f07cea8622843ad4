import shutil
import subprocess

import pytest

from confeval.demo import run_demo
from confeval.report import render_report

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
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,2400",
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

"""The documentation site: ``mkdocs build --strict`` passes (a broken link, anchor or
docstring reference fails it), the pages fetch nothing from the network, and in headless
Chromium the home page, a tutorial and an API page render from the file system with no
request leaving the machine. Needs the docs extra (``pip install '.[docs]'``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PAGES = ["index.html", "tutorials/guarantee.html", "api/guarantee.html"]

pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install "
                    "'.[docs]')")
pytest.importorskip("material", reason="mkdocs-material is not installed (pip install "
                    "'.[docs]')")
pytest.importorskip("mkdocstrings_handlers.python", reason="mkdocstrings-python is not "
                    "installed (pip install '.[docs]')")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_site_builds_strictly_with_every_page(site):
    for page in PAGES:
        assert (site / page).is_file(), page
    api = (site / "api" / "guarantee.html").read_text(encoding="utf-8")
    assert "ltt_threshold" in api and "Hoeffding" in api   # rendered from the docstrings


def test_no_page_loads_anything_from_the_network(site):
    fetched = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""")
    css_import = re.compile(r"""@import\s+url\(\s*["']?(?:https?:)?//|url\(\s*["']?https?://""")
    for path in site.rglob("*"):
        if path.suffix == ".html":
            text = path.read_text(encoding="utf-8")
            # a link a reader may follow is fine; a script, style or font loaded is not
            loaded = [m for m in re.finditer(r"<(script|link|img|iframe)\b[^>]*>", text)
                      if fetched.search(m.group(0))]
            assert not loaded, (path, loaded[0].group(0))
        elif path.suffix == ".css":
            assert not css_import.search(path.read_text(encoding="utf-8")), path


def _open(page: Path, tmp: Path) -> tuple[str, list[str]]:
    """(the DOM headless Chromium renders from ``page``, the network requests the page made):
    requests read from Chromium's net log, the page's being those with an initiator (the
    browser's own update and account checks have none)."""
    log = tmp / "net.json"
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", f"--user-data-dir={tmp / 'profile'}", f"--log-net-log={log}",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        check=True, capture_output=True, timeout=120, text=True).stdout
    text = log.read_text(encoding="utf-8", errors="replace").rstrip()
    try:
        net = json.loads(text)
    except json.JSONDecodeError:   # Chromium may exit before closing the event list
        net = json.loads(text.rstrip(",") + "]}")
    start = net["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    made = [e["params"]["url"] for e in net["events"] if e["type"] == start
            and e.get("params", {}).get("initiator", "not an origin") != "not an origin"]
    return dom, made


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                             "(apt-get install chromium)")
def test_the_request_check_sees_a_page_that_fetches(tmp_path):
    page = tmp_path / "fetching.html"
    page.write_text('<html><body><img src="http://example.invalid/x.png"></body></html>')
    _, made = _open(page, tmp_path)
    assert made == ["http://example.invalid/x.png"]


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                             "(apt-get install chromium)")
@pytest.mark.parametrize("page", PAGES)
def test_pages_render_from_the_file_system_with_no_request_out(site, tmp_path, page):
    dom, made = _open(site / page, tmp_path)
    assert "confeval" in dom and "<article" in dom
    assert made == []

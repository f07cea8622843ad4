"""Every ``python`` block of the documentation runs as written, the blocks of a page in order
sharing their names (mktestdocs), in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

mktestdocs = pytest.importorskip("mktestdocs", reason="mktestdocs is not installed "
                                 "(pip install '.[dev]')")

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "```python" in p.read_text(encoding="utf-8"))


def test_some_page_has_python_examples():
    assert DOCS / "python.md" in PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the pages name the clone's fixtures through $REPO, as their shell blocks do: an install
    # that is not editable (CI's) has no clone beside the package
    monkeypatch.setenv("REPO", str(ROOT))
    mktestdocs.check_md_file(fpath=page, memory=True)

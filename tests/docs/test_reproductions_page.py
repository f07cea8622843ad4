"""docs/reproductions.md is what benchmarks/reproductions_page.py computes now from the shared
data and the tests' reference values: the page cannot drift from the code (regenerate it with
the script after a change)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"


@pytest.mark.skipif(not (SHARED / "vlm-uncertainty-bench").is_dir(),
                    reason=f"shared data absent ({SHARED})")
def test_the_page_is_what_the_script_writes():
    spec = importlib.util.spec_from_file_location("reproductions_page",
                                                  ROOT / "benchmarks" / "reproductions_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = (ROOT / "docs" / "reproductions.md").read_text(encoding="utf-8")
    assert module.page() == written, "run python benchmarks/reproductions_page.py"
    assert "| 52 |" in written and "Gemini 2.5 Flash" in written

"""The README's Python examples of the suites run as written (in a temporary folder)."""

import os
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_suite_examples_run(tmp_path):
    text = README.read_text(encoding="utf-8")
    section = text.split("### Suites from Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)  # our own documentation
    finally:
        os.chdir(here)
    assert 0 <= namespace["res"]["crs"] <= 1

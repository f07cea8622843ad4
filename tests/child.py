"""Running a snippet in a fresh Python process: what it imports is its own, not the test
session's (which has transformers loaded already)."""

from __future__ import annotations

import subprocess
import sys


def fresh_python(code: str, timeout: float = 300) -> list[str]:
    """The words ``code`` printed in a new interpreter; a failure shows its stderr."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()

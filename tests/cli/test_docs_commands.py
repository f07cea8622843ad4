"""The documentation's shell examples run as written: every ``bash`` block of the getting-
started page and of each tutorial, in order, in one working folder per page (``../shared`` is
the shared data where it exists; a block that needs it is skipped without), in-process; and
where a ``text`` block follows a command block it is that block's printed output, word for
word. Install blocks (``pip install``) are what CI runs (``.ci/run``).

Why our own runner: the doc-test plugins run each shell block in a subprocess, without the
variables an earlier line set; in-process runs take a second, not a Python start-up each, and
let the shown output be compared with what the command prints."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from confeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SHARED = ROOT.parent / "shared"
PAGES = [DOCS / "getting-started.md", *sorted((DOCS / "tutorials").glob("*.md"))]
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)=(\S+)(?:\s+#.*)?$")


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block, indentation removed, in order."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        start = _FENCE.match(lines[i])
        if not start:
            i += 1
            continue
        indent, language, body = len(start.group(1)), start.group(2), []
        i += 1
        while i < len(lines) and not _FENCE.match(lines[i]):
            body.append(lines[i][indent:])
            i += 1
        out.append((language, "\n".join(body)))
        i += 1
    return out


def _run_block(code: str, env: dict[str, str], capsys) -> str:
    printed = []
    for line in code.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        assign = _ASSIGN.match(line)
        if assign:
            env[assign.group(1)] = os.path.expandvars(assign.group(2))
            continue
        assert line.startswith("confeval "), f"not a confeval command: {line}"
        expanded = re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), m.group(0)), line)
        status = main(shlex.split(expanded, comments=True)[1:])   # no shell: no glob
        captured = capsys.readouterr()
        assert status == 0, f"{line}\n{captured.err}"
        printed.append(captured.out)
    return "".join(printed)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_the_pages_commands_run_and_print_what_is_shown(page, tmp_path, capsys, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED)
    monkeypatch.chdir(work)
    # the pages show tables as an 80-column terminal draws them, whatever this one is
    monkeypatch.setenv("COLUMNS", "80")
    env: dict[str, str] = {}
    found = blocks(page.read_text(encoding="utf-8"))
    ran = 0
    for k, (language, code) in enumerate(found):
        if language != "bash" or "pip install" in code:
            continue
        if "../shared" in code and not SHARED.is_dir():
            pytest.skip(f"shared data absent ({SHARED}); the rest of {page.name} needs it")
        printed = _run_block(code, env, capsys)
        ran += 1
        if k + 1 < len(found) and found[k + 1][0] == "text":
            assert printed.split() == found[k + 1][1].split(), printed
    assert ran, f"{page.name} has no command to run"

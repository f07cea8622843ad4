"""The Concepts page names, for every convention, the tests that pin it: each reference
``tests/<path>.py::<test>`` (a parametrized id ``[...]`` allowed) names an existing file that
defines that test function, and every ``##`` section names at least one. Read with ``ast``:
the test modules are not imported."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "concepts.md"
REFERENCE = re.compile(r"(tests/[\w/.-]+?\.py)((?:::\w+)+)(?:\[[^\]`\s]*\])?")
FENCE = re.compile(r"^\s*(```|~~~)")


def sections(text: str) -> dict[str, str]:
    """{heading: body} of every ``##`` section (fenced blocks are not headings)."""
    out: dict[str, list[str]] = {}
    current, fenced = None, False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            current = line[3:].strip()
            assert current not in out, f"two sections named {current!r}"
            out[current] = []
            continue
        if current is not None:
            out[current].append(line)
    return {heading: "\n".join(lines) for heading, lines in out.items()}


def references(text: str) -> list[tuple[str, list[str]]]:
    """(file, [class..., test]) of every ``tests/…py::name`` reference, ``[...]`` stripped."""
    return [(m.group(1), m.group(2).split("::")[1:]) for m in REFERENCE.finditer(text)]


@cache
def _tree(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)


def defines(path: str, names: list[str]) -> bool:
    """Whether the module at ``path`` defines the test ``names`` (``[Class, ..., function]``)
    at module level or in the named classes."""
    body = _tree(path).body
    for name in names[:-1]:
        cls = [n for n in body if isinstance(n, ast.ClassDef) and n.name == name]
        if not cls:
            return False
        body = cls[0].body
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == names[-1]
               for n in body)


def test_the_reference_pattern_reads_plain_and_parametrized_names():
    text = ("Pinned by: `tests/a/test_x.py::test_one`, `tests/test_y.py::test_two[p-1]` and "
            "`tests/b/test_z.py::TestGroup::test_three`.")
    assert references(text) == [("tests/a/test_x.py", ["test_one"]),
                                ("tests/test_y.py", ["test_two"]),
                                ("tests/b/test_z.py", ["TestGroup", "test_three"])]


def test_every_named_test_exists():
    text = PAGE.read_text(encoding="utf-8")
    found = references(text)
    assert len(found) >= 10, "the page names (almost) no test"
    missing = []
    for path, names in found:
        if not names[-1].startswith("test"):
            missing.append(f"{path}::{'::'.join(names)} (not a test name)")
        elif not (ROOT / path).is_file():
            missing.append(f"{path} (no such file)")
        elif not defines(path, names):
            missing.append(f"{path}::{'::'.join(names)} (not defined there)")
    assert not missing, missing


def test_every_section_names_a_test_that_pins_it():
    found = sections(PAGE.read_text(encoding="utf-8"))
    assert len(found) >= 10, list(found)
    unpinned = [heading for heading, body in found.items()
                if "Pinned by" not in body or not references(body)]
    assert not unpinned, f"sections without a test that pins them: {unpinned}"

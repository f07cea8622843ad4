"""The install and developer commands of the documentation, checked without running them in
the test suite (they would build a virtual environment, run this very suite, or take tens of
minutes); every other shell block is run by ``tests/cli/test_docs_commands.py``.

* The install commands (the home page's block, the getting-started page's) are the README's
  first code block, which CI's ``.ci/run`` extracts and executes line by line in a fresh
  virtual environment: compared here with what ``.ci/run``'s own ``awk`` line extracts.
* The development page: every benchmark script it names exists and answers ``--help`` (the
  scripts without options, which would start the benchmark instead, are loaded without
  running their ``__main__`` part); the ``ruff`` and ``pytest`` lines name paths that exist,
  options the tools are configured with and extras that ``pyproject.toml`` declares."""

from __future__ import annotations

import re
import runpy
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_docs_commands import blocks, commands, is_developer_block

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CI = ROOT / ".ci" / "run"


def _bash_blocks(page: Path) -> list[list[str]]:
    return [commands(code) for language, code in blocks(page.read_text(encoding="utf-8"))
            if language == "bash"]


def _readme_commands() -> list[str]:
    first = next(code for language, code in blocks((ROOT / "README.md").read_text(
        encoding="utf-8")) if language)
    return commands(first)


def _development_lines() -> list[str]:
    (block,) = [b for b in _bash_blocks(DOCS / "development.md") if b]
    assert is_developer_block("\n".join(block))
    return block


def test_the_home_page_shows_the_two_commands_ci_runs():
    readme = _readme_commands()
    assert len(readme) == 2, "CI requires exactly two commands in the README's first block"
    assert _bash_blocks(DOCS / "index.md")[0] == readme
    # the getting-started page's install line is the README's first command
    install = [b for b in _bash_blocks(DOCS / "getting-started.md")
               if is_developer_block("\n".join(b))]
    assert install == [[readme[0]]]


def test_ci_runs_the_readmes_first_block_and_its_test_command():
    script = CI.read_text(encoding="utf-8")
    assert """awk '/^```/{n++; next} n==1 && NF' README.md""" in script
    assert 'bash -euo pipefail -c "${commands[0]}"' in script
    assert 'bash -euo pipefail -c "${commands[1]}"' in script
    if shutil.which("awk"):   # what CI extracts is what the pages show
        done = subprocess.run(["awk", "/^```/{n++; next} n==1 && NF", "README.md"], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        assert [line.strip() for line in done.stdout.splitlines()] == _readme_commands()
    tests = _readme_commands()[1]
    assert tests.endswith(".venv/bin/pytest") and "pip install '.[dev]'" in tests
    install = _readme_commands()[0]
    assert "pip install '.[local]'" in install and "confeval demo --out confeval-demo" in install


def _benchmarks() -> list[str]:
    return [m.group(1) for line in _development_lines()
            if (m := re.match(r"\.venv/bin/python (benchmarks/\w+\.py)", line))]


def test_the_development_page_names_every_benchmark_script():
    named = set(_benchmarks())
    scripts = {p.relative_to(ROOT).as_posix() for p in (ROOT / "benchmarks").glob("*.py")}
    assert named <= scripts, named - scripts
    # reproductions_page.py writes docs/reproductions.md and is documented there
    assert scripts - named <= {"benchmarks/reproductions_page.py"}, scripts - named


@pytest.mark.parametrize("script", _benchmarks())
def test_each_benchmark_script_starts(script):
    path = ROOT / script
    source = path.read_text(encoding="utf-8")
    if "argparse" in source:
        done = subprocess.run([sys.executable, script, "--help"], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "usage:" in done.stdout
        line = next(x for x in _development_lines() if script in x)
        for option in re.findall(r"--[a-z][a-z-]+", line.split("#", 1)[-1]):
            assert option in done.stdout, f"{script}: {option} is not an option"
    else:   # no options: --help would start the benchmark; load it without its main part
        assert 'if __name__ == "__main__":' in source
        runpy.run_path(str(path), run_name="docs_check")


def test_the_ruff_pytest_and_install_lines_name_what_exists():
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads pyproject.toml")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    seen = set()
    for line in _development_lines():
        words = shlex.split(line, comments=True)
        env = [w for w in words if re.match(r"^[A-Z_]+=", w)]
        words = words[len(env):]
        tool = Path(words[0]).name
        seen.add(tool)
        if tool == "pip":
            assert words[1:3] == ["install", "-e"]
            (extra,) = re.fullmatch(r"\.\[(\w+)\]", words[3]).groups()
            assert extra in extras
        elif tool == "ruff":
            assert words[1] == "check" and "ruff" in " ".join(extras["dev"])
            assert "ruff" in pyproject["tool"]
            for path in words[2:]:
                assert (ROOT / path).exists(), path
        elif tool == "pytest":   # the suite holds the unit, parity and doctest tests
            assert pyproject["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
            assert (ROOT / "tests" / "test_doctests.py").is_file()
            for path in words[1:]:
                assert (ROOT / path).exists(), path
            if env == ["CONFEVAL_SLOW=1"]:
                assert "CONFEVAL_SLOW" in (ROOT / words[1]).read_text(encoding="utf-8")
        else:
            assert tool == "python" and words[1].startswith("benchmarks/"), line
    assert seen == {"pip", "ruff", "pytest", "python"}

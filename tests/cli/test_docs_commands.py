"""The documentation's shell examples run as written: every ``bash`` block of every page under
``docs/``, in order, in one working folder per page, in-process; and where a ``text`` block
follows a command block it is that block's printed output, word for word. Every line must
exit 0. The only blocks not run here are install and developer commands (``pip install``,
``pytest``, ``ruff``, the benchmark scripts): ``tests/docs/test_dev_commands.py`` checks them
(the README's two install commands are what CI's ``.ci/run`` executes), and
:func:`test_every_block_not_run_here_is_checked_there` makes sure no other block escapes.

What a page may rely on, as a reader's shell would give it:

* ``source .venv/bin/activate`` (the README's virtual environment) is taken as done;
* ``NAME=value`` lines set variables, ``$NAME`` expands them; an unquoted word with ``*``,
  ``?`` or ``[`` is expanded to the sorted matching paths, as the shell does (quoted globs such
  as ``'s2_lp*'`` reach confeval unexpanded);
* ``../shared`` is the shared public data where it exists (``ROOT/../shared``); a block that
  needs it is skipped without, with the rest of its page;
* variables the reader supplies from their own machine, which the test supplies from this one
  (a page's own assignment to them shows the reader's value and is overridden here):
  ``REPO`` (the root of the confeval clone), ``OPENAI_URL`` and ``OPENAI_URL2`` (OpenAI-
  compatible servers: here local :class:`~confeval.backends.stub_server.StubServer`\\ s that
  answer every prompt confeval sends in the format it asks for), with ``OPENAI_API_KEY`` set;
* the response cache is a fresh file per page (``CONFEVAL_CACHE``), so nothing is replayed
  from an earlier run.

Why our own runner: the doc-test plugins run each shell block in a subprocess, without the
variables an earlier line set; in-process runs take a second, not a Python start-up each, and
let the shown output be compared with what the command prints."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shlex
from contextlib import ExitStack
from pathlib import Path

import pytest

from confeval.backends.stub_server import StubServer, default_reply
from confeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SHARED = ROOT.parent / "shared"
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)=(\S+)(?:\s+#.*)?$")
_WORD = re.compile(r"""(?:'[^']*'|"[^"]*"|[^\s'"])+""")
# install and developer commands: checked by tests/docs/test_dev_commands.py, not run here
_DEVELOPER = re.compile(r"^(python3? -m venv|\.venv/bin/|pip |CONFEVAL_SLOW=1 )")
# the virtual environment the README's install made, activated: here confeval is importable
# and main() is called in-process, so the line has nothing left to do
_ACTIVATE = re.compile(r"^(source|\.) \.venv/bin/activate(\s+#.*)?$")
PROVIDED = ("REPO", "OPENAI_URL", "OPENAI_URL2")


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


def commands(code: str) -> list[str]:
    """The block's lines that do something (no blank line, no comment line)."""
    return [line.strip() for line in code.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def is_developer_block(code: str) -> bool:
    """Install or developer commands (pip, pytest, ruff, benchmarks), not confeval's."""
    lines = commands(code)
    return bool(lines) and all(_DEVELOPER.match(line) for line in lines)


def _pages() -> list[Path]:
    """Every page with a bash block to run."""
    return [page for page in sorted(DOCS.rglob("*.md"))
            if any(language == "bash" and not is_developer_block(code)
                   for language, code in blocks(page.read_text(encoding="utf-8")))]


def expand(text: str, env: dict[str, str]) -> str:
    """``$NAME`` and ``${NAME}`` replaced by the page's variables, else the environment's."""
    return re.sub(r"\$\{?(\w+)\}?",
                  lambda m: env.get(m.group(1), os.environ.get(m.group(1), m.group(0))), text)


def argv(line: str, env: dict[str, str]) -> list[str]:
    """The words of a command line as the shell gives them: variables expanded, comments
    dropped, quotes removed, unquoted globs expanded to the sorted matching paths."""
    out: list[str] = []
    for word in _WORD.findall(expand(line, env)):
        if word.startswith("#"):
            break
        (text,) = shlex.split(word)
        unquoted = re.sub(r"""'[^']*'|"[^"]*\"""", "", word)
        matches = sorted(glob.glob(text)) if re.search(r"[*?\[]", unquoted) else []
        out.extend(matches or [text])   # no match: the word as written, as bash leaves it
    return out


def _run_block(code: str, env: dict[str, str], capsys) -> str:
    printed = []
    for line in commands(code):
        if _ACTIVATE.match(line):
            continue
        assign = _ASSIGN.match(line)
        if assign:
            if assign.group(1) not in PROVIDED:
                env[assign.group(1)] = expand(assign.group(2), env)
            continue
        assert line.startswith("confeval "), f"not a confeval command: {line}"
        status = main(argv(line, env)[1:])
        captured = capsys.readouterr()
        assert status == 0, f"{line}\n{captured.err}"
        printed.append(captured.out)
    return "".join(printed)


def stub_reply(body: dict) -> tuple[str, list[tuple[str, float]]]:
    """What a cooperative model would answer to each prompt confeval sends, drawn from a hash
    of the prompt: step verdicts to a process-judge prompt, a 1-5 rating with its score
    tokens' log-probabilities to a grading prompt, P or N to EPD's "is there an error?",
    rewrites to a perturbation prompt, else the stub's option letter (with its log-probability
    over the letters)."""
    messages = body.get("messages") or [{}]
    text = json.dumps(messages)
    digest = hashlib.sha256(text.encode()).digest()
    last = messages[-1].get("content", "")
    last = last if isinstance(last, str) else json.dumps(last)
    if "<evaluation>" in text:   # a process judge: one verdict per step
        n = last.count("\nStep ") + last.startswith("Step ")
        rows = ", ".join(f'["Step {k + 1}", {int(digest[k] > 90)}, '
                         f'{0.05 + 0.9 * digest[k] / 255:.3f}, ""]' for k in range(n))
        reply = f"<evaluation>[{rows}]</evaluation>"
        return reply, [(reply, -0.1)]
    if "grade from 1 to 5" in text:   # a 1-5 judge: the rating token and its alternatives
        logits = [digest[k] / 40 for k in range(5)]
        top = sorted(((str(k + 1), v - max(logits) - 0.01) for k, v in enumerate(logits)),
                     key=lambda t: -t[1])
        return top[0][0], top
    if "Reply P if an error is present" in last:   # EPD's first stage: is there an error?
        verdict = "P" if digest[0] > 60 else "N"
        return verdict, [(verdict, -0.1)]
    if '"rewrites"' in last:   # a step rewrite: the sentence with an adverbial in front
        sentence = last.rsplit("Sentence:", 1)[-1].strip()
        reply = json.dumps({"rewrites": [{"transformation": "adverbial_position",
                                          "text": "Indeed, " + sentence}]})
        return reply, [(reply, -0.1)]
    return default_reply(body)


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_the_pages_commands_run_and_print_what_is_shown(page, tmp_path, capsys, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED)
    monkeypatch.chdir(work)
    # the pages show tables as an 80-column terminal draws them, whatever this one is
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "responses.sqlite"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-test")
    text = page.read_text(encoding="utf-8")
    env: dict[str, str] = {"REPO": str(ROOT)}
    found = blocks(text)
    ran = 0
    with ExitStack() as stack:
        if "OPENAI_URL" in text:
            env["OPENAI_URL"] = stack.enter_context(StubServer(reply=stub_reply)).base_url
            env["OPENAI_URL2"] = stack.enter_context(StubServer(reply=stub_reply)).base_url
        for k, (language, code) in enumerate(found):
            if language != "bash" or is_developer_block(code):
                continue
            if "../shared" in code and not SHARED.is_dir():
                pytest.skip(f"shared data absent ({SHARED}); the rest of {page.name} needs it")
            printed = _run_block(code, env, capsys)
            ran += 1
            if k + 1 < len(found) and found[k + 1][0] == "text":
                assert printed.split() == found[k + 1][1].split(), printed
    assert ran, f"{page.name} has no command to run"


def test_every_block_not_run_here_is_checked_there():
    """A shell block is either run above or is an install/developer block that
    tests/docs/test_dev_commands.py checks (the README's install commands, the development
    page); no other shell dialect (``sh``, ``console``, ``shell``) hides a command."""
    readme = [commands(code) for language, code in blocks((ROOT / "README.md").read_text(
        encoding="utf-8")) if language]
    for page in sorted(DOCS.rglob("*.md")):
        rel = page.relative_to(DOCS).as_posix()
        for language, code in blocks(page.read_text(encoding="utf-8")):
            assert language not in ("sh", "shell", "console", "zsh"), \
                f"{rel}: a {language} block is run by nobody; write it as bash"
            if language == "bash" and is_developer_block(code):
                assert rel == "development.md" or set(commands(code)) <= set(readme[0]), \
                    f"{rel}: install commands that are not the README's: {code}"
            # what else a page may hold: python (tests/docs/test_python_examples.py), text
            # (output compared above, or formulas), and json records, which must parse
            assert language in ("bash", "python", "text", "json"), \
                f"{rel}: a {language or 'plain'} block is checked by nobody"
            if language == "json":
                for line in code.splitlines():
                    assert isinstance(json.loads(line), dict), f"{rel}: {line}"


def test_the_runner_expands_like_the_shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("b.csv", "a.csv", "c.txt"):
        (tmp_path / name).write_text("")
    env = {"D": "."}
    assert argv("confeval x $D/*.csv --cols 's2_lp*' \"y z\"  # a comment", env) == \
        ["confeval", "x", "./a.csv", "./b.csv", "--cols", "s2_lp*", "y z"]
    assert argv("confeval x none*.csv", env) == ["confeval", "x", "none*.csv"]


def test_a_broken_example_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AssertionError, match="missing.csv"):
        _run_block("confeval score missing.csv -c confidence -y correct", {}, capsys)
    with pytest.raises(AssertionError, match="not a confeval command"):
        _run_block("rm -rf runs", {}, capsys)

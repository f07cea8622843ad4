"""The README is the first screen: the two commands CI runs (``.ci/run`` reads them), one
example per suite, and links into the documentation that resolve."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_first_block_holds_the_two_commands():
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, flags=re.S).group(1)
    commands = [line for line in first.splitlines() if line.strip()]
    assert len(commands) == 2
    assert "confeval demo" in commands[0] and "pytest" in commands[1]


def test_links_and_images_resolve():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert local and all((ROOT / t).exists() for t in local), \
        [t for t in local if not (ROOT / t).exists()]


def test_one_example_per_suite():
    text = README.read_text(encoding="utf-8")
    for command in ("score", "agreement", "sets score", "intervals score", "steps score",
                    "diagnose", "measures", "compare", "guarantee"):
        assert f"confeval {command}" in text, command


def _examples() -> list[str]:
    """The lines of the README's "One example per suite" block."""
    from tests.cli.test_docs_commands import blocks, commands

    block = next(code for language, code in blocks(README.read_text(encoding="utf-8"))
                 if language == "bash" and "confeval guarantee" in code)
    return commands(block)


def test_the_examples_that_need_no_data_or_model_run(tmp_path, monkeypatch, capsys):
    """Every example that needs neither the shared data nor a live model runs as written (from
    the clone's root: the lm-eval fixture is found by its relative path), and the guarantee
    example certifies what its comment says: a threshold of 0.988 answering a quarter of the
    README's judge at a 15% error."""
    import json

    from confeval.cli import main
    from tests.cli.test_docs_commands import argv

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    ran = []
    for line in _examples():
        if line.startswith("source .venv/bin/activate"):
            continue   # the install's environment: here confeval is called in-process
        if re.match(r"[A-Z]+=", line) or "$" in line or " run " in line:
            continue   # the shared data (../shared/data) or a live model
        for command in line.split(" && "):
            words = argv(command, {})
            assert words[0] == "confeval", line
            assert main(words[1:]) == 0, (command, capsys.readouterr().err)
            ran.append(words[1])
    assert ran.count("simulate") == 2 and "guarantee" in ran and "score" in ran
    policy = json.loads((tmp_path / "runs" / "policy" / "policy.json").read_text())
    assert round(policy["threshold"], 3) == 0.988 and policy["bound"] <= 0.15
    answered = policy["guarantee"].split("; ")[-1]
    n, total = (int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", answered)[:2])
    assert total == 2000 and 0.24 <= n / total <= 0.26
    line = next(x for x in _examples() if x.startswith("confeval guarantee"))
    assert "at least 0.988 (a quarter of the items): at most 15%" in line
    assert "--target 0.1 certifies nothing on this judge" in line
    capsys.readouterr()
    assert main(["guarantee", "judge.csv", "-c", "confidence", "-y", "correct", "--target",
                 "0.1", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)["guarantee"]
    assert said["threshold"] is None and "stops at its first threshold" in said["guarantee"]


def test_confeval_is_on_the_path_before_it_is_called():
    """The install puts confeval in .venv/bin: the README's examples and the getting-started
    page activate that environment before their first bare `confeval` command."""
    from tests.cli.test_docs_commands import blocks, commands

    for page in (README, ROOT / "docs" / "getting-started.md"):
        lines = [line for language, code in blocks(page.read_text(encoding="utf-8"))
                 if language == "bash" for line in commands(code)]
        first = next(k for k, line in enumerate(lines) if line.startswith("confeval "))
        assert any(line.startswith("source .venv/bin/activate") for line in lines[:first]), \
            page.name

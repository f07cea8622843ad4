"""The README is the first screen: the two commands CI runs (``.ci/run`` reads them), one
example per suite, and links into the documentation that resolve."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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

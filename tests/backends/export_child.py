"""A child process for test_local_export: ``_export`` with a fake, slow model writer.

    python export_child.py TARGET WORK MODE [PEER_LOG]

WORK is a folder shared with the test and the other child: each child marks ``ready-<pid>``,
waits for ``go`` (so both start together), and the fake writer marks ``run-<pid>`` each time
the export body runs. MODE:

* ``lock``: the writer holds on until PEER_LOG (the other child's stderr) says it is waiting
  for the lock, so the second process has demonstrably queued behind the first;
* ``nolock``: flock fails as on a filesystem without it; both writers run, and each waits
  for the other to have written everything, so both reach the final rename together;
* ``hang``: the writer writes half the files, marks ``writing`` and sleeps (to be killed).

Prints the target's files as JSON {name: text} on success.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from pathlib import Path

from confeval.backends import local

FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
PATIENCE = 120.0  # seconds before a wait gives up: a hang guard, not a measurement


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"pid {os.getpid()}: gave up waiting for {what}")
        time.sleep(0.01)


def count(work: Path, prefix: str) -> int:
    return sum(1 for p in work.iterdir() if p.name.startswith(prefix))


def fake_writer(work: Path, mode: str, peer_log: Path | None):
    def write(gguf: Path, folder: Path) -> None:
        (work / f"run-{os.getpid()}").touch()
        if mode == "lock":
            def peer_waits() -> bool:
                if count(work, "run-") > 1:
                    raise AssertionError("a second export ran while the first held the lock")
                return peer_log.is_file() and "waiting for it" in peer_log.read_text()
            wait_for(peer_waits, "the other process to wait for the lock")
        if mode == "nolock":
            wait_for(lambda: count(work, "run-") == 2, "the other export to start")
        for i, name in enumerate(FILES):
            # each file names its writer, so a mix of two exports would show
            (folder / name).write_text(f"{name} written by {os.getpid()}\n", encoding="utf-8")
            time.sleep(0.05)  # slow, so the other process acts while this one writes
            if mode == "hang" and i == 1:
                (work / "writing").touch()
                time.sleep(PATIENCE)
        if mode == "nolock":
            (work / f"written-{os.getpid()}").touch()
            wait_for(lambda: count(work, "written-") == 2, "the other export to finish writing")
    return write


def main() -> None:
    target, work, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    peer_log = Path(sys.argv[4]) if len(sys.argv) > 4 else None
    local._write_model = fake_writer(work, mode, peer_log)
    if mode == "nolock":
        def no_flock(fd, operation):
            raise OSError(errno.ENOLCK, "No locks available")
        local.fcntl.flock = no_flock
    (work / f"ready-{os.getpid()}").touch()
    wait_for(lambda: (work / "go").exists(), "the go signal")
    local._export(Path("unused.gguf"), target)
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(target.iterdir())}
    print(json.dumps(files))


if __name__ == "__main__":
    main()

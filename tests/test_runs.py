import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import confeval
from confeval.runs import (
    RunFolder,
    RunLockedError,
    RunMismatchError,
    SymlinkRefusedError,
    check_output_folder,
    dumps,
    load_run_records,
    to_jsonable,
    write_file,
    write_run_folder,
)


def test_json_is_strict_and_converts_numpy():
    text = dumps({"a": np.float32(0.5), "b": np.nan, "c": np.arange(3), "d": [np.inf, 1]})
    assert json.loads(text) == {"a": 0.5, "b": None, "c": [0, 1, 2], "d": [None, 1]}
    assert to_jsonable({1: np.bool_(True)}) == {"1": True}


def test_run_folder_round_trip(tmp_path):
    run = RunFolder(tmp_path / "run")
    run.write_run({"suite": "demo", "seed": 0})
    run.write_records([{"id": 1, "p": 0.5}])
    run.append_records([{"id": 2, "p": np.nan}])
    run.write_metrics({"ece": np.float64(0.1)})
    info = run.read_run()
    assert info["config"] == {"suite": "demo", "seed": 0}
    assert info["versions"]["numpy"] == np.__version__
    lines = run.file("records.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in lines] == [{"id": 1, "p": 0.5}, {"id": 2, "p": None}]
    assert run.read_metrics() == {"ece": 0.1}
    assert not list(run.path.glob("*.tmp"))


def test_missing_run_folder_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        RunFolder(tmp_path / "nothing", create=False)
    with pytest.raises(FileNotFoundError, match="no metrics.json"):
        RunFolder(tmp_path).read_metrics()


def test_a_start_that_failed_before_its_first_record_does_not_lock_the_folder(tmp_path):
    from confeval.runs import RunFolder, RunMismatchError, check_config

    run = RunFolder(tmp_path / "r")
    check_config(run, {"command": "run", "options": {"similarity": "embedding"}})
    # no record was written (the encoder was missing): the corrected command may start
    check_config(run, {"command": "run", "options": {"similarity": "jaccard"}})
    assert run.read_run()["config"]["options"]["similarity"] == "jaccard"
    run.append_records([{"item_id": "a"}])
    with pytest.raises(RunMismatchError, match="--similarity 'jaccard'"):
        check_config(run, {"command": "run", "options": {"similarity": "embedding"}})


# --------------------------------------------------------------------------------------------
# Hostile folders (issue #36): no write follows a symlink, a folder is written as one
# transaction by one writer, reading never writes.

SECRET = b"the target outside the run folder\n"


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry below ``folder``: a file's bytes, a link's target, a folder's marker."""
    out: dict[str, object] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes()
    return out


def beside(folder: Path) -> list[str]:
    """The private names confeval keeps beside ``folder`` (lock, temporary folders)."""
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}."))


def write_scoring_folder(out: Path, *, policies: int = 1, command: str = "score",
                         force: bool = False) -> None:
    with write_run_folder(out, command=command, force=force) as folder:
        folder.write_run({"command": command, "policies": policies})
        folder.write_metrics({"n": policies})
        folder.write_report("<html></html>")
        for k in range(1, policies + 1):
            folder.write_json("policy.json" if policies == 1 else f"policy-{k}.json", {"k": k})


@pytest.fixture
def outside(tmp_path):
    target = tmp_path / "outside.txt"
    target.write_bytes(SECRET)
    return target


@pytest.mark.parametrize("name", ["report.html", "compare.csv", "metrics.json.tmp",
                                  "records.jsonl", "policy.json"])
def test_a_symlink_in_a_folder_is_refused_before_any_write(tmp_path, outside, name):
    old = tmp_path / "D"
    write_scoring_folder(old)
    (old / name).unlink(missing_ok=True)
    (old / name).symlink_to(outside)
    before = snapshot(old)
    for attempt in (lambda: RunFolder(old),
                    lambda: check_output_folder(old, "score"),
                    lambda: check_output_folder(old, "score", force=True),
                    lambda: write_scoring_folder(old),
                    lambda: write_scoring_folder(old, force=True)):
        with pytest.raises(SymlinkRefusedError, match=f"{old / name} is a symbolic link") as exc:
            attempt()
        assert "\n" not in str(exc.value) and isinstance(exc.value, ValueError)
    assert outside.read_bytes() == SECRET and snapshot(old) == before
    assert beside(old) == []


@pytest.mark.parametrize("name", ["report.html", "compare.csv", "metrics.json.tmp",
                                  "metrics.json"])
def test_a_symlink_planted_after_the_check_is_replaced_never_followed(tmp_path, outside, name):
    run = RunFolder(tmp_path / "D")
    (run.path / name).symlink_to(outside)  # after RunFolder's check: the write itself is safe
    run.write_text("compare.csv", "a,b\n")
    run.write_metrics({"ece": 0.1})
    run.write_report("<html></html>")
    assert outside.read_bytes() == SECRET
    for written in ("compare.csv", "metrics.json", "report.html"):
        assert not (run.path / written).is_symlink() and (run.path / written).is_file()
    assert run.read_metrics() == {"ece": 0.1}
    assert not [p for p in run.path.iterdir() if p.name.endswith(".tmp") and p.name != name]


def test_appending_or_resuming_through_a_symlinked_records_file_is_refused(tmp_path, outside):
    outside.write_bytes(b'{"item_id": "x"}\n{"item_id": "cut')  # a tail resuming would cut
    run = RunFolder(tmp_path / "D")
    run.write_run({"command": "run"})
    (run.path / "records.jsonl").symlink_to(outside)
    with pytest.raises(SymlinkRefusedError, match="records.jsonl is a symbolic link"):
        run.append_records([{"item_id": "y"}])
    with pytest.raises(SymlinkRefusedError, match="records.jsonl is a symbolic link"):
        with run.lock():
            pass
    with pytest.raises(SymlinkRefusedError, match="records.jsonl is a symbolic link"):
        RunFolder(run.path)
    assert outside.read_bytes() == b'{"item_id": "x"}\n{"item_id": "cut'


def test_a_live_run_refuses_to_resume_a_folder_whose_records_are_a_symlink(tmp_path, outside):
    from confeval.backends import ScriptedBackend
    from confeval.tasks import arith_mc
    from confeval.verbs.run import live_part as get_suite
    from confeval.verbs.run import run_suite

    items = arith_mc(4, seed=0)
    suite = get_suite("sets")
    backend = ScriptedBackend(scorer=lambda messages, letter: -1.0, capabilities={"score"})
    options = suite.Options(bootstrap=0)
    run_suite(suite, backend, items, tmp_path / "r", config={"n": 4}, options=options)
    records = tmp_path / "r" / "records.jsonl"
    outside.write_bytes(records.read_bytes()[:-10])  # as if cut by a kill
    before = outside.read_bytes()
    records.unlink()
    records.symlink_to(outside)
    with pytest.raises(SymlinkRefusedError, match="records.jsonl is a symbolic link"):
        run_suite(suite, backend, items, tmp_path / "r", config={"n": 4}, options=options)
    assert outside.read_bytes() == before


@pytest.mark.parametrize("kind", ["linked", "dangling"])
def test_a_symlinked_or_dangling_out_is_refused_before_anything_is_written(tmp_path, kind):
    real = tmp_path / "real"
    real.mkdir()
    out = tmp_path / kind
    out.symlink_to(real if kind == "linked" else tmp_path / "nowhere" / "run")
    for attempt in (lambda: check_output_folder(out, "score"),
                    lambda: check_output_folder(out, "score", force=True),
                    lambda: RunFolder(out),
                    lambda: write_scoring_folder(out, force=True)):
        with pytest.raises(SymlinkRefusedError, match=f"{out} is a symbolic link"):
            attempt()
    assert list(real.iterdir()) == [] and not (tmp_path / "nowhere").exists()
    assert beside(out) == []


def test_a_symlink_deeper_in_the_folder_or_as_its_lock_is_refused(tmp_path, outside):
    out = tmp_path / "D"
    write_scoring_folder(out)
    (out / "inputs").mkdir()
    (out / "inputs" / "x.jsonl").symlink_to(outside)
    with pytest.raises(SymlinkRefusedError, match="inputs/x.jsonl is a symbolic link"):
        write_scoring_folder(out)
    (out / "inputs" / "x.jsonl").unlink()
    (tmp_path / ".D.lock").symlink_to(outside)
    with pytest.raises(SymlinkRefusedError, match=r"\.D\.lock is a symbolic link"):
        write_scoring_folder(out)
    with pytest.raises(SymlinkRefusedError, match=r"\.D\.lock is a symbolic link"):
        with RunFolder(out).lock():
            pass
    assert outside.read_bytes() == SECRET


def test_file_names_stay_inside_the_folder_and_subfolders_are_made(tmp_path, outside):
    run = RunFolder(tmp_path / "D")
    run.write_json("inputs/a.json", {"a": 1})
    assert json.loads((run.path / "inputs" / "a.json").read_text()) == {"a": 1}
    for bad in ("../escape.json", "/abs.json", "inputs/../../x.json", "", "a//b.json"):
        with pytest.raises(ValueError, match="not a file name inside a run folder"):
            run.write_json(bad, {})
    (run.path / "linked").symlink_to(tmp_path)  # a subfolder that is a link is never entered
    with pytest.raises(SymlinkRefusedError, match="linked is a symbolic link"):
        run.write_text("linked/outside.txt", "overwritten")
    assert outside.read_bytes() == SECRET and not (tmp_path / "escape.json").exists()


def test_write_file_replaces_a_file_atomically_and_refuses_a_link(tmp_path, outside):
    page = tmp_path / "page.html"
    write_file(page, "<html>1</html>")
    write_file(page, "<html>2</html>")
    assert page.read_text() == "<html>2</html>"
    assert sorted(os.listdir(tmp_path)) == ["outside.txt", "page.html"]  # no temporary file
    link = tmp_path / "link.html"
    link.symlink_to(outside)
    with pytest.raises(SymlinkRefusedError, match="link.html is a symbolic link"):
        write_file(link, "<html></html>")
    assert outside.read_bytes() == SECRET


def test_a_rewrite_with_fewer_files_leaves_none_of_the_old_run(tmp_path):
    out = tmp_path / "D"
    write_scoring_folder(out, policies=2)
    assert sorted(os.listdir(out)) == ["metrics.json", "policy-1.json", "policy-2.json",
                                       "report.html", "run.json"]
    write_scoring_folder(out, policies=1)
    assert sorted(os.listdir(out)) == ["metrics.json", "policy.json", "report.html",
                                       "run.json"]
    assert json.loads((out / "run.json").read_text())["config"]["policies"] == 1
    assert beside(out) == []


def test_an_exception_inside_the_transaction_changes_nothing(tmp_path):
    out = tmp_path / "D"
    write_scoring_folder(out, policies=2)
    before = snapshot(out)
    with pytest.raises(KeyError, match="boom"):
        with write_run_folder(out, command="score") as folder:
            folder.write_run({"command": "score", "policies": 0})
            folder.write_metrics({"half": "written"})
            assert folder.target == out and folder.path.parent == out.parent
            assert folder.path.name.startswith(".D.tmp-") and folder.path != out
            raise KeyError("boom")
    assert snapshot(out) == before and beside(out) == []
    with pytest.raises(RuntimeError, match="wrote no run.json"):
        with write_run_folder(out, command="score") as folder:
            folder.write_metrics({})
    assert snapshot(out) == before and beside(out) == []
    new = tmp_path / "new"
    with pytest.raises(KeyError):
        with write_run_folder(new, command="score") as folder:
            folder.write_run({"command": "score"})
            raise KeyError("boom")
    assert not new.exists() and beside(new) == []


def test_the_output_folder_rules_apply_inside_the_transaction(tmp_path):
    out = tmp_path / "D"
    write_scoring_folder(out, command="compare")
    before = snapshot(out)
    with pytest.raises(RunMismatchError, match="holds the results of `confeval compare`"):
        write_scoring_folder(out, command="guarantee")
    assert snapshot(out) == before
    write_scoring_folder(out, command="guarantee", force=True)
    assert json.loads((out / "run.json").read_text())["config"]["command"] == "guarantee"
    # a folder of files confeval did not write would be deleted by the swap: refused even
    # with --force, and left as it was
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(RunMismatchError, match="did not write .notes.txt."):
        write_scoring_folder(mine, force=True)
    assert (mine / "notes.txt").read_text() == "keep me" and beside(mine) == []
    for bad in (".", "..", " "):
        with pytest.raises(RunMismatchError, match="--out"):
            write_scoring_folder(Path(bad) if bad.strip() else bad)


def test_two_writers_at_once_one_is_refused_and_the_folder_is_the_other_s(tmp_path):
    out = tmp_path / "D"
    write_scoring_folder(out, policies=2)
    start = threading.Barrier(2)
    tried = threading.Event()
    outcome: dict[str, object] = {}

    def writer(tag: str) -> None:
        start.wait()
        try:
            with write_run_folder(out, command="score") as folder:
                folder.write_run({"command": "score", "writer": tag})
                folder.write_metrics({"writer": tag})
                folder.write_json(f"only-{tag}.json", {})
                # hold the folder until the other writer has tried: the two overlap for sure
                assert tried.wait(timeout=120)
        except RunLockedError as exc:
            outcome[tag] = exc
            tried.set()
        else:
            outcome[tag] = "written"

    threads = [threading.Thread(target=writer, args=(tag,)) for tag in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert len(outcome) == 2 and list(outcome.values()).count("written") == 1
    winner = next(tag for tag, v in outcome.items() if v == "written")
    loser = next(v for v in outcome.values() if v != "written")
    # the holder's pid when it had written it yet (a few microseconds after its lock)
    assert f"{out} is being written by another process" in str(loser)
    assert "(pid" not in str(loser) or f"(pid {os.getpid()})" in str(loser)
    assert sorted(os.listdir(out)) == ["metrics.json", f"only-{winner}.json", "run.json"]
    assert json.loads((out / "metrics.json").read_text()) == {"writer": winner}
    assert beside(out) == []


def test_a_live_run_and_a_whole_folder_writer_share_one_lock(tmp_path):
    out = tmp_path / "D"
    run = RunFolder(out)
    run.write_run({"command": "run"})
    with run.lock():
        assert beside(out) == [".D.lock"]
        with pytest.raises(RunLockedError, match="being written by another process"):
            write_scoring_folder(out, command="run")
        with pytest.raises(RunLockedError, match="being written by another process"):
            with RunFolder(out).lock():
                pass
    assert beside(out) == []
    with write_run_folder(out, command="run") as folder:
        folder.write_run({"command": "run"})
        with pytest.raises(RunLockedError, match="being written by another process"):
            with RunFolder(out).lock():
                pass
    assert beside(out) == []


CHILD = """
import sys, time
from pathlib import Path
from confeval.runs import write_run_folder
out, ready = Path(sys.argv[1]), Path(sys.argv[2])
with write_run_folder(out, command="score") as folder:
    folder.write_run({"command": "score", "writer": "child"})
    folder.write_metrics({"writer": "child"})
    ready.write_text("inside")
    time.sleep(600)
"""


def _child(code: str, out: Path, ready: Path) -> subprocess.Popen:
    """``code`` in a new interpreter that imports this confeval, with ``out`` and ``ready``
    as its arguments."""
    src = str(Path(confeval.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", code, str(out), str(ready)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


LIVE_CHILD = """
import sys, time
from pathlib import Path
from confeval.runs import RunFolder
out, ready = Path(sys.argv[1]), Path(sys.argv[2])
with RunFolder(out).lock():
    (out / ".run.json.0123456789abcdef.tmp").write_text("{")   # a write before its rename
    ready.write_text("inside")
    time.sleep(600)
"""


def test_a_folder_another_process_is_writing_is_said_to_be_so_before_its_files_are_judged(
        tmp_path):
    """A second live run that checked the folder while the first was mid-write (its run.json
    still a temporary file) was told the folder held files confeval did not write; the lock
    is now looked at first, with or without --force. Once the writer is gone, the leftover is
    judged as before."""
    out, ready = tmp_path / "D", tmp_path / "ready"
    proc = _child(LIVE_CHILD, out, ready)
    try:
        _wait_for(ready, proc)
        lock_before = (tmp_path / ".D.lock").read_bytes()
        for force in (False, True):
            with pytest.raises(RunLockedError, match=f"another process \\(pid {proc.pid}\\)"):
                check_output_folder(out, "run", force=force, suite="sets")
        assert (tmp_path / ".D.lock").read_bytes() == lock_before   # looked at, not written
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    with pytest.raises(RunMismatchError, match="holds files confeval did not write"):
        check_output_folder(out, "run", suite="sets")
    check_output_folder(out, "run", force=True, suite="sets")   # the lock is free now


def test_the_lock_this_process_holds_is_not_anothers(tmp_path):
    out = tmp_path / "D"
    run = RunFolder(out)
    run.write_run({"command": "run", "suite": "sets"})
    with run.lock():
        check_output_folder(out, "run", suite="sets")


def test_a_writer_killed_mid_transaction_leaves_the_old_folder_and_is_cleaned_up(tmp_path):
    out, ready = tmp_path / "D", tmp_path / "ready"
    write_scoring_folder(out, policies=2)
    before = snapshot(out)
    proc = _child(CHILD, out, ready)
    try:
        _wait_for(ready, proc)
        with pytest.raises(RunLockedError, match=f"another process \\(pid {proc.pid}\\)"):
            write_scoring_folder(out)
        assert snapshot(out) == before
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert snapshot(out) == before  # the killed run left the old folder whole
    stale = beside(out)
    assert ".D.lock" in stale and any(n.startswith(".D.tmp-") for n in stale)
    write_scoring_folder(out, policies=1)  # the kernel dropped the lock; the leftovers go
    assert beside(out) == []
    assert sorted(os.listdir(out)) == ["metrics.json", "policy.json", "report.html",
                                       "run.json"]


def test_a_swap_killed_between_its_renames_is_rolled_back_by_the_next_writer(tmp_path):
    out = tmp_path / "D"
    write_scoring_folder(out, policies=2)
    before = snapshot(out)
    # the state a kill between the two renames leaves: the old run renamed away, the new one
    # complete but not in place
    old = tmp_path / f".D.old-{'a' * 16}"
    out.rename(old)
    new = tmp_path / f".D.tmp-{'b' * 16}"
    new.mkdir()
    (new / "run.json").write_text("{}")
    with pytest.raises(KeyError):
        with write_run_folder(out, command="score"):
            raise KeyError("after the recovery")
    assert snapshot(out) == before and beside(out) == []
    # the state a kill after the swap leaves: the new run in place, the old one beside
    old.mkdir()
    (old / "run.json").write_text("{}")
    write_scoring_folder(out, policies=1)
    assert "policy.json" in os.listdir(out) and beside(out) == []


def test_reading_records_never_changes_the_file(tmp_path):
    path = tmp_path / "records.jsonl"
    data = b'{"item_id": "a"}\n{"item_id": "b"}\n{"item_id": "c", "p": 0.'
    path.write_bytes(data)
    records = load_run_records(path)
    assert [r["item_id"] for r in records] == ["a", "b"] and records.incomplete == 1
    assert path.read_bytes() == data
    # a whole record that lacks only its newline (a file written by hand) is a record
    whole = b'{"item_id": "a"}\n{"item_id": "b"}'
    path.write_bytes(whole)
    records = load_run_records(path)
    assert [r["item_id"] for r in records] == ["a", "b"] and records.incomplete == 0
    assert path.read_bytes() == whole
    # and not a folder's file only: `steps score DIR` on a folder that is no run folder
    assert RunFolder(tmp_path, create=False).read_records() == [{"item_id": "a"},
                                                                {"item_id": "b"}]
    assert path.read_bytes() == whole


@pytest.mark.parametrize("name", ["run.json", "metrics.json"])
def test_a_run_or_metrics_file_naming_a_key_twice_is_refused_naming_file_and_key(tmp_path,
                                                                                  name):
    """json keeps the last sha256 of two; another tool reading the first would check
    another file: the document is refused, not read one way."""
    run = RunFolder(tmp_path / "r")
    run.file(name).write_text('{"config": {"command": "score", "inputs": [{"path": "a.csv", '
                              '"sha256": "00", "sha256": "ff"}]}}')
    read = run.read_run if name == "run.json" else run.read_metrics
    with pytest.raises(ValueError, match=rf"{name}: key 'sha256' appears twice in one object "
                                         r'\("00", then "ff"\)'):
        read()


def test_a_record_naming_a_key_twice_is_named_with_its_line_and_key(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'{"item_id": "a"}\n{"item_id": "b", "correct": 1, "correct": 0}\n')
    with pytest.raises(ValueError, match=r"records.jsonl, line 2: not a record this run wrote "
                                         r"\(key 'correct' appears twice"):
        load_run_records(path)
    # a last line without its newline is the same record, not one cut short to be repaired
    path.write_bytes(b'{"item_id": "a"}\n{"item_id": "b", "item_id": "c"}')
    with pytest.raises(ValueError, match=r"line 2: .*key 'item_id' appears twice"):
        load_run_records(path)


def test_only_the_resuming_writer_under_the_lock_repairs_the_records(tmp_path):
    run = RunFolder(tmp_path / "D")
    cut = b'{"item_id": "a"}\n{"item_id": "b"}\n{"item_id": "c", "p'
    run.file("records.jsonl").write_bytes(cut)
    with pytest.raises(RuntimeError, match="inside `with run.lock"):
        run.records_for_resume()
    assert run.file("records.jsonl").read_bytes() == cut
    with run.lock():
        assert [r["item_id"] for r in run.records_for_resume()] == ["a", "b"]
        run.append_records([{"item_id": "c"}])
    assert run.file("records.jsonl").read_bytes() == \
        b'{"item_id": "a"}\n{"item_id": "b"}\n{"item_id": "c"}\n'
    run.file("records.jsonl").write_bytes(b'{"item_id": "a"}')  # whole but for its newline
    with run.lock():
        assert run.records_for_resume() == [{"item_id": "a"}]
        run.append_records([{"item_id": "b"}])
    assert [r["item_id"] for r in run.read_records()] == ["a", "b"]


def test_a_record_holding_a_unicode_line_separator_reads_back_whole(tmp_path):
    run = RunFolder(tmp_path / "D")
    run.write_records([{"item_id": "a", "text": "one\u2028two\x85three\rfour"}])
    run.append_records([{"item_id": "b"}])
    assert run.read_records()[0]["text"] == "one\u2028two\x85three\rfour"
    assert len(run.read_records()) == 2

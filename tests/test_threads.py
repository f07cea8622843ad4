import threading

import numpy as np

from confeval import _threads


def test_rows_are_cut_into_contiguous_parts_only_when_each_part_is_big_enough():
    parts = _threads.row_parts(10, 3, workers=3)
    assert [(p.start, p.stop) for p in parts] == [(0, 3), (3, 6), (6, 10)]
    assert _threads.row_parts(10, 6, workers=4) == [slice(0, 10)]   # two parts would be < 6
    assert _threads.row_parts(0, 1, workers=4) == [slice(0, 0)]
    cut = _threads.row_parts(1001, 1, workers=7)
    assert np.concatenate([np.arange(1001)[p] for p in cut]).tolist() == list(range(1001))


def test_the_map_keeps_order_and_runs_inline_inside_its_own_workers():
    assert list(_threads.parallel_map(lambda x: x * x, range(50))) == [x * x for x in range(50)]

    def nested(_):   # a worker mapping again must not wait on its own pool's queue
        inner = list(_threads.parallel_map(lambda y: (y, threading.current_thread().name),
                                           range(3)))
        return threading.current_thread().name, inner

    futures = [_threads._pool().submit(nested, i) for i in range(2 * _threads.usable_cores())]
    for future in futures:
        worker, inner = future.result(timeout=300)  # a wait, generous for a loaded machine
        assert inner == [(0, worker), (1, worker), (2, worker)]   # ran in the calling worker


def test_usable_cores_is_the_affinity_capped():
    assert 1 <= _threads.usable_cores() <= _threads._MAX_THREADS


def test_the_first_failure_in_item_order_is_raised_and_nothing_hangs():
    def boom(x):
        if x in (5, 9):
            raise ValueError(f"item {x}")
        return x

    for _ in range(20):   # claims race differently each time
        seen = []
        try:
            for value in _threads.parallel_map(boom, range(40)):
                seen.append(value)
        except ValueError as exc:
            assert str(exc) == "item 5"
        assert seen == [0, 1, 2, 3, 4]


def test_the_caller_computes_items_itself_when_the_pool_is_busy():
    """The pool's threads are kept busy until the caller has computed an item itself (not
    for a while: a sleep would leave it to the machine's load whether the pool finishes
    first)."""
    caller = threading.current_thread().name
    names = set()
    caller_worked = threading.Event()

    def note(x):
        names.add(threading.current_thread().name)
        if threading.current_thread().name == caller:
            caller_worked.set()
        else:
            caller_worked.wait(timeout=300)  # generous: only a broken map waits this long
        return x

    assert list(_threads.parallel_map(note, range(16))) == list(range(16))
    if _threads.usable_cores() > 1:
        assert caller in names

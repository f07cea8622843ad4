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

    def nested(x):   # a worker mapping again must not wait on its own pool's queue
        inner = list(_threads.parallel_map(lambda y: (y, threading.current_thread().name),
                                           range(3)))
        return [y for y, _ in inner], {name for _, name in inner}

    for values, names in _threads.parallel_map(nested, range(2 * _threads.usable_cores())):
        assert values == [0, 1, 2] and len(names) == 1   # ran in the calling worker


def test_usable_cores_is_the_affinity_capped():
    assert 1 <= _threads.usable_cores() <= _threads._MAX_THREADS

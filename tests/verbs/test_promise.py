"""The sentences of :mod:`confeval.verbs.promise` state p-values as every verdict does
(:func:`confeval.report.verdicts.p_text`): never 0, and never rounded to the other side of the
promise's own alpha."""

from __future__ import annotations

from confeval.verbs import promise

_NO_ALARM = {"alarm": None}


def _batch(p: float, alpha: float, holds: bool) -> dict:
    return {"p_value": p, "alpha": alpha, "holds": holds, "informative": True,
            "n_batch": 300, "n_calibration": 1500, "test": "two-sample Kolmogorov-Smirnov"}


def test_a_p_value_near_alpha_keeps_the_digits_that_decide_it():
    # two significant digits would print 0.0496 as 0.05, which reads as "not below alpha"
    void = promise._batch_sentence(_batch(0.0496, 0.05, False), _NO_ALARM)
    assert void == ("promise void: the batch is not exchangeable with the calibration data "
                    "(p = 0.0496; 300 new items against 1,500 calibration values; "
                    "two-sample Kolmogorov-Smirnov)")
    # three would too for 0.04996 ("p = 0.05" before); and alpha is the promise's own
    assert "(p = 0.04996;" in promise._batch_sentence(_batch(0.04996, 0.05, False), _NO_ALARM)
    assert "(p = 0.0996;" in promise._batch_sentence(_batch(0.0996, 0.1, False), _NO_ALARM)
    assert "(p = 0.1;" in promise._batch_sentence(_batch(0.0996, 0.05, True), _NO_ALARM)
    assert "(p = 0.5;" in promise._batch_sentence(_batch(0.499, 0.05, True), _NO_ALARM)


def test_a_tiny_p_value_is_an_upper_bound_and_p_of_one_is_one():
    assert "(p < 0.001;" in promise._batch_sentence(_batch(1e-12, 0.05, False), _NO_ALARM)
    stream = {"alarm": None, "p_value": 1.0, "alpha": 0.05, "n_stream": 900}
    assert promise._stream_sentence(stream, 3) == (
        "promise holds: no evidence of a shift over the stream (p = 1, anytime-valid; 900 new "
        "items in 3 files, conformal test martingale)")


def test_one_new_item_is_one_item():
    one = {**_batch(0.88, 0.05, True), "n_batch": 1}
    assert "(p = 0.88; 1 new item against 1,500 calibration values;" in \
        promise._batch_sentence(one, _NO_ALARM)

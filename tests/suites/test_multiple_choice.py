import asyncio
import math

import pytest

from confeval.backends import Generation, ScriptedBackend, TokenLogprob
from confeval.suites._multiple_choice import build_messages, option_distribution


def test_option_distribution_renormalises_and_records_mass_outside():
    reply = Generation("C", (TokenLogprob("C", math.log(0.6),
                                          (("C", math.log(0.6)), ("A", math.log(0.2)),
                                           ("Sure", math.log(0.15)))),), "stop")
    backend = ScriptedBackend(lambda m, p, i: reply)
    messages, letters = build_messages("2 + 2?", ["3", "5", "4"], idk=True)
    assert letters == ["A", "B", "C", "D"] and "I don't know" in messages[1]["content"]
    dist = asyncio.run(option_distribution(backend, messages, letters))
    assert dist["method"] == "top_logprobs" and dist["status"] == "ok"
    total = 0.6 + 0.2 + 2e-5
    assert math.exp(dist["logprobs"]["C"]) == pytest.approx(0.6 / total)
    assert dist["mass_outside"] == pytest.approx(1 - total)


def test_unparseable_reply_is_reported_not_raised():
    backend = ScriptedBackend(lambda m, p, i: Generation("I cannot say.", (), "stop"))
    messages, letters = build_messages("?", ["x", "y"])
    dist = asyncio.run(option_distribution(backend, messages, letters))
    assert dist["status"] == "unparseable" and "no option letter" in dist["reason"]

"""The shared parts of live suites: how an answer mode is resolved."""

import pytest

from confeval.backends import ScriptedBackend
from confeval.suites.base import answer_mode


def test_answer_mode_follows_the_backend_only_for_auto():
    exact = ScriptedBackend(scorer=lambda m, c: -1.0)
    server_like = ScriptedBackend()
    assert answer_mode(exact, "auto") == "scored"
    assert answer_mode(server_like, "auto") == "generated"
    assert answer_mode(exact, "generated") == "generated"
    assert answer_mode(server_like, "scored") == "scored"
    with pytest.raises(ValueError, match="--answer must be one of"):
        answer_mode(exact, "maybe")

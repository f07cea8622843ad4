import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from confeval.metrics import accuracy, f1_per_class, macro_f1


@pytest.mark.parametrize("seed", range(4))
def test_macro_f1_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, size=500)
    p = np.where(rng.uniform(size=500) < 0.6, y, rng.integers(0, 5, size=500))
    assert macro_f1(y, p) == pytest.approx(f1_score(y, p, average="macro"), abs=1e-12)
    per = f1_per_class(y, p)
    np.testing.assert_allclose(list(per.values()), f1_score(y, p, average=None), atol=1e-12)
    assert accuracy(y, p) == accuracy_score(y, p)


def test_string_labels_and_explicit_label_list():
    y = np.array(["calc", "reason", "calc", "symbol"])
    p = np.array(["calc", "calc", "calc", "none"])
    labels = ["calc", "reason", "symbol", "misread"]
    expected = f1_score(y, p, labels=labels, average=None, zero_division=0)
    np.testing.assert_allclose(list(f1_per_class(y, p, labels=labels).values()), expected)
    assert macro_f1(y, p, labels=labels) == pytest.approx(
        f1_score(y, p, labels=labels, average="macro", zero_division=0))

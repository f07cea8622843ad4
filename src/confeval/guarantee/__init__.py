"""Certified thresholds: answer when the confidence is at least t, abstain otherwise, with the
selective error (errors among the answered items) at most ``target`` with probability at least
``1 - delta`` over the calibration draw (:func:`ltt_threshold`, here; :func:`sgr_threshold`,
:mod:`.sgr`), or the expected joint error (answered and wrong) at most ``target``
(:func:`crc_threshold`, :mod:`.crc`).

:func:`ltt_threshold` (:mod:`.ltt`) — Learn then Test (Angelopoulos, Bates, Candès, Jordan and
Lei, 2021): every candidate threshold is a null hypothesis "its selective error exceeds the
target", tested with the Hoeffding–Bentkus p-value (:func:`hb_p_values`, Bates et al. 2021; with
0/1 losses the tighter binomial Bentkus term, as MAPIE's ``binary=True``), and the family-wise
error of the rejections controlled at ``delta`` by fixed-sequence testing (from the most
conservative threshold down, stopping at the first threshold not rejected), Bonferroni or Holm.
The certified threshold is the lowest rejected one: the most answers with the promise kept.

Choices that decide whether the result is useful (and valid):

* **Candidates** are the distinct confidences of the calibration set (at most ``max_candidates``
  of them, evenly spaced in rank): a threshold never falls inside a tie block, and "answer if
  confidence >= t" is exact for Likert-like confidences. They depend on the confidences only,
  never on correctness: the p-values, which use correctness, stay valid given them.
* **The answered count is taken as given** (the selective error is a conditional risk: its
  p-value at t uses the n_t items answered there, as MAPIE's precision controller does).
  Validity is checked from outside by simulation (``tests/guarantee``).
* **One walk, or several** (``starts``): a single fixed-sequence walk ends at the first
  threshold not rejected, so when the most confident items are not the most reliable ones
  (a judge sure of its extreme scores) it stops before the useful thresholds. ``starts=k``
  walks from k starting thresholds, each at ``delta / k`` (a false rejection needs one in some
  walk: Bonferroni over the walks). Measured on the shared data (40 splits, delta 0.1):
  LLaVA-Critic's scores accepted within 1 of the human at target 0.2 are certified on 7 splits
  with one walk (answering 0.3%) and on 26 with four (answering 21%); on a VLM's top option
  (LLaVA-1.6-34B, MMBench, target 0.1) four walks answer 83.8% against 84.7%; on a simulated
  calibrated judge (n = 1,000, target 0.15) four walks certify on 54% of draws against 87%.
  Hence one walk by default, more for judges whose risk–coverage curve is not monotone.
* **The tested thresholds start where enough items are answered** (:func:`min_answered`: the
  count at which half the target would be certified): starting at the very top, where one or two
  items are answered, would stop the fixed sequence at once and certify nothing. The start
  depends on target, delta and the counts only (no correctness), so the order stays fixed
  before testing; Bonferroni and Holm test the same thresholds.

References
----------
Angelopoulos, Bates, Candès, Jordan and Lei (2021), "Learn then Test: Calibrating predictive
algorithms to achieve risk control", arXiv:2110.01052. Bates, Angelopoulos, Lei, Malik and
Jordan (2021), "Distribution-free, risk-controlling prediction sets", JACM 68. Bauer (1991),
"Multiple testing in clinical trials", Statistics in Medicine 10.
"""

from __future__ import annotations

from ._common import ThresholdResult
from .crc import crc_threshold
from .fwer import FWER_METHODS, fwer_rejections
from .ltt import LTTResult, hb_p_values, ltt_threshold, min_answered, selective_risk, upper_bound
from .sgr import binomial_upper, sgr_threshold

__all__ = ["FWER_METHODS", "LTTResult", "ThresholdResult", "binomial_upper", "crc_threshold",
           "fwer_rejections", "hb_p_values", "ltt_threshold", "min_answered", "selective_risk",
           "sgr_threshold", "upper_bound"]

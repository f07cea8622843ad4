"""``python -m confeval.cli``."""

import sys

from . import console

sys.exit(console())

"""Test configuration: deterministic property tests in CI."""

from __future__ import annotations

import os

from hypothesis import settings

# In CI the examples are derived from the test itself, so a run is repeatable;
# locally hypothesis explores new random examples on every run.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

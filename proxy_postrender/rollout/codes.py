"""The rollout step's warning code, for the one table of codes (result.py) to read at
start-up without loading the rest of the step."""

from __future__ import annotations

NO_ROLLOUT_CODE = "nodes/no-rollout"
CODES: tuple[tuple[str, bool, str], ...] = (
    (
        NO_ROLLOUT_CODE,
        True,
        "a node bootstrap object changed, and no running machine gets the change",
    ),
)

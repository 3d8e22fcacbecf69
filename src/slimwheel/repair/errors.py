"""The error every step of ``slimwheel repair`` raises when a wheel cannot be repaired as asked."""

from __future__ import annotations

from slimwheel.errors import UsageError

__all__ = ["RepairError"]


class RepairError(UsageError):
    """The wheel cannot be repaired as asked (ambiguous CUDA major, conflicting requirements...)."""

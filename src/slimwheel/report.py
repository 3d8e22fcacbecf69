"""Versioned JSON reports: every command's ``--json`` document is ``{"schema": "slimwheel.<cmd>/1", ...}``."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from typing import Any

from slimwheel.runtime._record import Record

__all__ = ["dump_report", "to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """Dataclasses, records, enums, tuples and mappings as plain JSON values (dataclass fields in order)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, Record):  # the run-time package's records (stdlib only, no dataclasses)
        return to_jsonable(value.to_dict())
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [to_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    return value


def dump_report(command: str, payload: Mapping[str, Any]) -> str:
    document = {"schema": f"slimwheel.{command}/1", **to_jsonable(payload)}
    return json.dumps(document, indent=2, sort_keys=False)

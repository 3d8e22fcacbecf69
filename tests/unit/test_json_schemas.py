"""The versioned ``--json`` documents (``slimwheel.<command>/1``) are made from dataclasses: renaming or
removing a field would change a public schema without a word. This test pins every field reachable
from each command's report type; a change shows here as a diff against the snapshot.

Adding a field is allowed by the schema rules (readers ignore what they do not know): update the
snapshot with ``SLIMWHEEL_UPDATE_SNAPSHOTS=1 pytest tests/unit/test_json_schemas.py``. Renaming or
removing one needs ``schema`` bumped to /2.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).parent / "snapshots" / "json_schemas.json"


def _roots() -> dict[str, Any]:
    from slimwheel.analysis import WheelReport
    from slimwheel.check import CheckReport
    from slimwheel.doctor import LibraryDiagnosis
    from slimwheel.repair.pipeline import RepairOutcome
    from slimwheel.targets import TargetPlan
    from slimwheel.verify import VerifyPlan, VerifyReport

    return {
        "show": WheelReport,
        "check": CheckReport,
        "repair": RepairOutcome,
        "plan": TargetPlan,
        "doctor": LibraryDiagnosis,
        "verify": VerifyReport,
        "verify --dry-run": VerifyPlan,
    }


def _walk(kind: Any, seen: dict[str, list[str]]) -> None:
    """Every dataclass reachable through field annotations, by name -> its field names, in order."""
    origin = typing.get_origin(kind)
    if origin is not None or isinstance(kind, types.UnionType):
        for argument in typing.get_args(kind):
            _walk(argument, seen)
        return
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        return
    name = kind.__qualname__  # not the module: moving a class does not change the document
    if name in seen:
        return
    fields = [f.name for f in dataclasses.fields(kind) if not f.name.startswith("_")]
    seen[name] = fields
    hints = typing.get_type_hints(kind)
    for field in fields:
        _walk(hints[field], seen)


def _shapes() -> dict[str, dict[str, list[str]]]:
    shapes = {}
    for command, root in _roots().items():
        seen: dict[str, list[str]] = {}
        _walk(root, seen)
        shapes[command] = seen
    return shapes


def test_json_schemas_match_the_snapshot() -> None:
    shapes = _shapes()
    if os.environ.get("SLIMWHEEL_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(shapes, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(SNAPSHOT.read_text())
    for command, types_seen in pinned.items():
        for name, fields in types_seen.items():
            now = shapes[command].get(name)
            assert now is not None, f"{command}: {name} is gone from the slimwheel.{command}/1 document"
            removed = [f for f in fields if f not in now]
            assert not removed, f"{command}: {name} lost {removed}: bump the schema to /2 or keep them"
    assert shapes == pinned, (
        "fields were added: update tests/unit/snapshots/json_schemas.json "
        "(SLIMWHEEL_UPDATE_SNAPSHOTS=1) after checking each is meant to be public"
    )

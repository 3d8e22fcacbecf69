"""``slimwheel repair``: analyse -> plan (plain data) -> apply."""

from slimwheel.repair.plan import (
    AddedRequirement,
    ElfEdit,
    RepairError,
    RepairOptions,
    RepairPlan,
    VersionPolicy,
    plan_repair,
)

__all__ = [
    "AddedRequirement",
    "ElfEdit",
    "RepairError",
    "RepairOptions",
    "RepairPlan",
    "VersionPolicy",
    "plan_repair",
]

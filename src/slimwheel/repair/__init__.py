"""``slimwheel repair``: analyse -> plan (plain data) -> apply."""

from slimwheel.repair.plan import (
    AddedRequirement,
    ElfEdit,
    EmbeddedLoader,
    EmbedRequest,
    RepairError,
    RepairOptions,
    RepairPlan,
    VersionPolicy,
    plan_repair,
)

__all__ = [
    "AddedRequirement",
    "ElfEdit",
    "EmbedRequest",
    "EmbeddedLoader",
    "RepairError",
    "RepairOptions",
    "RepairPlan",
    "VersionPolicy",
    "plan_repair",
]

"""A static package index on a folder or S3, updated incrementally and safely.

``publish`` adds wheels, ``promote`` copies a release between channels, ``yank`` marks one (PEP 592),
``reindex`` rebuilds the pages from the files. Each is analyse -> plan (plain data) -> apply over a
``Store`` (a folder, or S3 through boto3, imported only for ``s3://`` destinations).
"""

from __future__ import annotations

from slimwheel.publish.errors import (
    ConflictError,
    DestinationError,
    ImmutableFileError,
    IndexStateError,
    PublicNameError,
    PublishRefusedError,
)
from slimwheel.publish.guard import NameCheck, check_public_names
from slimwheel.publish.layout import Layout
from slimwheel.publish.lifecycle import apply_promote, apply_yank, plan_promote, plan_yank
from slimwheel.publish.publishing import (
    PublishPlan,
    PublishResult,
    WheelFacts,
    apply_publish,
    index_url,
    plan_publish,
    read_wheels,
)
from slimwheel.publish.reindexing import ReindexPlan, apply_reindex, plan_reindex
from slimwheel.publish.store import Store, open_store

__all__ = [
    "ConflictError",
    "DestinationError",
    "ImmutableFileError",
    "IndexStateError",
    "Layout",
    "NameCheck",
    "PublicNameError",
    "PublishPlan",
    "PublishRefusedError",
    "PublishResult",
    "ReindexPlan",
    "Store",
    "WheelFacts",
    "apply_promote",
    "apply_publish",
    "apply_reindex",
    "apply_yank",
    "check_public_names",
    "index_url",
    "open_store",
    "plan_promote",
    "plan_publish",
    "plan_reindex",
    "plan_yank",
    "read_wheels",
]

"""The package index client: pip's index settings, project pages, lazy remote wheels, a download cache."""

from __future__ import annotations

from slimwheel.index._http import RequestStats, StatsSnapshot
from slimwheel.index.cache import Cache, CachedPage
from slimwheel.index.client import IndexClient, ProgressCallback
from slimwheel.index.config import (
    IndexSettings,
    PipConfigFiles,
    pip_default_index_url,
    resolve_index_settings,
)
from slimwheel.index.errors import HashMismatchError, ProjectNotFoundError
from slimwheel.index.lazy import RangeFile
from slimwheel.index.simple import DistributionFile, ProjectPage

__all__ = [
    "Cache",
    "CachedPage",
    "DistributionFile",
    "HashMismatchError",
    "IndexClient",
    "IndexSettings",
    "PipConfigFiles",
    "ProgressCallback",
    "ProjectNotFoundError",
    "ProjectPage",
    "RangeFile",
    "RequestStats",
    "StatsSnapshot",
    "pip_default_index_url",
    "resolve_index_settings",
]

"""The dependency-confusion guard: a project published here must not also be a project on the public
index, or an install that merges indexes (``--extra-index-url``) may take the public one.

"The public index" is found as pip finds its index (``--index-url``, ``PIP_INDEX_URL``, pip's
configuration, pip's own default), every extra index included; the destination's own URL is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from slimwheel.index.config import IndexSettings
from slimwheel.publish.errors import PublicNameError

__all__ = ["NameCheck", "check_public_names", "refuse_public_names"]


@dataclass(frozen=True)
class NameCheck:
    project: str
    asked: tuple[str, ...]  # the indexes asked (empty: not checked, --offline)
    found_on: tuple[str, ...]  # those that list the project
    allowed: bool  # --allow-public-name

    @property
    def refused(self) -> bool:
        return bool(self.found_on) and not self.allowed


def check_public_names(
    projects: Iterable[str],
    settings: IndexSettings | None,
    *,
    allowed: Iterable[str] = (),
    own_urls: Iterable[str] = (),
) -> tuple[NameCheck, ...]:
    """Ask each index of ``settings`` (None: offline, nothing asked) whether it lists each project."""
    from packaging.utils import canonicalize_name

    from slimwheel.index.client import IndexClient
    from slimwheel.index.errors import ProjectNotFoundError

    permitted = {canonicalize_name(name) for name in allowed}
    names = sorted({canonicalize_name(name) for name in projects})
    if settings is None:
        return tuple(NameCheck(name, (), (), name in permitted) for name in names)
    skip = {url.rstrip("/") for url in own_urls}
    urls = tuple(url for url in settings.index_urls if url.rstrip("/") not in skip)
    found: dict[str, list[str]] = {name: [] for name in names}
    for url in urls:
        # No cache: a name registered on the public index since the last run must be seen now.
        with IndexClient(IndexSettings(url, origin=settings.origin), cache=None) as client:
            for name in names:
                try:
                    client.project(name, refresh=True)
                except ProjectNotFoundError:
                    continue
                found[name].append(url)
    return tuple(NameCheck(name, urls, tuple(found[name]), name in permitted) for name in names)


def refuse_public_names(checks: Iterable[NameCheck]) -> None:
    refused = [check for check in checks if check.refused]
    if refused:
        urls = tuple(dict.fromkeys(url for check in refused for url in check.found_on))
        raise PublicNameError(tuple(check.project for check in refused), urls)

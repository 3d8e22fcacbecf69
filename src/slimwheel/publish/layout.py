"""Where each object of a channel's index lives, relative to the destination's root.

    <channel>/simple/index.html                 root page, PEP 503 HTML
    <channel>/simple/index.json  (folder)       root page, PEP 691 JSON
    <channel>/simple/            (S3)
    <channel>/simple/<project>/index.html       project page, PEP 503 HTML
    <channel>/simple/<project>/index.json (folder), <channel>/simple/<project>/ (S3): PEP 691 JSON,
                                                also the project's state (conditional writes go here)
    <channel>/files/<project>/<wheel>           the wheels, never replaced
    <channel>/files/<project>/<wheel>.metadata  their METADATA (PEP 658)

A static server answers a folder URL with ``index.html``, whatever the client accepts, so a served
folder gives pip and uv HTML (with the ``.metadata`` links); on S3 the object at the folder key itself
is the JSON page, served as ``application/vnd.pypi.simple.v1+json``. The channel is empty for an index
at the root.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from slimwheel.errors import UsageError

__all__ = ["Layout", "check_channel"]

_CHANNEL = re.compile(r"[a-z0-9][a-z0-9._-]*", re.IGNORECASE)


def check_channel(channel: str) -> str:
    if channel and (not _CHANNEL.fullmatch(channel) or channel in ("simple", "files")):
        raise UsageError(
            f"{channel!r} is not a channel name", hint="use letters, digits, '.', '_' or '-' (nightly, test)"
        )
    return channel


@dataclass(frozen=True)
class Layout:
    channel: str
    pages_at_folder_keys: bool  # the store serves an object at "<...>/" (S3)

    @property
    def base(self) -> str:
        return f"{check_channel(self.channel)}/" if self.channel else ""

    @property
    def simple(self) -> str:
        return f"{self.base}simple/"

    def root_json(self) -> str:
        return self.simple if self.pages_at_folder_keys else f"{self.simple}index.json"

    def root_html(self) -> str:
        return f"{self.simple}index.html"

    def project_json(self, project: str) -> str:
        folder = f"{self.simple}{project}/"
        return folder if self.pages_at_folder_keys else f"{folder}index.json"

    def project_html(self, project: str) -> str:
        return f"{self.simple}{project}/index.html"

    def files_prefix(self) -> str:
        return f"{self.base}files/"

    def file(self, project: str, filename: str) -> str:
        return f"{self.base}files/{project}/{filename}"

    def metadata(self, project: str, filename: str) -> str:
        return f"{self.file(project, filename)}.metadata"

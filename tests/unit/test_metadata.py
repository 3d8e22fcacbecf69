"""METADATA edits keep every other byte and offer an extra once."""

from __future__ import annotations

import pytest

from slimwheel.errors import InputError
from slimwheel.metadata import metadata_with

_METADATA = (
    b"Metadata-Version: 2.1\r\nName: pkg\r\nVersion: 1.0\r\nProvides-Extra: CTK\r\n"
    b'Requires-Dist: cuda-toolkit==12.*; extra == "ctk"\r\n\r\nThe description, Name: kept.\r\n'
)


def test_requirements_and_extras_go_after_the_last_header_in_its_newlines() -> None:
    edited = metadata_with(
        _METADATA,
        requires=['nvidia-nccl-cu12>=2.18.1,<3; extra == "nccl"', 'cuda-toolkit==12.*; extra == "ctk"'],
        extras=[("nccl", ()), ("ctk", ()), ("tools", ["cutensor-cu12>=2; sys_platform == 'linux'"])],
    )
    head, description = edited.split(b"\r\n\r\n")
    assert description == b"The description, Name: kept.\r\n"
    assert head.split(b"\r\n")[5:] == [
        b'Requires-Dist: nvidia-nccl-cu12>=2.18.1,<3; extra == "nccl"',
        b"Provides-Extra: nccl",  # "ctk" is offered already (as CTK: extras compare normalized)
        b"Provides-Extra: tools",
        b'Requires-Dist: cutensor-cu12>=2; (sys_platform == "linux") and extra == "tools"',
    ]


def test_a_new_name_needs_a_name_header() -> None:
    assert metadata_with(_METADATA, name="pkg-cu12").startswith(
        b"Metadata-Version: 2.1\r\nName: pkg-cu12\r\n"
    )
    with pytest.raises(InputError, match="no Name header"):
        metadata_with(b"Metadata-Version: 2.1\n", name="pkg")

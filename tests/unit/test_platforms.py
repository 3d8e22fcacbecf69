from __future__ import annotations

import pytest

from slimwheel.check.target import loads_on, platform_of
from slimwheel.errors import UsageError
from slimwheel.platforms import Platform, glibc_of_tag, linux_of_machine, parse_platform, platform_of_tag


@pytest.mark.parametrize(
    ("tag", "platform", "glibc"),
    [
        ("manylinux_2_17_x86_64", Platform("linux", "x86_64"), (2, 17)),
        ("manylinux2014_aarch64", Platform("linux", "aarch64"), (2, 17)),
        ("manylinux1_x86_64", Platform("linux", "x86_64"), (2, 5)),
        ("manylinux_2_27_x86_64", Platform("linux", "x86_64"), (2, 27)),
        ("win_amd64", Platform("win", "amd64"), None),
        ("linux_x86_64", Platform("linux", "x86_64"), None),
        ("any", None, None),
    ],
)
def test_platform_tags(tag: str, platform: Platform | None, glibc: tuple[int, int] | None) -> None:
    assert platform_of_tag(tag) == platform
    assert glibc_of_tag(tag) == glibc


def test_parse_platform_as_users_write_it() -> None:
    assert parse_platform("manylinux_x86_64") == Platform("linux", "x86_64")
    assert parse_platform("manylinux_2_28_aarch64") == Platform("linux", "aarch64")
    assert parse_platform("win_amd64").key == "win_amd64"
    with pytest.raises(UsageError, match="not a platform"):
        parse_platform("plan9")


@pytest.mark.parametrize(
    ("tags", "machines", "platform"),
    [
        # Tagged for two architectures: the ELF files' machine narrows it, spelled as tags spell it.
        (("manylinux_2_17_i686", "manylinux_2_17_x86_64"), ("i386",), Platform("linux", "i686")),
        (("manylinux_2_17_i686", "manylinux_2_17_x86_64"), ("x86_64",), Platform("linux", "x86_64")),
        (("any",), ("arm",), Platform("linux", "armv7l")),
    ],
)
def test_a_wheels_platform_from_its_tags_and_elf_machines(
    tags: tuple[str, ...], machines: tuple[str, ...], platform: Platform
) -> None:
    assert platform_of("x.whl", tags, machines, None) == platform
    assert all(loads_on(platform, machine) for machine in machines)
    assert linux_of_machine(machines[0]) == platform

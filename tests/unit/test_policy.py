"""The host's libraries are auditwheel's manylinux policy, read as data (not a hand copy)."""

from __future__ import annotations

import importlib.util
from importlib.machinery import ModuleSpec

import pytest

from slimwheel import policy
from slimwheel.analysis import is_system_library
from slimwheel.errors import SlimwheelError
from slimwheel.policy import host_sonames, manylinux_level


@pytest.mark.parametrize(
    ("soname", "from_host"),
    [
        ("libc.so.6", True),
        ("libstdc++.so.6", True),
        ("libatomic.so.1", True),  # the old hand copy lacked these three
        ("libanl.so.1", True),
        ("libmvec.so.1", True),
        ("libcrypt.so.1", False),  # dropped from the policy; the hand copy still had it
        ("ld-linux-x86-64.so.2", True),
        ("ld-linux-aarch64.so.1", True),
        ("libcudart.so.12", False),
        ("libgomp.so.1", False),
    ],
)
def test_system_libraries_follow_auditwheels_policy(soname: str, from_host: bool) -> None:
    assert is_system_library(soname) is from_host


def test_the_policy_is_the_union_of_auditwheels_manylinux_whitelists() -> None:
    import importlib.util
    import json
    from pathlib import Path

    spec = importlib.util.find_spec("auditwheel")
    assert spec is not None
    assert spec.origin is not None
    policy = Path(spec.origin).parent / "policy" / "manylinux-policy.json"
    union = {name for entry in json.loads(policy.read_text()) for name in entry["lib_whitelist"]}
    assert host_sonames() == union


@pytest.mark.parametrize(
    ("tags", "level", "mvec", "expat"),
    [
        # libmvec joins the whitelist at 2.24, libexpat at 2.12: a wheel tagged older may not use them
        (("manylinux_2_17_x86_64", "manylinux2014_x86_64"), (2, 17), False, True),
        (("manylinux_2_28_x86_64",), (2, 28), True, True),
        (("manylinux_2_30_x86_64",), (2, 30), True, True),  # no 2.30 policy: 2.28's list holds
        (("manylinux1_x86_64",), (2, 5), False, False),
        (("manylinux_2_17_x86_64", "manylinux_2_28_x86_64"), (2, 17), False, True),  # installs on 2.17
        (("linux_x86_64",), None, True, True),  # not tagged yet: any level's
    ],
)
def test_the_host_libraries_follow_the_wheels_manylinux_level(
    tags: tuple[str, ...], level: tuple[int, int] | None, mvec: bool, expat: bool
) -> None:
    assert manylinux_level(tags) == level
    assert is_system_library("libmvec.so.1", level) is mvec
    assert is_system_library("libexpat.so.1", level) is expat
    assert is_system_library("libc.so.6", level)


def test_an_environment_without_auditwheels_policy_is_one_of_slimwheels_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a machine whose environment lacked auditwheel (slimwheel's dependency, carried by hand to a
    GPU machine with no network), verify's diagnosis ended in a traceback of a RuntimeError. It is one
    of slimwheel's errors, which the command line says in one line (exit 2), naming what to install."""
    real_find_spec = importlib.util.find_spec

    def without_auditwheel(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == "auditwheel" else real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_auditwheel)
    policy._whitelists.cache_clear()
    try:
        with pytest.raises(SlimwheelError) as raised:
            host_sonames(None)
        assert str(raised.value) == (
            "auditwheel's manylinux-policy.json is not installed, which slimwheel reads for the libraries "
            "each manylinux tag lets a wheel count on (pip install auditwheel: slimwheel depends on it, "
            "and this environment lacks it)"
        )
        assert raised.value.exit_code == 2
    finally:
        monkeypatch.undo()
        policy._whitelists.cache_clear()

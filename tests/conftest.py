"""Shared fixtures live in tests/support; each builder module registers its own fixtures here."""

from __future__ import annotations

pytest_plugins = [
    "tests.support.fixtures_wheel",
    "tests.support.fixtures_elf",
    "tests.support.fixtures_index",
    "tests.support.fixtures_catalog",
]

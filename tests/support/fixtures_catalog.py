"""A catalog learned from the fake NVIDIA provider wheels (tests/support/providers.py), once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.catalog.learn import learn_from_wheels
from slimwheel.catalog.model import Catalog
from slimwheel.catalog.store import write_catalog
from tests.support.fixtures_elf import ElfZoo
from tests.support.providers import build_provider_wheels


@pytest.fixture(scope="session")
def provider_catalog(elf_zoo: ElfZoo, tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    providers = build_provider_wheels(elf_zoo, tmp_path_factory.mktemp("providers"))
    return learn_from_wheels(providers.all)


@pytest.fixture(scope="session")
def provider_catalog_file(provider_catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "catalog.json.gz"
    write_catalog(provider_catalog, path)
    return path

"""A catalog learned from the fake NVIDIA provider wheels (tests/support/providers.py), once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimwheel.catalog.learn import learn_from_wheels
from slimwheel.catalog.model import Catalog
from slimwheel.catalog.store import write_catalog
from tests.support.fixtures_elf import ElfZoo
from tests.support.providers import ProviderWheels, build_provider_wheels


@pytest.fixture(scope="session")
def provider_catalog(elf_zoo: ElfZoo, tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    providers = build_provider_wheels(elf_zoo, tmp_path_factory.mktemp("providers"))
    return learn_from_wheels(providers.all)


@pytest.fixture(scope="session")
def provider_catalog_file(provider_catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "catalog.json.gz"
    write_catalog(provider_catalog, path)
    return path


@pytest.fixture
def providers(elf_zoo: ElfZoo, tmp_path: Path) -> ProviderWheels:
    """Fresh fake provider wheels for a test that serves them from its own index."""
    return build_provider_wheels(elf_zoo, tmp_path / "index")


@pytest.fixture
def own_catalog(providers: ProviderWheels, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A catalog of ``providers`` only: no shipped snapshot, no user copy."""
    monkeypatch.setenv("SLIMWHEEL_SHIPPED_CATALOG", "off")
    monkeypatch.setenv("SLIMWHEEL_CATALOG", str(tmp_path / "no-user-catalog.json.gz"))
    path = tmp_path / "catalog.json.gz"
    write_catalog(learn_from_wheels(providers.all), path)
    return path


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No shipped snapshot, a user catalog and a cache of this test's own."""
    monkeypatch.setenv("SLIMWHEEL_SHIPPED_CATALOG", "off")
    monkeypatch.setenv("SLIMWHEEL_CATALOG", str(tmp_path / "user-catalog.json.gz"))
    monkeypatch.setenv("SLIMWHEEL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path

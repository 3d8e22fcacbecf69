"""Pytest fixtures for the index client: a real simple index on 127.0.0.1, and a port nobody serves."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.index_server import IndexServer

__all__ = ["closed_port", "index_server"]


@pytest.fixture
def index_server() -> Iterator[Callable[..., IndexServer]]:
    """``index_server(directory, json_api=True, ranges=True, core_metadata=False)`` starts a server
    over ``directory``; every server started is stopped after the test."""
    servers: list[IndexServer] = []

    def start(directory: Path, **options: Any) -> IndexServer:
        server = IndexServer(directory, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that refuses connections: bound once to pick it, then released."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])

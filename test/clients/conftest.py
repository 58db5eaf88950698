"""Contract tests: the Python clients people use, pointed at a running Pustaka server.

Run by test/integration/python-clients.test.ts, which starts the server with real small
models and sets the environment; by hand:

    PUSTAKA_URL=http://127.0.0.1:7780 PUSTAKA_KEY=psk-... PUSTAKA_CHAT_MODEL=chat \
    PUSTAKA_EMBED_MODEL=embed ~/.cache/pustaka/clients-venv/bin/python -m pytest test/clients -q

PUSTAKA_URL is the server's root (no /v1); PUSTAKA_CHAT_MODEL names an instruct chat model,
PUSTAKA_EMBED_MODEL an embedding model. A missing variable is an error, never a skip.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise pytest.UsageError(
            f"{name} is not set: these tests run against a Pustaka server "
            "(see test/clients/conftest.py; npm test runs them through "
            "test/integration/python-clients.test.ts)"
        )
    return value


@dataclass(frozen=True)
class Server:
    url: str
    """The server's root, e.g. http://127.0.0.1:7780 (Anthropic clients take this)."""
    key: str
    chat_model: str
    embed_model: str

    @property
    def v1(self) -> str:
        """The OpenAI-style base URL (OpenAI clients take this)."""
        return self.url + "/v1"


def server_from_env() -> Server:
    return Server(
        url=_required("PUSTAKA_URL").rstrip("/"),
        key=_required("PUSTAKA_KEY"),
        chat_model=_required("PUSTAKA_CHAT_MODEL"),
        embed_model=_required("PUSTAKA_EMBED_MODEL"),
    )


def pytest_configure(config: pytest.Config) -> None:
    # Fail the whole run at once, before any test, when the environment is incomplete.
    server_from_env()


@pytest.fixture(scope="session")
def server() -> Server:
    return server_from_env()

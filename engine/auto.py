"""``--engine auto``: pick the backend that should finish a workload first.

The estimate is start-up time plus generated tokens over throughput, with the figures
measured by ``benchmarks/engines.py`` on a 2-core x86-64 CPU and the embedded model
(``benchmarks/results/engines.json``, table in docs/results/benchmarks.md). A server URL always means the ``openai`` backend; on a GPU,
vLLM wins for any real workload. Re-run the benchmark and update ``MEASURED`` when the
machine or the model class changes.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from engine.config import EngineConfig


@dataclass(frozen=True)
class Workload:
    """What a command is about to ask for."""

    parallel_sequences: int
    """Sequences one stage decodes together (requests times samples)."""
    total_new_tokens: int
    """Upper bound of tokens the whole command generates."""

    def __post_init__(self) -> None:
        if self.parallel_sequences < 1 or self.total_new_tokens < 0:
            raise ValueError("a workload needs at least one sequence and a non-negative token count")


@dataclass(frozen=True)
class BackendProfile:
    start_s: float
    """Seconds from construction to the first request, model cached."""
    single_stream_tokens_per_s: float
    """Throughput with one sequence decoding."""
    batched_tokens_per_s: float
    """Throughput with >= 8 sequences decoding together."""


# benchmarks/results/engines.json: 2-core AMX CPU, bf16, ~385-token prompts, 128 new tokens.
MEASURED: dict[str, BackendProfile] = {
    "transformers": BackendProfile(start_s=4.6, single_stream_tokens_per_s=16.4, batched_tokens_per_s=104.0),
    "vllm": BackendProfile(start_s=11.8, single_stream_tokens_per_s=23.7, batched_tokens_per_s=231.0),
}


def installed(backend: str) -> bool:
    if backend == "vllm":
        return importlib.util.find_spec("vllm") is not None
    return backend == "transformers"


def estimated_seconds(profile: BackendProfile, workload: Workload) -> float:
    share = min(1.0, (workload.parallel_sequences - 1) / 7)
    rate = profile.single_stream_tokens_per_s + share * (profile.batched_tokens_per_s - profile.single_stream_tokens_per_s)
    return profile.start_s + workload.total_new_tokens / rate


def choose_backend(config: EngineConfig, workload: Workload, gpu: bool = False) -> str:
    """The backend ``auto`` resolves to for this config and workload."""
    if config.base_urls:
        return "openai"
    candidates = [name for name in MEASURED if installed(name)]
    if gpu and "vllm" in candidates:
        return "vllm"
    return min(candidates, key=lambda name: estimated_seconds(MEASURED[name], workload))

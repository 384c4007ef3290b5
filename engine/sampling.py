"""Turn a sampling config into per-request settings."""

from __future__ import annotations

from collections.abc import Sequence

from engine.base import ChatMessage, GenerationRequest
from engine.config import SamplingConfig


def request_seed(base: int | None, index: int) -> int | None:
    """A distinct, reproducible seed for request ``index`` of a stage (None stays None)."""
    return None if base is None else base + index


def sample_seeds(request: GenerationRequest) -> range:
    """The seeds of a request's samples as vLLM fans it out (sample j: its seed + j); empty when unseeded."""
    return range(0) if request.seed is None else range(request.seed, request.seed + request.n)


def make_requests(
    prompts: Sequence[Sequence[ChatMessage]], sampling: SamplingConfig, n: int = 1, seed_offset: int = 0
) -> list[GenerationRequest]:
    """One request per prompt, each asking for ``n`` completions under ``sampling``.

    Every sample gets a seed of its own: request *k* has seed ``seed + seed_offset + k·n``, and
    vLLM seeds sample *j* of a request with its seed + *j* (its parallel-sampling fan-out), so
    the call's samples use the seeds ``seed + seed_offset`` … ``+ len(prompts)·n − 1``, each
    once. ``seed_offset`` counts samples: a stage that makes several calls keeps them apart by
    the samples each call sends.
    """
    return [
        GenerationRequest(
            messages=tuple(messages),
            n=n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            seed=request_seed(sampling.seed, seed_offset + index * n),
        )
        for index, messages in enumerate(prompts)
    ]

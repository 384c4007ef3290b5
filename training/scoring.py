"""Engine calls made while rewarding a GRPO step: batched, awaited, retried, never fatal.

A reward stage (all verifications of a step's rollouts, or all their meta-verifications)
is one call: against a server every request is in flight at once through one session;
an in-process engine (the policy itself, or a separate transformers/vLLM model) gets the
whole stage as one batch in a worker thread, so TRL's event loop is not blocked. A
request that still fails after ``retries`` extra attempts, or whose prompt does not fit,
comes back as None: the caller skips that rollout rather than scoring it 0.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from data.errors import ProofsmithError, PromptTooLongError
from engine.base import Engine, GenerationRequest, GenerationResult, StreamingEngine
from engine.fitting import generate_fitting

logger = logging.getLogger(__name__)


class PolicyEngine:
    """The model being trained, used as an engine (one model plays every role)."""

    name = "policy"

    def __init__(self, model: Any, tokenizer: Any, batch_size: int = 32) -> None:
        from engine.transformers_backend import TransformersEngine

        self._model = model
        self._inner = TransformersEngine.around(model, tokenizer, "policy", batch_size)
        self.model = "policy"

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        was_training = self._model.training
        self._model.eval()
        try:
            return self._inner.generate(requests)
        finally:
            if was_training:
                self._model.train()

    def close(self) -> None:
        pass


@dataclass
class CallStats:
    """What a reward's engine calls cost during one step."""

    seconds: float = 0.0
    completion_tokens: int = 0
    failed: int = 0


class ScoringClient:
    def __init__(self, engine: Engine, retries: int) -> None:
        self.engine, self.retries = engine, retries

    async def generate(self, requests: Sequence[GenerationRequest], stats: CallStats) -> list[GenerationResult | None]:
        if not requests:
            return []
        started = time.perf_counter()
        if isinstance(self.engine, StreamingEngine):
            async with self.engine.session() as session:
                results = list(await asyncio.gather(*(self._one(session, request) for request in requests)))
        else:
            results = await self._batch(list(requests))
        stats.seconds += time.perf_counter() - started
        stats.completion_tokens += sum(result.completion_tokens for result in results if result is not None)
        stats.failed += sum(result is None for result in results)
        return results

    async def _one(self, session: Any, request: GenerationRequest) -> GenerationResult | None:
        for attempt in range(self.retries + 1):
            try:
                [result] = await session.generate([request])
                return result
            except PromptTooLongError:
                return None
            except ProofsmithError as error:
                logger.warning("scoring request failed (%s); attempt %d/%d", error, attempt + 1, self.retries + 1)
        return None

    async def _batch(self, requests: list[GenerationRequest]) -> list[GenerationResult | None]:
        for attempt in range(self.retries + 1):
            try:
                results, _ = await asyncio.to_thread(generate_fitting, self.engine, requests)
                return results
            except PromptTooLongError:  # the backend could not say which prompt: none of the batch is scored
                return [None] * len(requests)
            except ProofsmithError as error:
                logger.warning("scoring batch failed (%s); attempt %d/%d", error, attempt + 1, self.retries + 1)
        return [None] * len(requests)

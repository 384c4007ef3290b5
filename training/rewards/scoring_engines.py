"""Engine calls made while rewarding a GRPO step: batched, awaited, retried, never fatal.

A reward stage (all verifications of a step's rollouts, or all their meta-verifications)
is one call: against a server every request is in flight at once through one session;
an in-process engine (the policy itself, or a separate transformers/vLLM model) gets the
whole stage as one batch in a worker thread, so TRL's event loop is not blocked. A
request that still fails after ``retries`` extra attempts, or whose prompt does not fit,
comes back as None: the caller skips that rollout rather than scoring it 0.

Who scores (``rewards.verifier`` / ``rewards.meta``): ``reference`` is the trained model frozen
at its starting weights; ``policy`` its current weights. Reference is the default because the
policy as its own moving verifier collapsed on the 135M model: writing self-score 0 in its
self-evaluations taught its verifier role to box 0 for every proof, which made self-score 0
the best answer (docs/results/generator-rl.md). With LoRA in the synchronous trainer the reference
is the trained model with its adapters switched off, so it costs no second copy; otherwise
it is a separate engine built from ``[scorer]`` on ``model.name``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from data.errors import ProofsmithError, PromptTooLongError
from engine.base import Engine, GenerationRequest, GenerationResult, StreamingEngine
from engine.fitting import generate_fitting

from training.config import ENGINELESS_VERIFIERS, WORLD_RATERS

if TYPE_CHECKING:
    from engine.config import EngineConfig
    from training.config import TrainConfig

logger = logging.getLogger(__name__)


class PolicyEngine:
    """The model being trained, used as an engine (one model plays every role).

    ``starting_weights``: generate with the LoRA adapters switched off, i.e. as the model
    was before training (the ``reference`` source); the model must be a peft model.
    """

    name = "policy"

    def __init__(self, model: Any, tokenizer: Any, batch_size: int = 32, starting_weights: bool = False) -> None:
        from engine.transformers_backend import TransformersEngine

        if starting_weights and not hasattr(model, "disable_adapter"):
            raise TypeError("starting weights need a peft (LoRA) model: without adapters there is nothing to switch off")
        self._model, self._starting_weights = model, starting_weights
        self.model = "reference" if starting_weights else "policy"
        self._inner = TransformersEngine.around(model, tokenizer, self.model, batch_size)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        was_training = self._model.training
        self._model.eval()
        try:
            if self._starting_weights:
                with self._model.disable_adapter():
                    return self._inner.generate(requests)
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
        self._in_process = threading.Lock()
        """One batch at a time on an in-process engine: async GRPO scores several groups at once, and two threads
        inside one in-process vLLM engine corrupt its heap (measured: glibc abort in the CPU attention)."""

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
                return await asyncio.to_thread(self._generate_alone, requests)
            except PromptTooLongError:  # the backend could not say which prompt: none of the batch is scored
                return [None] * len(requests)
            except ProofsmithError as error:
                logger.warning("scoring batch failed (%s); attempt %d/%d", error, attempt + 1, self.retries + 1)
        return [None] * len(requests)

    def _generate_alone(self, requests: list[GenerationRequest]) -> list[GenerationResult | None]:
        with self._in_process:
            return generate_fitting(self.engine, requests)[0]


def scoring_sources(role: str, config: TrainConfig) -> dict[str, str]:
    """Which engine source scores each of the role's scoring stages ('verifier', 'meta'); 'none' stages, and a
    verifier stage the world's checker or the rollout's own self-score decides (no engine), left out."""
    settings = config.rewards
    stages = {"generator": {"verifier": settings.verifier, "meta": settings.meta},
              "verifier": {"meta": settings.meta}}.get(role, {})
    return {stage: source for stage, source in stages.items() if source not in ("none", *ENGINELESS_VERIFIERS, *WORLD_RATERS)}


def stage_clients(sources: dict[str, str], engines: dict[str, Engine], retries: int) -> dict[str, ScoringClient | None]:
    """A client per scoring stage from the engine of its source (one client per engine, shared by
    its stages); None where no engine is given yet (the trained model, attached later)."""
    clients = {source: ScoringClient(engine, retries) for source, engine in engines.items()}
    return {stage: clients.get(source) for stage, source in sources.items()}


def reference_engine_config(config: TrainConfig) -> EngineConfig:
    """``[scorer]``'s backend settings on the model training starts from: the frozen reference."""
    return replace(config.scorer, model=config.model.name)


def open_scoring_engines(config: TrainConfig, sources: set[str], parallel_sequences: int,
                         reference_in_trainer: bool) -> dict[str, Engine]:
    """The separate engines that ``sources`` need: 'engine' ([scorer]) and, unless the trainer
    serves it (LoRA, synchronous), 'reference'. Close them with ``close_all``."""
    from engine.auto import Workload
    from engine.factory import create_engine

    wanted = {"engine": config.scorer}
    if not reference_in_trainer:
        wanted["reference"] = reference_engine_config(config)
    engines: dict[str, Engine] = {}
    try:
        for source, engine_config in wanted.items():
            if source in sources:
                engines[source] = create_engine(engine_config, Workload(parallel_sequences, 0))
    except BaseException:
        close_all(engines)
        raise
    return engines


def close_all(engines: dict[str, Engine]) -> None:
    for engine in engines.values():
        engine.close()

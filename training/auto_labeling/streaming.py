"""Proof-by-proof labeling against a streaming backend (an OpenAI-compatible server).

Each proof is one task: its verification request (``n`` samples), then one request per
flagged analysis (``m`` samples), then its record is written. Every request goes through
the engine session's single concurrency bound, and at most that many proofs are in flight,
so a server continuously batching requests always has work and a finished proof never
waits for a slow unrelated one. Records therefore land in completion order; resuming goes
by id. If a request fails for good (the server stayed down), the other tasks are cancelled
and the error propagates: every record written before it is on disk and complete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from data.errors import PromptTooLongError, first_error
from data.records import ProofItem
from engine.base import EngineSession, GenerationRequest, GenerationResult, StreamingEngine
from engine.config import SamplingConfig
from training.auto_labeling.proofs import (
    LabeledProof,
    assemble,
    flagged_analyses,
    meta_rating,
    meta_requests,
    unverifiable,
    verification_request,
)
from training.auto_labeling.config import LabelConfig
from verifier.parse import VERIFIER_FORMAT
from verifier.verification import Verification, verification_from


async def fitting(session: EngineSession, request: GenerationRequest) -> GenerationResult | str:
    """The result, or why the prompt does not fit the model's context."""
    try:
        [result] = await session.generate([request])
    except PromptTooLongError as error:
        return str(error)
    return result


async def label_one(
    session: EngineSession, position: int, item: ProofItem, config: LabelConfig, sampling: SamplingConfig,
    prompts_dir: str | None,
) -> LabeledProof:
    answer = await fitting(session, verification_request(item, position, config, sampling, prompts_dir))
    if isinstance(answer, str):
        return unverifiable(item, answer)
    verification = verification_from(answer, VERIFIER_FORMAT, (item.proof,))
    flagged = flagged_analyses(verification)
    requests = meta_requests(item, position, verification, flagged, config, sampling, prompts_dir)
    ratings = await asyncio.gather(*(fitting(session, request) for request in requests))
    meta: dict[int, Verification] = {}
    meta_errors: dict[int, str] = {}
    for index, rating in zip(flagged, ratings):
        if isinstance(rating, str):
            meta_errors[index] = rating
        else:
            meta[index] = meta_rating(item, verification, index, rating)
    return assemble(item, verification, meta, meta_errors, config)


async def label_streaming(
    engine: StreamingEngine,
    pending: Sequence[tuple[int, ProofItem]],
    config: LabelConfig,
    sampling: SamplingConfig,
    prompts_dir: str | None,
    write: Callable[[LabeledProof], None],
) -> None:
    """Label every (input position, proof) pair, calling ``write`` as each one finishes."""
    if not pending:
        return
    async with engine.session() as session:
        in_flight = asyncio.Semaphore(session.concurrency)

        async def run(position: int, item: ProofItem) -> None:
            async with in_flight:
                labeled = await label_one(session, position, item, config, sampling, prompts_dir)
            write(labeled)

        try:
            async with asyncio.TaskGroup() as group:
                for position, item in pending:
                    group.create_task(run(position, item))
        except BaseExceptionGroup as failures:
            raise first_error(failures) from None

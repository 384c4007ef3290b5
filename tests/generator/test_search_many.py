"""Many problems' searches through one engine: lockstep calls, per-problem tasks, resume, token sums.

A scripted engine at the seam answers each request from its prompt, seed and sample index
alone, so a problem's pool must come out the same however its requests were batched
(tests/generator/test_search_cli.py runs the same paths on the real model and server).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from engine.base import Completion, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from generator.config import SearchConfig
from generator.search import search
from generator.search_many import SearchTask, rounds_left, search_many

OPENER = "Here is my evaluation of the solution:"
CLOSER = "Based on my evaluation, the final overall score should be:"
PROBLEMS = {"a": "Prove that 1 + 1 = 2.", "b": "Prove that 2 + 2 = 4.", "c": "Prove that 3 + 3 = 6."}
CONFIG = SearchConfig(pool=3, verify_samples=2, top_k=2, samples_per_pair=1, rounds=2, stop_at_full_pass=False)
SAMPLING = SamplingConfig(seed=5, max_tokens=64)


def digest(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


class SeededEngine:
    """Answers depend only on (prompt, seed, sample); counts its calls and the tokens it reports."""

    name = "scripted"
    model = "script"

    def __init__(self, fail_at_call: int | None = None, passes: set[str] = frozenset()) -> None:
        self.calls: list[int] = []
        self.tokens = 0
        self.fail_at_call = fail_at_call
        self.passes = passes  # problems whose every proof passes every verification

    def answer(self, request: GenerationRequest) -> GenerationResult:
        prompt = request.messages[-1].content
        completions = []
        for sample in range(request.n):
            value = digest(prompt, request.seed, sample)
            if prompt.startswith("You are grading a proof"):
                score = "1" if any(PROBLEMS[name] in prompt for name in self.passes) else ("0", "0.5", "1")[value % 2]
                text = f"{OPENER}\nnote {value}\n{CLOSER} \\boxed{{{score}}}"
            else:
                text = f"## Solution\nproof {value}\n## Self Evaluation\n{OPENER}\nok\n{CLOSER} \\boxed{{1}}"
            completions.append(Completion(text, "stop", 1 + value % 7))
        total = sum(completion.completion_tokens for completion in completions)
        self.tokens += total
        return GenerationResult(tuple(completions), 10, total, 0.0)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.calls.append(len(requests))
        if self.fail_at_call is not None and len(self.calls) == self.fail_at_call:
            raise RuntimeError("killed")
        return [self.answer(request) for request in requests]

    def close(self) -> None:
        pass


class StreamingSeededEngine(SeededEngine):
    """The same answers through ``session()``, each call yielding to the event loop so problems interleave."""

    def __init__(self, **settings: object) -> None:
        super().__init__(**settings)  # type: ignore[arg-type]
        self.in_flight = self.most_in_flight = 0

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[SessionView]:
        yield SessionView(self)


class SessionView:
    concurrency = 8

    def __init__(self, engine: StreamingSeededEngine) -> None:
        self.engine = engine

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        engine = self.engine
        engine.in_flight += 1
        engine.most_in_flight = max(engine.most_in_flight, engine.in_flight)
        await asyncio.sleep(0.001)
        engine.in_flight -= 1
        return engine.generate(requests)


def tasks_in(root: Path, names: Sequence[str] = tuple(PROBLEMS)) -> list[SearchTask]:
    return [SearchTask(name, PROBLEMS[name], root / name) for name in names]


def records(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "pool.jsonl").read_text(encoding="utf-8").splitlines()]


def searched_alone(root: Path, config: SearchConfig = CONFIG) -> dict[str, list[dict]]:
    for name, problem in PROBLEMS.items():
        search(SeededEngine(), problem, config, SAMPLING, root / name)
    return {name: records(root / name) for name in PROBLEMS}


def test_lockstep_sends_each_round_of_every_problem_in_one_call_and_matches_searching_alone(tmp_path: Path) -> None:
    engine = SeededEngine()
    pools = search_many(engine, tasks_in(tmp_path / "joint"), CONFIG, SAMPLING)
    # Per round: one generation call (one one-sample request per proof: round 0 pool per problem, later K refinements),
    # then one verification call (one request per new proof, n=N).
    assert engine.calls == [9, 9, 6, 6, 6, 6]
    assert searched_alone(tmp_path / "alone") == {name: records(tmp_path / "joint" / name) for name in PROBLEMS}
    assert [len(pools[name]) for name in PROBLEMS] == [7, 7, 7]
    assert sum(c.completion_tokens for pool in pools.values() for c in pool) == engine.tokens  # every token counted once
    for name in PROBLEMS:
        assert json.loads((tmp_path / "joint" / name / "state.json").read_text()) == {"completed_rounds": 3}


def test_per_problem_tasks_give_the_same_pools_and_overlap_their_calls(tmp_path: Path) -> None:
    engine = StreamingSeededEngine()
    search_many(engine, tasks_in(tmp_path / "tasks"), CONFIG, SAMPLING)
    assert engine.most_in_flight == 3  # every problem had a call in flight at once
    assert searched_alone(tmp_path / "alone") == {name: records(tmp_path / "tasks" / name) for name in PROBLEMS}
    lockstep = StreamingSeededEngine()
    search_many(lockstep, tasks_in(tmp_path / "lockstep"), CONFIG, SAMPLING, per_problem_tasks=False)
    assert lockstep.calls == [9, 9, 6, 6, 6, 6] and lockstep.most_in_flight == 0  # forced lockstep: plain generate


def test_a_killed_joint_run_resumes_each_problem_where_it_stopped(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="killed"):
        search_many(SeededEngine(fail_at_call=4), tasks_in(tmp_path), CONFIG, SAMPLING)  # dies verifying round 1
    assert all(json.loads((tmp_path / name / "state.json").read_text()) == {"completed_rounds": 1} for name in PROBLEMS)
    assert rounds_left(tasks_in(tmp_path), CONFIG) == 6
    engine = SeededEngine()
    search_many(engine, tasks_in(tmp_path), CONFIG, SAMPLING)
    assert engine.calls == [6, 6, 6, 6]  # round 0 is not run again
    assert searched_alone(tmp_path / "alone") == {name: records(tmp_path / name) for name in PROBLEMS}


def test_problems_at_different_rounds_advance_together_and_a_finished_one_sends_nothing(tmp_path: Path) -> None:
    search(SeededEngine(), PROBLEMS["a"], CONFIG, SAMPLING, tmp_path / "a")  # a is done; b and c are new
    engine = SeededEngine()
    search_many(engine, tasks_in(tmp_path), CONFIG, SAMPLING)
    assert engine.calls == [6, 6, 4, 4, 4, 4]


def test_a_full_pass_stops_its_problem_while_the_others_go_on(tmp_path: Path) -> None:
    engine = SeededEngine(passes={"b"})
    pools = search_many(engine, tasks_in(tmp_path), SearchConfig(pool=3, verify_samples=2, top_k=2, rounds=2), SAMPLING)
    assert {c.round for c in pools["b"]} == {0} and {c.round for c in pools["a"]} == {0, 1, 2}
    assert engine.calls == [9, 9, 4, 4, 4, 4]


def test_tasks_need_distinct_ids_and_directories(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="distinct"):
        search_many(SeededEngine(), [SearchTask("a", "P", tmp_path), SearchTask("b", "Q", tmp_path)], CONFIG, SAMPLING)
    with pytest.raises(ValueError, match="empty problem"):
        SearchTask("a", " ", tmp_path)
    with pytest.raises(ValueError, match="no session"):
        search_many(SeededEngine(), tasks_in(tmp_path), CONFIG, SAMPLING, per_problem_tasks=True)

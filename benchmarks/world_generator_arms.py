"""Does generator GRPO make the world model's proofs truly better? Arms from one start, judged by the checker.

Every arm trains the world model's generator with ``configs/world_generator.toml`` (GRPO on the
training problems whose calibrated pass rate lies strictly between 0 and 1; α 0.76 / β 0.24 with
the self-evaluation) from the same checkpoint, with the same steps and seeds; only the source of
the proof score s differs:

- ``checker``: the world's checker against the problem's goal (``rewards.verifier = "checker"``):
  the upper bound, what a perfect verifier would teach;
- ``reference``: the learned verifier, i.e. the starting model frozen and playing the verifier
  (the paper's reward, ``rewards.verifier = "reference"``).
- ``self``: the rollout's own self-score (``rewards.verifier = "self"``): nothing checks the proof,
  the arm that shows what a reward without a verifier teaches.

Before and after, ``proofsmith world calibrate`` samples 8 proofs per problem of test_in (problems
never trained on) with the same seeds, so the comparison is paired problem by problem. Reported per
arm and seed: true pass@1 on the fresh problems of trained templates, overall and per (family,
level), before, after and the paired gain with a 95 % bootstrap interval over problems; the
held-out templates beside them; and, over the steps, the reward's proof score against the
checker's pass rate of the same rollouts (the hacking picture). Every command resumes; a finished
run or calibration is read back, not redone (``--finished-only``: report what is calibrated, run nothing). Writes ``OUT/world_generator_arms.json`` and
``OUT/world_generator_arms.png``.

    python benchmarks/world_generator_arms.py --out benchmarks/results --seeds 0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.jsonl import read_jsonl  # noqa: E402
from eval.intervals import bootstrap_intervals  # noqa: E402
from training.trainers.metrics import curve, read_metrics  # noqa: E402
from world_runs import MACHINE, START_MODEL, WORLD, proofsmith  # noqa: E402
from world_runs import calibrate as calibrate_with  # noqa: E402

CONFIG = "configs/world_generator.toml"
ARMS: dict[str, tuple[str, ...]] = {"checker": ("--set", "rewards.verifier=checker"), "reference": (),
                                     "self": ("--set", "rewards.verifier=self")}
CALIBRATE = ("--split", "test_in", "--engine", "vllm", "--samples", "8", "--temperature", "1", "--max-tokens", "640",
             "--seed", "0", "--max-problems-per-group", "8", "--set", "engine.max_model_len=1024",
             "--set", "calibrate.chunk_size=256")
CURVES = ("reward/proof_score", "truth/pass_rate", "truth/self_accuracy")


def calibrate(model: str | Path, out: Path) -> float | None:
    return calibrate_with(model, out, *CALIBRATE)


def pass_rates(calibration: Path) -> dict[str, dict[str, Any]]:
    """Per problem id of a calibration: its group and its sampled pass rate."""
    return {record["id"]: {"family": record["family"], "level": record["level"], "templates": record.get("templates", ""),
                           "rate": sum(record["passes"]) / len(record["passes"])}
            for record in read_jsonl(calibration / "generations.jsonl") if record["passes"]}


def paired(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], keep: Any) -> dict[str, Any]:
    """pass@1 before and after on the problems both measured that ``keep`` selects, and the gain's interval."""
    pairs = [(before[key]["rate"], after[key]["rate"]) for key in sorted(set(before) & set(after)) if keep(before[key])]
    if not pairs:
        return {"problems": 0}

    def means(sample: Any) -> dict[str, float]:
        return {"before": sum(b for b, _ in sample) / len(sample), "after": sum(a for _, a in sample) / len(sample),
                "gain": sum(a - b for b, a in sample) / len(sample)}

    return {"problems": len(pairs), **means(pairs), "intervals": bootstrap_intervals(pairs, means)}


def comparison(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    groups = sorted({(row["family"], row["level"]) for row in before.values() if row["templates"] == "seen"})
    return {
        "seen templates": paired(before, after, lambda row: row["templates"] == "seen"),
        "held-out templates": paired(before, after, lambda row: row["templates"] == "held-out"),
        **{f"{family} {level} (seen)": paired(before, after, lambda row, f=family, lv=level:
                                              row["templates"] == "seen" and (row["family"], row["level"]) == (f, lv))
           for family, level in groups},
    }


def smoothed(values: list[float], window: int = 10) -> list[float]:
    return [sum(values[max(0, i - window + 1): i + 1]) / len(values[max(0, i - window + 1): i + 1]) for i in range(len(values))]


def plot(runs: dict[str, Path], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(CURVES), figsize=(5 * len(CURVES), 3.8), sharey=True)
    for name, run_dir in runs.items():
        records = read_metrics(run_dir / "metrics.jsonl")
        for axis, metric in zip(axes, CURVES):
            steps, values = curve(records, metric)
            if values:
                axis.plot(steps, smoothed(values), label=name)
    for axis, metric in zip(axes, CURVES):
        axis.set_title(f"{metric} (mean of the last 10 steps)", fontsize=9)
        axis.set_xlabel("GRPO step (2 problems x 8 rollouts)")
        axis.set_ylim(0, 1)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where the JSON and the plot go")
    parser.add_argument("--runs", default="runs/world-generator", help="where the arms' runs and calibrations go")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="GRPO seeds (grpo.seed) per arm")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    parser.add_argument("--finished-only", action="store_true",
                        help="train and calibrate nothing: report the arms and seeds already calibrated")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    if not (WORLD / "summary.json").exists():
        raise SystemExit(f"{WORLD} holds no world: draw it with the command in {CONFIG}")
    if args.finished_only and not (runs / "start" / "calibration" / "calibration.json").exists():
        raise SystemExit(f"--finished-only: the start is not calibrated yet ({runs / 'start' / 'calibration'})")
    seconds: dict[str, float | None] = {"start calibration": calibrate(START_MODEL, runs / "start" / "calibration")}
    before = pass_rates(runs / "start" / "calibration")
    results: dict[str, Any] = {"machine": MACHINE, "config": CONFIG, "start": START_MODEL, "arms": {}}
    trained: dict[str, Path] = {}
    for arm in args.arms:
        for seed in args.seeds:
            name, run_dir = f"{arm}-seed{seed}", runs / f"{arm}-seed{seed}"
            if args.finished_only and not (run_dir / "calibration" / "calibration.json").exists():
                continue
            command = ["train", "generator", "--config", CONFIG, "--run-dir", str(run_dir), *ARMS[arm], "--set", f"grpo.seed={seed}"]
            seconds[f"{name} training"] = None if (run_dir / "COMPLETE").exists() else proofsmith(*command, "--json")
            seconds[f"{name} calibration"] = calibrate(run_dir / "final", run_dir / "calibration")
            trained[name] = run_dir
            records = read_metrics(run_dir / "metrics.jsonl")
            results["arms"][name] = {
                "command": "proofsmith " + " ".join(command),
                "steps": len(records),
                "test_in pass@1": comparison(before, pass_rates(run_dir / "calibration")),
                "curves": {metric: dict(zip(*curve(records, metric))) for metric in CURVES},
            }
    results["seconds"] = seconds
    (out / "world_generator_arms.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    plot(trained, out / "world_generator_arms.png")
    for name, arm in results["arms"].items():
        for group, figures in arm["test_in pass@1"].items():
            if figures["problems"]:
                low, high = figures["intervals"]["gain"]
                print(f"{name:18} {group:28} {figures['problems']:3} problems: pass@1 {figures['before']:.3f} -> "
                      f"{figures['after']:.3f}, gain {figures['gain']:+.3f} [{low:+.3f}, {high:+.3f}]")
    print(f"wrote {out / 'world_generator_arms.json'} and {out / 'world_generator_arms.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

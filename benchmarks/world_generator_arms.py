"""Does generator GRPO make the world model's proofs truly better? Arms from one start, judged by the checker.

Every arm trains the world model's generator with ``configs/world_generator.toml`` (GRPO on the
training problems whose calibrated pass rate lies strictly between 0 and 1, or with ``--unit group``
on every training problem of the (family, level) groups whose calibrated pass@1 lies in 0.2–0.7;
α 0.76 / β 0.24 with the self-evaluation) from the same checkpoint, with the same steps and seeds;
only the source of the proof score s differs:

- ``checker``: the world's checker against the problem's goal (``rewards.verifier = "checker"``):
  the upper bound, what a perfect verifier would teach;
- ``reference``: the learned verifier, i.e. the starting model frozen and playing the verifier
  (the paper's reward, ``rewards.verifier = "reference"``).
- ``verifier``: a learned verifier other than the start (``--verifier``: a checkpoint, e.g. a world model
  fine-tuned on its generator's proofs as ``world_verifier_own_proofs.py`` does), frozen, on the
  transformers engine (``rewards.verifier = "engine"``): the paper's reward with a verifier trained apart;
- ``self``: the rollout's own self-score (``rewards.verifier = "self"``): nothing checks the proof,
  the arm that shows what a reward without a verifier teaches.
- ``checker-beta0``: the checker with β = 0, the proof's truth alone (no reward for the
  self-evaluation's honesty): whether that term is what moves the proofs.

Before and after, ``proofsmith world calibrate --role generator`` samples 8 proofs of every test_in
problem (never trained on) with the same seeds, so the comparison is paired problem by problem. Reported per
arm and seed: true pass@1 on the fresh problems of trained templates, overall and per (family,
level), before, after and the paired gain with a 95 % bootstrap interval over problems; the
held-out templates beside them; and, over the steps, the reward's proof score against the
checker's pass rate of the same rollouts (the hacking picture). Every command resumes; a finished
run or calibration is read back, not redone (``--finished-only``: report what is calibrated, run nothing). Writes ``OUT/world_generator_arms.json`` and
``OUT/world_generator_arms.png`` (``_group`` with ``--unit group`` and ``_TAG`` with ``--tag``, before the
suffix). A variant of the config (``--set``, repeatable) is named by ``--tag``.

    python benchmarks/world_generator_arms.py --out benchmarks/results --seeds 0 1 2 --arms checker reference \
        --unit group --set grpo.learning_rate=1e-5 --tag lr1e-5
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.jsonl import read_jsonl  # noqa: E402
from eval.intervals import bootstrap_intervals  # noqa: E402
from training.trainers.metrics import curve, read_metrics  # noqa: E402
from world_runs import MACHINE, START_MODEL, draw_world, proofsmith  # noqa: E402
from world_runs import calibrate as calibrate_with  # noqa: E402

CONFIG = "configs/world_generator.toml"
ARMS: dict[str, tuple[str, ...]] = {"checker": ("--set", "rewards.verifier=checker"), "reference": (),
                                     "verifier": ("--set", "rewards.verifier=engine", "--set", "scorer.backend=transformers"),
                                     "self": ("--set", "rewards.verifier=self"),
                                     "checker-beta0": ("--set", "rewards.verifier=checker", "--set", "rewards.beta=0")}
CALIBRATE = ("--split", "test_in", "--role", "generator", "--engine", "vllm", "--samples", "8", "--max-tokens", "640",
             "--seed", "0", "--set", "engine.max_model_len=1024", "--set", "calibrate.chunk_size=256")
"""8 proofs of every test_in problem (285; 194 of seen templates), no analyses: ~3 minutes a model; the temperature
is the rollouts' (1) unless ``--eval-temperature`` says otherwise."""
UNITS: dict[str, tuple[str, ...]] = {"problem": ("--set", "data.calibration_unit=problem"),
                                      "group": ("--set", "data.calibration_unit=group")}
"""data.calibration_unit: the 31 calibrated problems with a spread, or every problem of the edge groups."""
EVALUATION = "calibration-generator"
"""The folder of a model's calibration (the start's: RUNS/start-generator), ``-tT`` after it below temperature 1."""
CURVES = ("reward/proof_score", "truth/pass_rate", "truth/self_accuracy")


def calibrate(model: str | Path, out: Path, temperature: float = 1.0) -> float | None:
    return calibrate_with(model, out, *CALIBRATE, "--temperature", f"{temperature:g}")


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


def edge_groups() -> set[tuple[str, int]]:
    """(family, level) of the groups the config's training calibration put at the edge of competence (pass@1 in
    0.2–0.7 on training problems): where the arms train with ``--unit group``, and what (d) is judged on."""
    calibration = tomllib.loads((REPO / CONFIG).read_text(encoding="utf-8"))["data"]["calibration"]
    edge = json.loads((REPO / calibration).read_text(encoding="utf-8"))["edge_of_competence"]["groups"]
    return {(group["family"], group["level"]) for group in edge}


def comparison(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], edge: set[tuple[str, int]]) -> dict[str, Any]:
    groups = sorted({(row["family"], row["level"]) for row in before.values() if row["templates"] == "seen"})
    return {
        "edge groups (seen)": paired(before, after, lambda row: row["templates"] == "seen" and (row["family"], row["level"]) in edge),
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
    parser.add_argument("--arms", nargs="+", default=[arm for arm in ARMS if arm != "verifier"], choices=list(ARMS))
    parser.add_argument("--unit", default="problem", choices=list(UNITS),
                        help="data.calibration_unit of the training problems (group: runs named ARM-group-seedN)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a further config override for every arm (repeatable); needs --tag")
    parser.add_argument("--verifier", default="", help="the verifier arm's checkpoint (scorer.model); needs --tag")
    parser.add_argument("--tag", default="", help="names the variant --set makes: runs ARM[-group]-TAG-seedN, results _TAG")
    parser.add_argument("--eval-temperature", type=float, default=1.0,
                        help="sample the before and after proofs at this temperature (is a gain more than a sharper "
                             "distribution? compare with the start at the same temperature); results _tT")
    parser.add_argument("--finished-only", action="store_true",
                        help="train and calibrate nothing: report the arms and seeds already calibrated")
    args = parser.parse_args()
    if bool(args.overrides or args.verifier) != bool(args.tag):
        parser.error("--set or --verifier and --tag go together: a variant needs a name, and a name a difference")
    if ("verifier" in args.arms) != bool(args.verifier):
        parser.error("the verifier arm and --verifier go together")
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    draw_world()
    suffix = "" if args.eval_temperature == 1 else f"-t{args.eval_temperature:g}"
    evaluation, start = EVALUATION + suffix, runs / f"start-generator{suffix}"
    if args.finished_only and not (start / "calibration.json").exists():
        raise SystemExit(f"--finished-only: the start is not calibrated yet ({start})")
    seconds: dict[str, float | None] = {"start calibration": calibrate(START_MODEL, start, args.eval_temperature)}
    before, edge = pass_rates(start), edge_groups()
    results: dict[str, Any] = {"machine": MACHINE, "config": CONFIG, "start": START_MODEL, "evaluation": " ".join(CALIBRATE) + f" --temperature {args.eval_temperature:g}",
                               "unit": args.unit, "overrides": args.overrides, "arms": {}}
    trained: dict[str, Path] = {}
    for arm in args.arms:
        for seed in args.seeds:
            name = "-".join([arm, *([args.unit] if args.unit != "problem" else []), *([args.tag] if args.tag else []), f"seed{seed}"])
            run_dir = runs / name
            if args.finished_only and not (run_dir / evaluation / "calibration.json").exists():
                continue
            verifier = ("--set", f"scorer.model={args.verifier}") if arm == "verifier" else ()
            command = ["train", "generator", "--config", CONFIG, "--run-dir", str(run_dir), *ARMS[arm], *verifier, *UNITS[args.unit],
                       *[flag for override in args.overrides for flag in ("--set", override)],
                       "--set", f"grpo.seed={seed}"]
            seconds[f"{name} training"] = None if (run_dir / "COMPLETE").exists() else proofsmith(*command, "--json")
            seconds[f"{name} calibration"] = calibrate(run_dir / "final", run_dir / evaluation, args.eval_temperature)
            trained[name] = run_dir
            records = read_metrics(run_dir / "metrics.jsonl")
            results["arms"][name] = {
                "command": "proofsmith " + " ".join(command),
                "steps": len(records),
                "test_in pass@1": comparison(before, pass_rates(run_dir / evaluation), edge),
                "curves": {metric: dict(zip(*curve(records, metric))) for metric in CURVES},
            }
    results["seconds"] = seconds
    stem = "_".join(["world_generator_arms", *([args.unit] if args.unit != "problem" else []), *([args.tag] if args.tag else [])]) + suffix.replace("-", "_")
    (out / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    plot(trained, out / f"{stem}.png")
    for name, arm in results["arms"].items():
        for group, figures in arm["test_in pass@1"].items():
            if figures["problems"]:
                low, high = figures["intervals"]["gain"]
                print(f"{name:18} {group:28} {figures['problems']:3} problems: pass@1 {figures['before']:.3f} -> "
                      f"{figures['after']:.3f}, gain {figures['gain']:+.3f} [{low:+.3f}, {high:+.3f}]")
    print(f"wrote {out / stem}.json and {out / stem}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

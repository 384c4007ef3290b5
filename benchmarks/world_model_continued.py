"""A world model that keeps the stronger generator and its verifier: the bundled model trained on, both roles at once.

``world_generator_sft.py`` found the bundled model under-trained as a generator: 600 SFT steps on its training
problems' correct proofs lifted fresh-problem pass@1 0.13 -> 0.34, but the verifier, not trained there, lost
localisation (0.28 -> 0.12) and turned lenient. Here ``proofsmith world model`` continues the bundled model
(``init_model``, ``configs/world_model_continued.toml``) on examples drawn anew from the same world: twice the
generator examples of the bundled run beside the verifier and meta-verifier ones it had. Then both roles are
calibrated on test_in exactly as the start and the SFT model were (the generator on every problem,
``world_generator_arms.CALIBRATE``; the verifier on 8 problems a group, ``world_verifier_rl.calibrate``) and
compared with each, problem by problem (proof by proof) with 95 % bootstrap intervals. ``--grpo-seeds`` then
runs the checker arm of (d) from the continued model on *its own* edge groups (its training calibration's: the
start's edge is past a stronger model, ``world_generator_sft.py`` found), compared with it on those groups.

Every stage resumes (the training run too: rerun the command). Adds an entry named by the run directory to
``OUT/world_model_continued.json``; ``--set`` passes overrides to the command (a second stage continues the first):

    python benchmarks/world_model_continued.py --out benchmarks/results
    python benchmarks/world_model_continued.py --out benchmarks/results --run runs/world-lm-continued-2 \
        --set init_model=runs/world-lm-continued/final --set examples.seed=2 --set examples.generator_per_problem=3 \
        --set training.max_steps=1800 --grpo-seeds 0
    python benchmarks/world_model_continued.py --out benchmarks/results --run runs/world-lm-continued-3 \
        --set init_model=runs/world-lm-continued-2/final --set examples.seed=3 --set examples.verifier_per_problem=4 \
        --set examples.generator_per_problem=2 --set training.max_steps=1800 --previous runs/world-lm-continued-2
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
from world_finer_steps import START_CALIBRATION as START_GENERATOR  # noqa: E402
from world_finer_steps import families  # noqa: E402
from world_generator_arms import ARMS, CALIBRATE, UNITS, comparison, pass_rates  # noqa: E402
from world_generator_arms import CONFIG as GENERATOR_CONFIG  # noqa: E402
from world_generator_sft import METRICS, START_VERIFIER, by_group, print_generator_gains  # noqa: E402
from world_runs import MACHINE, WORLD, proofsmith  # noqa: E402
from world_runs import calibrate as calibrate_with  # noqa: E402
from world_step_errors import measure as step_errors  # noqa: E402
from world_verifier_rl import calibrate as calibrate_verifier  # noqa: E402
from world_verifier_rl import compare, shown_work  # noqa: E402

CONFIG = "configs/world_model_continued.toml"
SFT = Path("runs/world-generator-sft/steps600")
"""The generator-only SFT model of world_generator_sft.py (``--steps 600``), the other comparison."""
VERIFIER_GROUPS = ("test_in", "test_in seen templates", "test_in held-out templates", "test_out")


def generator_against(before: Path, after: Path) -> dict[str, Any]:
    return by_group(pass_rates(before), pass_rates(after))


def verifier_against(before: Path, after: Path) -> dict[str, Any]:
    comparison = compare(before, after)
    return {group: {"proofs": comparison[group]["proofs"],
                    **{f"{name} {when}": comparison[group]["metrics"][f"{name} {when}"]
                       for name in METRICS for when in ("before", "after", "gain")}}
            for group in VERIFIER_GROUPS if group in comparison}


def grpo_from(run: Path, seed: int, before: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The checker arm of world_generator_arms.py (learning rate 1e-5, every training problem of the edge groups) from
    ``run``'s model, the edge chosen by its own training calibration; its test_in pass@1 against that model's."""
    training = run / "calibration-train"
    calibrate_verifier(run / "final", training, "--split", "train")
    calibration = json.loads((training / "calibration.json").read_text(encoding="utf-8"))
    edge = {(group["family"], group["level"]) for group in calibration["edge_of_competence"]["groups"]}
    grpo = run.with_name(f"{run.name}-checker-seed{seed}")
    command = ["train", "generator", "--config", GENERATOR_CONFIG, "--run-dir", str(grpo), "--model", str(run / "final"),
               *ARMS["checker"], *UNITS["group"], "--set", "grpo.learning_rate=1e-5", "--set", f"grpo.seed={seed}",
               "--set", f"data.calibration={training / 'calibration.json'}"]
    if not (grpo / "COMPLETE").exists():
        proofsmith(*command)
    calibrate_with(grpo / "final", grpo / "calibration-generator", *CALIBRATE, "--temperature", "1")
    steps = [record for record in read_jsonl(grpo / "metrics.jsonl") if "frac_reward_zero_std" in record]
    return {"command": "proofsmith " + " ".join(command), "edge groups": sorted(f"{family} {level}" for family, level in edge),
            "groups without reward spread": sum(record["frac_reward_zero_std"] for record in steps) / len(steps),
            "rollouts passing": sum(record["truth/pass_rate"] for record in steps) / len(steps),
            **comparison(before, pass_rates(grpo / "calibration-generator"), edge)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--run", default="runs/world-lm-continued", help="the world-model run directory (--out of the command)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an override of the config")
    parser.add_argument("--previous", default="", help="a run this one continued: both roles compared with it as well")
    parser.add_argument("--against", default="", help="a run of the same recipe without the change tried (an ablation): "
                                                      "both roles compared with it, paired")
    parser.add_argument("--grpo-seeds", type=int, nargs="*", default=[],
                        help="then the checker arm of (d) from the continued model on its own edge groups, per seed")
    args = parser.parse_args()
    for needed in (START_GENERATOR, START_VERIFIER):
        if not (needed / "calibration.json").exists():
            raise SystemExit(f"needs {needed}: python benchmarks/world_generator_arms.py and benchmarks/world_verifier_rl.py")
    with_sft = all((SFT / name / "calibration.json").exists() for name in ("calibration-generator", "calibration"))
    run = Path(args.run)
    command = ["world", "model", "--config", CONFIG, "--out", str(run), *(item for value in args.set for item in ("--set", value))]
    if not (run / "COMPLETE").exists():
        proofsmith(*command)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    generator, verifier = run / "calibration-generator", run / "calibration"
    calibrate_with(run / "final", generator, *CALIBRATE, "--temperature", "1")
    calibrate_verifier(run / "final", verifier)
    seen = ("seen templates", "held-out templates")
    result = {
        "machine": MACHINE, "world": str(WORLD), "command": "proofsmith " + " ".join(command),
        "training": {key: summary.get(key) for key in ("examples", "steps", "minutes", "trained_tokens", "tokens_per_second",
                                                       "padding_fraction", "precision", "parameters", "decision_weight",
                                                       "decision_token_share")},
        "generator, test_in pass@1 against the start": generator_against(START_GENERATOR, generator),
        "pass@1 of seen templates by family": {"start": families(pass_rates(START_GENERATOR)),
                                               "continued": families(pass_rates(generator))},
        "identity step errors": {"start": step_errors(START_GENERATOR, WORLD, {"identity"}, {1, 2}, "seen"),
                                 "continued": step_errors(generator, WORLD, {"identity"}, {1, 2}, "seen")},
        "verifier against the start": verifier_against(START_VERIFIER, verifier),
        "verifier's shown work, test_in": {"start": shown_work(START_VERIFIER), "continued": shown_work(verifier)},
    }
    if with_sft:  # the generator-only SFT model, where its calibrations are on this machine
        result["generator, test_in pass@1 against the generator-only SFT"] = {
            group: entry for group, entry in generator_against(SFT / "calibration-generator", generator).items() if group in seen}
        result["pass@1 of seen templates by family"]["generator-only SFT"] = families(pass_rates(SFT / "calibration-generator"))
        result["verifier against the generator-only SFT"] = verifier_against(SFT / "calibration", verifier)
    def paired_with(other: Path) -> dict[str, Any]:
        return {"previous": str(other), "generator": {group: entry for group, entry in generator_against(
                other / "calibration-generator", generator).items() if group in seen},
                "verifier": verifier_against(other / "calibration", verifier)}

    if args.previous:  # the stage this one continued
        result["against the previous stage"] = paired_with(Path(args.previous))
    if args.against:
        result[f"against {Path(args.against).name}"] = paired_with(Path(args.against))
    for seed in args.grpo_seeds:
        result[f"checker GRPO from it, seed {seed}"] = grpo_from(run, seed, pass_rates(generator))
    path = Path(args.out) / "world_model_continued.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    results[run.name] = result
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print_generator_gains(result, args.grpo_seeds)
    for group, entry in result["verifier against the start"].items():
        print(f"verifier {group}:", {name: None if value["value"] is None else round(value["value"], 3)
                                     for name, value in entry.items() if name != "proofs"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Is the bundled world model under-trained as a generator? Continue it on its own training proofs and measure.

``world_finer_steps.py`` found that 200 SFT steps on the correct identity proofs of the bundled model's
own training problems (which it had seen ~2.8 times) doubled its identity pass@1 on fresh problems
(0.27 -> 0.53), at a cost to the families it was not shown. Here the same continuation covers every
training family: the bundled model is fine-tuned (``proofsmith train sft``, generator answers only) on
the correct proof of each of its training problems, with the worked self-evaluation it was taught
(``worked_analysis``), then calibrated on test_in as a generator (every problem, 8 proofs, temperature
1, seed 0: ``world_generator_arms.CALIBRATE``) and as a verifier (``world_verifier_rl.calibrate``: 8
analyses of the proofs of 8 problems a group), each compared problem by problem (proof by proof) with
the start. The verifier is not trained here, so its figures say what the continuation costs it.
``--grpo-seeds`` then runs the checker arm of (d) from the continued model (is there more for RL to
sharpen in a stronger start?), compared with the continued model on the same problems.

Every stage resumes. Writes ``OUT/world_generator_sft.json``.

    python benchmarks/world_generator_sft.py --out benchmarks/results --steps 600 --grpo-seeds 0
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

from data.jsonl import read_jsonl, write_jsonl  # noqa: E402
from world_finer_steps import START_CALIBRATION as START_GENERATOR  # noqa: E402
from world_finer_steps import families, identity_templates  # noqa: E402
from world_generator_arms import ARMS, CALIBRATE, CONFIG, UNITS, comparison, edge_groups, paired, pass_rates  # noqa: E402
from world_runs import MACHINE, START, START_MODEL, WORLD, proofsmith  # noqa: E402
from world_runs import calibrate as calibrate_with  # noqa: E402
from world_step_errors import measure as step_errors  # noqa: E402
from world_verdict_reads_work import world_train_proofs  # noqa: E402
from world_verifier_rl import calibrate as calibrate_verifier  # noqa: E402
from world_verifier_rl import compare  # noqa: E402

RUNS = Path("runs/world-generator-sft")
START_VERIFIER = START / "calibration-templates"
METRICS = ("balanced_accuracy", "localisation", "invented_defect_rate")


def rows() -> Path:
    """Generator rows (problem, correct proof, score 1, worked self-evaluation) of every training problem, written once."""
    from training.role_data.world_critiques import worked_analysis

    path = RUNS / "rows.jsonl"
    if not path.exists():  # write_jsonl writes the whole file at once
        RUNS.mkdir(parents=True, exist_ok=True)
        write_jsonl(path, [{"id": proof.problem.id, "problem": proof.problem.statement, "proof": proof.proof, "score": 1.0,
                            "critique": worked_analysis(proof)} for proof in world_train_proofs() if proof.score == 1.0])
    return path


def grpo_from(run: Path, seed: int, before: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The checker arm of world_generator_arms.py from ``run``'s model; its test_in pass@1 against that model's."""
    grpo = run.with_name(f"{run.name}-checker-seed{seed}")
    command = ["train", "generator", "--config", CONFIG, "--run-dir", str(grpo), "--model", str(run / "final"),
               *ARMS["checker"], *UNITS["group"], "--set", "grpo.learning_rate=1e-5", "--set", f"grpo.seed={seed}"]
    if not (grpo / "COMPLETE").exists():
        proofsmith(*command)
    calibrate_with(grpo / "final", grpo / "calibration-generator", *CALIBRATE, "--temperature", "1")
    after, edge = pass_rates(grpo / "calibration-generator"), edge_groups()
    return {"command": "proofsmith " + " ".join(command),
            "seen templates": paired(before, after, lambda rate: rate["templates"] == "seen"),
            "edge groups (seen)": paired(before, after, lambda rate: rate["templates"] == "seen"
                                         and (rate["family"], rate["level"]) in edge),
            "pass@1 of seen templates by family": families(after)}


def by_group(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Paired pass@1 on seen templates, held-out templates and each (family, level) of seen ones: ``comparison``
    without an edge."""
    return {group: entry for group, entry in comparison(before, after, set()).items() if group != "edge groups (seen)"}


def print_generator_gains(result: dict[str, Any], grpo_seeds: list[int]) -> None:
    """The continued model's pass@1 gains per group, then each checker GRPO seed's from it."""
    for group, entry in result["generator, test_in pass@1 against the start"].items():
        if entry.get("problems"):
            low, high = entry["intervals"]["gain"]
            print(f"{group:28s} {entry['problems']:4d} problems: {entry['before']:.3f} -> {entry['after']:.3f} "
                  f"({entry['gain']:+.3f} [{low:+.3f}, {high:+.3f}])")
    for seed in grpo_seeds:
        for group in ("edge groups (seen)", "seen templates"):
            entry = result[f"checker GRPO from it, seed {seed}"][group]
            low, high = entry["intervals"]["gain"]
            print(f"checker GRPO seed {seed}, {group}: {entry['before']:.3f} -> {entry['after']:.3f} "
                  f"({entry['gain']:+.3f} [{low:+.3f}, {high:+.3f}])")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--steps", type=int, default=600, help="SFT steps (batch 16)")
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--grpo-seeds", type=int, nargs="*", default=[],
                        help="then checker-rewarded generator GRPO from the continued model (configs/world_generator.toml at "
                             "learning rate 1e-5 on the edge groups, world_generator_arms.py's checker arm) per seed, "
                             "compared with the continued model")
    args = parser.parse_args()
    for needed in (START_GENERATOR, START_VERIFIER):
        if not (needed / "calibration.json").exists():
            raise SystemExit(f"needs {needed}: python benchmarks/world_generator_arms.py and benchmarks/world_verifier_rl.py")
    run = RUNS / f"steps{args.steps}"
    command = ["train", "sft", "--model", START_MODEL, "--data", str(rows()), "--run-dir", str(run),
               "--set", "sft.formats=generator", "--set", "model.lora=false", "--set", "sft.max_length=768",
               "--set", f"sft.max_steps={args.steps}", "--set", "sft.batch_size=16",
               "--set", f"sft.learning_rate={args.learning_rate:g}", "--set", f"sft.save_steps={args.steps}"]
    seconds = None if (run / "COMPLETE").exists() else proofsmith(*command)
    generator, verifier = run / "calibration-generator", run / "calibration"
    calibrate_with(run / "final", generator, *CALIBRATE, "--temperature", "1")
    calibrate_verifier(run / "final", verifier)
    start, after = pass_rates(START_GENERATOR), pass_rates(generator)
    comparison = compare(START_VERIFIER, verifier)["test_in"]
    result = {
        "machine": MACHINE, "world": str(WORLD), "command": "proofsmith " + " ".join(command),
        "rows": len(read_jsonl(rows())), "fine-tune seconds": round(seconds, 1) if seconds else None,
        "generator, test_in pass@1 against the start": by_group(start, after),
        "pass@1 of seen templates by family": {"start": families(start), "after": families(after)},
        "pass@1 of identity templates": {"start": identity_templates(START_GENERATOR), "after": identity_templates(generator)},
        "identity step errors": {"start": step_errors(START_GENERATOR, WORLD, {"identity"}, {1, 2}, "seen"),
                                 "after": step_errors(generator, WORLD, {"identity"}, {1, 2}, "seen")},
        "verifier, test_in against the start": {f"{name} {when}": comparison["metrics"][f"{name} {when}"]
                                                for name in METRICS for when in ("before", "after", "gain")},
    }
    for seed in args.grpo_seeds:
        result[f"checker GRPO from it, seed {seed}"] = grpo_from(run, seed, after)
    path = Path(args.out) / "world_generator_sft.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if result["fine-tune seconds"] is None:  # a finished run read back keeps the time of the run that trained it
        result["fine-tune seconds"] = results.get(f"{args.steps} steps", {}).get("fine-tune seconds")
    results[f"{args.steps} steps"] = result
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print_generator_gains(result, args.grpo_seeds)
    print("verifier:", {name: value["value"] if value["value"] is None else round(value["value"], 3)
                        for name, value in result["verifier, test_in against the start"].items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

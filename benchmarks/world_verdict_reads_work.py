"""Does a verdict taught to read its own work localise flaws better? The fix data/world/work.py's finding points to.

The bundled world model writes both sides of an equality step expanded, then "They agree" or "They
differ", but the verdict ignores the sides it wrote: it says "differ" about as often when they agree as
when they differ, so it cannot localise, and verifier GRPO only moved how often it says it
(docs/results/world-model-verifier-rl.md, "Why localisation falls"). The world's own analyses always
write the true sides, so a verdict guessed from the step fitted them as well as one that reads the
sides. Here the model is fine-tuned (``proofsmith train sft``, verifier answers only) on analyses of its
training proofs in which, now and then, a side is written wrongly and the verdict follows the sides as
written (``misworked_analysis``, the chance ``--shares`` per eligible step), the rest the world's worked
analyses; a control arm is fine-tuned the same way with share 0 (the worked analyses only), so a gain
that more fine-tuning alone gives is not credited to the slips. Each model is calibrated like every
verifier of world_verifier_rl.py (8 analyses of every calibrated test_in / test_out proof, seed 0) and
compared with the start proof by proof: balanced accuracy, localisation, invented defects, and the
shown work (does "differ" now follow the sides?).

``--form difference`` does the same in the difference form (``worked_step``): each equality's left minus
right is written, expanded from the sides as written, before the verdict, so the verdict reads one
token (is it 0?) instead of comparing two polynomials, and the comparison itself is taught token by
token. Runs ``runs/world-verdict-difference-share{X}``. ``--grpo META`` then trains each arm's model with
verifier GRPO (``rewards.meta = META``) into ``RUN-grpo-META`` and compares it with the model it started from.

Every step resumes (written rows, a finished fine-tune or calibration are read back). Writes
``OUT/world_verdict_reads_work.json`` (after each arm; arms of the other form, run before, are kept).

    python benchmarks/world_verdict_reads_work.py --out benchmarks/results
    python benchmarks/world_verdict_reads_work.py --out benchmarks/results --form difference --shares 0 0.3
    python benchmarks/world_verdict_reads_work.py --out benchmarks/results --form difference --shares 0.3 --grpo checker_work
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.jsonl import write_jsonl  # noqa: E402
from world_runs import MACHINE, START, START_MODEL, proofsmith  # noqa: E402
from world_verifier_rl import ARMS, calibrate, compare, shown_work  # noqa: E402

WORLD_MODEL_CONFIG = "configs/world_model.toml"
FORMS = ("sides", "difference")
SFT = ("--set", "sft.formats=verifier", "--set", "model.lora=false", "--set", "sft.max_length=768",
       "--set", "sft.save_steps=100")


def world_train_proofs() -> list[Any]:
    """The bundled model's training proofs, drawn again from the [world] of configs/world_model.toml (the same proofs)."""
    from data.world.config import WorldConfig
    from data.world.splits import make_splits
    from proofsmith.config import read_toml

    return make_splits(WorldConfig(**read_toml(Path(WORLD_MODEL_CONFIG))["world"]))["train"].proofs


def write_rows(path: Path, share: float, per_problem: int, seed: int, difference: bool = False) -> dict[str, int]:
    """Verifier rows (problem, proof, score, critique) of ``per_problem`` proofs a training problem, true scores in turn;
    the critique is :func:`misworked_analysis` at ``share`` (in the difference form when ``difference``) and the score the
    one it concludes. Its counts go beside, in ``path`` with the suffix .json, written last."""
    from training.role_data.world_critiques import misworked_analysis
    from training.world_model.examples import by_problem, drawn_in_turn

    rng = random.Random(f"{seed}/verdict-reads-work/{share}" + ("/difference" if difference else ""))
    rows, slipped = [], 0
    for group in by_problem(world_train_proofs()).values():
        for proof in drawn_in_turn(group, per_problem, rng):
            analysis, score = misworked_analysis(proof, rng, share, difference)
            slipped += score != proof.score
            rows.append({"id": f"{proof.id}-{len(rows)}", "problem": proof.problem.statement, "proof": proof.proof,
                         "score": score, "critique": analysis})
    write_jsonl(path, rows)
    summary = {"rows": len(rows), "scored other than the truth": slipped}
    path.with_suffix(".json").write_text(json.dumps(summary) + "\n", encoding="utf-8")
    return summary


def grpo_from(run: Path, meta: str) -> dict[str, Any]:
    """Verifier GRPO (configs/world_verifier.toml, seed 0) from the fine-tuned model of ``run``, calibrated and compared
    with that model. No spread filter: the start's calibration of the training proofs describes another model."""
    grpo_run = Path(f"{run}-grpo-{meta}")
    command = ("train", "verifier", "--config", "configs/world_verifier.toml", "--set", f"model.name={run / 'final'}",
               "--set", f"rewards.meta={meta}", "--set", "data.calibration=", "--set", "grpo.seed=0",
               "--run-dir", str(grpo_run))
    entry: dict[str, Any] = {"command": "proofsmith " + " ".join(command)}
    if not (grpo_run / "COMPLETE").exists():
        entry["training seconds"] = proofsmith(*command)
    calibrate(grpo_run / "final", grpo_run / "calibration")
    entry["comparison"] = compare(run / "calibration", grpo_run / "calibration")
    entry["work"] = shown_work(grpo_run / "calibration")
    return entry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where world_verdict_reads_work.json goes")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.3, 0.0],
                        help="arms: the chance that an eligible step's side is written wrongly (0: the control)")
    parser.add_argument("--steps", type=int, default=300, help="SFT steps of each arm")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--per-problem", type=int, default=2, help="training proofs a problem")
    parser.add_argument("--form", choices=FORMS, default="sides",
                        help="sides: the world model's worked form; difference: left minus right written before the verdict")
    parser.add_argument("--grpo", choices=ARMS, default=None,
                        help="then verifier GRPO from each arm's model with this rewards.meta, compared with that model")
    args = parser.parse_args()
    if not (START / "calibration-templates" / "calibration.json").exists():
        raise SystemExit("calibrate the start first: python benchmarks/world_verifier_rl.py (its step 4)")
    path = Path(args.out) / "world_verdict_reads_work.json"
    # Arms of the other form, run before, stay in the file.
    results: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"arms": {}}
    results.update({"machine": MACHINE, "start": START_MODEL, "start_work": shown_work(START / "calibration-templates")})
    legacy = results.pop("settings", None)  # files written before arms carried their own
    for entry in results["arms"].values():
        entry.setdefault("settings", legacy)
    for share in args.shares:
        name = f"share {share:g}" if args.form == "sides" else f"{args.form}, share {share:g}"
        run = Path(f"runs/world-verdict-share{share:g}" if args.form == "sides" else f"runs/world-verdict-{args.form}-share{share:g}")
        rows = run / "rows.jsonl"
        if not rows.with_suffix(".json").exists():  # the summary is written last
            run.mkdir(parents=True, exist_ok=True)
            write_rows(rows, share, args.per_problem, 0, args.form == "difference")
        entry: dict[str, Any] = {"settings": vars(args), "rows": json.loads(rows.with_suffix(".json").read_text(encoding="utf-8"))}
        command = ("train", "sft", "--model", START_MODEL, "--data", str(rows), "--run-dir", str(run),
                   "--set", f"sft.max_steps={args.steps}", "--set", f"sft.batch_size={args.batch_size}",
                   "--set", f"sft.learning_rate={args.learning_rate}", *SFT)
        entry["command"] = "proofsmith " + " ".join(command)
        if not (run / "COMPLETE").exists():
            entry["training seconds"] = proofsmith(*command)
        elif "training seconds" in results["arms"].get(name, {}):
            entry["training seconds"] = results["arms"][name]["training seconds"]
        calibrate(run / "final", run / "calibration")
        entry["comparison"] = compare(START / "calibration-templates", run / "calibration")
        entry["work"] = shown_work(run / "calibration")
        if args.grpo:
            entry["grpo"] = grpo_from(run, args.grpo)
        elif "grpo" in results["arms"].get(name, {}):
            entry["grpo"] = results["arms"][name]["grpo"]
        results["arms"][name] = entry
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for name, entry in results["arms"].items():
        metrics = entry["comparison"]["test_in"]["metrics"]
        shown = "; ".join(f"{metric} {metrics[f'{metric} before']['value']:.3f} -> {metrics[f'{metric} after']['value']:.3f}"
                          for metric in ("balanced_accuracy", "localisation", "invented_defect_rate"))
        work = entry["work"]
        print(f"{name}: test_in {shown}; says differ when its sides differ {work['says differ when its sides differ']:.3f}, "
              f"agree {work['says differ when its sides agree']:.3f}"
              + ("" if "says differ when its left minus right is 0" not in work else
                 f"; when left minus right is not 0 {work.get('says differ when its left minus right is not 0', 0):.3f}, "
                 f"0 {work['says differ when its left minus right is 0']:.3f}"))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

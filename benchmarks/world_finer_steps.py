"""Does writing a square's formula before its value let the world model compute the cross term?

``world_step_errors.py`` found where the bundled world model's identity proofs break: it writes the
square terms of ``(pa + qb)^2`` right (~0.9) and the cross term ``2pq`` almost never (~0.13, even on
its training problems and greedy). ``world.fine_steps`` writes each square by its formula first
(``(4a - 7b)^2`` → ``(4a)^2 + 2(4a)(-7b) + (-7b)^2`` → ``16a^2 - 56ab + 49b^2``), so the factors of
``2pq`` stand right before it. A world model trained from scratch on it takes hours here; this asks
the same question cheaply: the bundled model is fine-tuned (``proofsmith train sft``, generator
answers only) on the correct identity proofs of a training split, one a problem, with a short
fixed self-evaluation (the worked one writes a fine proof's long expressions again and runs past the
model's 1,024 positions: median 990 tokens an answer, against 414 this way): in the fine form (the world of ``configs/world_model.toml`` drawn with
``fine_steps = true``), and, as the control that gets the same fine-tuning, in the default form (the
bundled model's own training problems). The fine draw consumes its random numbers differently, so
its problems are other draws of the same templates and levels (1,715 each; a statement of the
bundled world's test splits is left out: 3 of the fine draw's). Both are calibrated on every test_in problem (generator only,
8 proofs a problem, temperature 1, seed 0) and compared problem by problem on the identity problems
of seen templates (pass@1 and its paired 95 % bootstrap interval), with the square and cross terms
of what each wrote (``world_step_errors``). The other families are reported too: fine-tuning on
identity alone may cost them.

Every stage resumes (rows, a finished fine-tune or calibration are read back). Writes
``OUT/world_finer_steps.json``.

    python benchmarks/world_finer_steps.py --out benchmarks/results
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.jsonl import read_jsonl, write_jsonl  # noqa: E402
from world_generator_arms import CALIBRATE, paired, pass_rates  # noqa: E402
from world_runs import MACHINE, START_MODEL, WORLD, proofsmith  # noqa: E402
from world_runs import calibrate as calibrate_with  # noqa: E402
from world_step_errors import measure as step_errors  # noqa: E402

RUNS = Path("runs/world-finer-steps")
WORLD_MODEL_CONFIG = "configs/world_model.toml"
FORMS = ("default", "fine")
START_CALIBRATION = Path("runs/world-generator/start-generator")
"""The start's calibration with the same flags (world_generator_arms.py writes it)."""


def identity_rows(fine: bool) -> list[dict[str, Any]]:
    """Generator rows (problem, proof, score 1) of every training identity problem's correct proof; no critique column, so
    the self-evaluation taught is the fixed short paragraph of a score-1 proof (``COLD_START_ANALYSES``)."""
    from data.world.config import WorldConfig
    from data.world.splits import make_splits
    from proofsmith.config import read_toml

    settings = {**read_toml(Path(WORLD_MODEL_CONFIG))["world"], "fine_steps": fine}
    proofs = make_splits(WorldConfig(**settings))["train"].proofs
    tested = {row["problem"] for split in ("test_in", "test_out") for row in read_jsonl(WORLD / f"{split}_problems.jsonl")}
    return [{"id": proof.problem.id, "problem": proof.problem.statement, "proof": proof.proof, "score": proof.score}
            for proof in proofs if proof.problem.family == "identity" and proof.score == 1.0
            and proof.problem.statement not in tested]


def rows_of(form: str) -> Path:
    path = RUNS / f"rows-{form}.jsonl"
    if not path.exists():  # write_jsonl writes the whole file at once
        path.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(path, identity_rows(form == "fine"))
    return path


def fine_tune(form: str, steps: int) -> tuple[list[str], float | None]:
    run = RUNS / form
    command = ["train", "sft", "--model", START_MODEL, "--data", str(rows_of(form)), "--run-dir", str(run),
               "--set", "sft.formats=generator", "--set", "model.lora=false", "--set", "sft.max_length=1024",
               "--set", f"sft.max_steps={steps}", "--set", "sft.batch_size=16", "--set", "sft.learning_rate=3e-4",
               "--set", f"sft.save_steps={steps}"]
    seconds = None if (run / "COMPLETE").exists() else proofsmith(*command)
    return command, seconds


def families(rates: dict[str, dict[str, Any]]) -> dict[str, float]:
    """pass@1 per family of the seen templates."""
    groups: dict[str, list[float]] = {}
    for rate in rates.values():
        if rate["templates"] == "seen":
            groups.setdefault(rate["family"], []).append(rate["rate"])
    return {family: round(sum(values) / len(values), 4) for family, values in sorted(groups.items())}


def identity_templates(calibration: Path) -> dict[str, float]:
    """pass@1 per template of the identity problems of seen templates (the form of a proof does not enter it)."""
    groups: dict[str, list[float]] = {}
    for record in read_jsonl(calibration / "generations.jsonl"):
        if record["family"] == "identity" and record.get("templates") == "seen" and record["passes"]:
            groups.setdefault(f"{record['template']} {record['level']}", []).append(sum(record["passes"]) / len(record["passes"]))
    return {template: round(sum(values) / len(values), 4) for template, values in sorted(groups.items())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--steps", type=int, default=200, help="SFT steps of each arm (batch 16)")
    args = parser.parse_args()
    if not (START_CALIBRATION / "generations.jsonl").exists():
        raise SystemExit(f"needs {START_CALIBRATION}: python benchmarks/world_generator_arms.py")
    path = Path(args.out) / "world_finer_steps.json"
    earlier = json.loads(path.read_text(encoding="utf-8"))["arms"] if path.exists() else {}
    results: dict[str, Any] = {"machine": MACHINE, "world": str(WORLD), "arms": {}}
    start = pass_rates(START_CALIBRATION)
    identity_seen = lambda rate: rate["family"] == "identity" and rate["templates"] == "seen"  # noqa: E731
    calibrations = {"start": START_CALIBRATION}
    for form in FORMS:
        started = time.monotonic()
        command, seconds = fine_tune(form, args.steps)
        calibration = RUNS / form / "calibration-generator"
        calibrate_with(RUNS / form / "final", calibration, *CALIBRATE, "--temperature", "1")
        calibrations[form] = calibration
        results["arms"][form] = {"command": "proofsmith " + " ".join(command), "rows": len(read_jsonl(rows_of(form))),
                                 "fine-tune seconds": round(seconds, 1) if seconds else earlier.get(form, {}).get("fine-tune seconds"),
                                 "seconds this run": round(time.monotonic() - started, 1)}
    for name, calibration in calibrations.items():
        rates = pass_rates(calibration)
        entry = results["arms"].setdefault(name, {})
        entry["pass@1 of seen templates by family"] = families(rates)
        entry["pass@1 of identity templates"] = identity_templates(calibration)
        entry["identity, seen templates, against the start"] = paired(start, rates, identity_seen)
        entry["step errors"] = step_errors(calibration, WORLD, {"identity"}, {1, 2}, "seen")
    results["fine against default, identity seen templates"] = paired(
        pass_rates(calibrations["default"]), pass_rates(calibrations["fine"]), identity_seen)
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    for name in ("start", *FORMS):
        entry = results["arms"][name]
        print(name, entry["pass@1 of seen templates by family"], entry["pass@1 of identity templates"],
              entry["step errors"]["squares multiplied out"])
    print("fine − default:", results["fine against default, identity seen templates"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does a short verifier GRPO run raise the tiny world model's balanced accuracy? Two recipes; the first is the CI test's.

The verifier's counterpart of ``tiny_generator_learning.py``: the tiny world model shipped with the
tests (``tests/fixtures/tiny-world-model``) is trained by verifier GRPO (R = R_format · R_score; no
meta-verifier, ``rewards.meta = "none"``) on training proofs where its verdicts have a spread (of
SPREAD_SAMPLES analyses at temperature 1, some but not all give the checker's score: a group with no
reward spread teaches nothing), with the rows of the rarer true scores repeated
(``data.balance_scores``) so that "always 0" is not an optimum. Before and after, the proofs are
verified ``samples`` times a proof with fixed seeds and scored against the checker's truth:
per-sample balanced accuracy (mean over the true scores 0 / 0.5 / 1 of the share of analyses that give
it; a format failure is a miss; chance is 1/3). Per GRPO seed, and again with the learning rate at
1e-30 (what a trainer that does not learn gives), with what each true score was given; and the
starting model measured a second time with another sampling seed (the measurement's own noise). Each
set is measured in its own engine call (the transformers engine seeds a micro-batch from its rows).

- ``few`` (the CI test's, ``tests/training/test_verifier_learns.py``): 8 proofs of distinct problems,
  taken in turn from each true score, 32 steps (each proof in ~8 groups), 16 analyses a proof to
  measure. This guards that the optimizer follows the verifier's reward on what it trains on, not that
  the verifier generalises. Measured 2026-12-06 on seeds 0-4: 0.226 -> 0.34-0.45 (learning rate 1e-30:
  0.226; the start drawn again: 0.267). Writes ``OUT/tiny_verifier_learning_few.json``.
- ``held-out``: every proof with a spread (41), 16 steps (each proof in under one group), 4 analyses a
  proof, and test_in (new problems and held-out templates) beside it. Measured 2026-12-05 on seeds 0-4:
  balanced accuracy 0.315 -> 0.26-0.35 on the trained-on proofs, test_in 0.308 -> 0.23-0.34: no gain
  beyond the measurement's noise (docs/results/world-model-rl.md reads it). Writes
  ``OUT/tiny_verifier_learning.json`` (the file there predates ``redrawn_before``).

    python benchmarks/tiny_verifier_learning.py --out benchmarks/results --recipe few --seeds 0 1 2 3 4
    python benchmarks/tiny_verifier_learning.py --out benchmarks/results --recipe held-out --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.learning_runs import runs_per_seed, write_result  # noqa: E402
from data.jsonl import read_jsonl, write_jsonl  # noqa: E402

MODEL = REPO / "tests" / "fixtures" / "tiny-world-model" / "final"
WORLD = MODEL.parent / "world"
LEARNING_RATE, MAX_TOKENS, GROUP, SPREAD_SAMPLES = 1e-3, 250, 8, 4
"""Learning rate of the learning runs; tokens an analysis; analyses per proof in a GRPO group; analyses a proof that
decide whether its verdicts have a spread."""
MEASURE_SEED, REDRAW_SEED = 0, 1
"""Sampling seed of every measurement, and of the starting model's second measurement (the noise a gain must clear)."""
COLUMNS = ("id", "problem", "proof", "score")


@dataclass(frozen=True)
class Recipe:
    """What a recipe trains on, how long, and how finely it measures."""

    proofs: int
    """Proofs trained on (0: every training proof with a spread)."""
    steps: int
    """GRPO steps (2 proofs a step)."""
    samples: int
    """Analyses a proof when measuring."""
    result: str
    """File the benchmark writes."""
    held_out: bool
    """Measure test_in beside the trained-on proofs."""


RECIPES = {"few": Recipe(8, 32, 16, "tiny_verifier_learning_few.json", held_out=False),
           "held-out": Recipe(0, 16, 4, "tiny_verifier_learning.json", held_out=True)}
FEW = RECIPES["few"]


def grpo_command(data: Path, run_dir: Path, seed: int, learning_rate: float = LEARNING_RATE, steps: int = FEW.steps) -> list[str]:
    """The ``proofsmith train verifier`` arguments of the learning run."""
    return ["train", "verifier", "--run-dir", str(run_dir), "--data", str(data), "--model", str(MODEL),
            "--prompts", str(MODEL / "prompts"), "--json", "--max-steps", str(steps), "--group-size", str(GROUP),
            "--max-tokens", str(MAX_TOKENS), "--learning-rate", str(learning_rate),
            "--set", "rewards.meta=none", "--set", "data.balance_scores=true", "--set", "grpo.prompts_per_step=2",
            "--set", f"grpo.save_steps={steps}", "--set", f"grpo.seed={seed}"]


def split_proofs(name: str) -> list[dict[str, Any]]:
    """The proofs of a split of the fixture's world, with their problem (``problem_id``) for choosing distinct ones."""
    return [{key: row[key] for key in (*COLUMNS, "problem_id")} for row in read_jsonl(WORLD / f"{name}.jsonl")]


def training_rows(proofs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The columns ``proofsmith train verifier`` reads."""
    return [{key: proof[key] for key in COLUMNS} for proof in proofs]


def distinct_problems(proofs: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Up to ``count`` of ``proofs``, no two of one problem, taken in turn from each true score (1, 0.5, 0) in order of
    appearance: a few proofs a small model can tell apart by their problem, every score among them."""
    queues = {score: [proof for proof in proofs if float(proof["score"]) == score] for score in (1.0, 0.5, 0.0)}
    chosen: list[dict[str, Any]] = []
    problems: set[str] = set()
    while len(chosen) < count and any(queues.values()):
        for queue in queues.values():
            while queue and len(chosen) < count:
                proof = queue.pop(0)
                if proof["problem_id"] not in problems:
                    problems.add(proof["problem_id"])
                    chosen.append(proof)
                    break
    return chosen


def sampled_scores(model: Path, proof_sets: list[list[dict[str, Any]]], samples: int,
                   seed: int = MEASURE_SEED) -> list[list[list[float | None]]]:
    """``samples`` verifications of each proof by ``model`` (transformers, fp32, temperature 1, ``seed``): their parsed
    scores (None: no score). One model load, one engine call per set: a set's draws never depend on the sets beside it,
    so the CI test that measures one set alone sees exactly what this benchmark saw."""
    from engine.config import EngineConfig, SamplingConfig
    from engine.transformers_backend import TransformersEngine
    from verifier.verification import verify_proofs

    engine = TransformersEngine(EngineConfig(backend="transformers", model=str(model), device="cpu", dtype="float32"))
    try:
        return [[[analysis.score for analysis in result.analyses] for result in
                 verify_proofs(engine, [(proof["problem"], proof["proof"]) for proof in proofs], samples,
                               SamplingConfig(temperature=1.0, max_tokens=MAX_TOKENS, seed=seed), str(MODEL / "prompts"))]
                for proofs in proof_sets]
    finally:
        engine.close()


def hit_rates(proofs: list[dict[str, Any]], scores: list[list[float | None]]) -> dict[str, float]:
    """Each proof's share of analyses that give its true score."""
    return {proof["id"]: sum(score == proof["score"] for score in given) / len(given) for proof, given in zip(proofs, scores)}


def balanced(proofs: list[dict[str, Any]], rates: dict[str, float]) -> float:
    """Mean over the true scores present of the mean hit rate of their proofs (per-sample balanced accuracy)."""
    by_score: dict[float, list[float]] = {}
    for proof in proofs:
        by_score.setdefault(float(proof["score"]), []).append(rates[proof["id"]])
    return sum(sum(values) / len(values) for values in by_score.values()) / len(by_score)


def breakdown(proofs: list[dict[str, Any]], scores: dict[str, list[float | None]]) -> dict[str, dict[str, float]]:
    """Per true score: the share of its analyses that give each score (``none``: no score), to see what a gain is made of."""
    table: dict[str, dict[str, float]] = {}
    for truth in (0.0, 0.5, 1.0):
        given = [score for proof in proofs if float(proof["score"]) == truth for score in scores[proof["id"]]]
        if given:
            table[f"{truth:g}"] = {("none" if value is None else f"{value:g}"): round(given.count(value) / len(given), 3)
                                   for value in (None, 0.0, 0.5, 1.0) if value in given}
    return table


def measured(model: Path, sets: dict[str, list[dict[str, Any]]], samples: int,
             seed: int = MEASURE_SEED) -> dict[str, dict[str, Any]]:
    """Per named proof set: per-sample balanced accuracy of ``model`` and what each true score got (one model load)."""
    results = {}
    for (name, rows), given in zip(sets.items(), sampled_scores(model, list(sets.values()), samples, seed)):
        rates = hit_rates(rows, given)
        results[name] = {"balanced_accuracy": balanced(rows, rates),
                         "given": breakdown(rows, {row["id"]: scores for row, scores in zip(rows, given)})}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--recipe", choices=sorted(RECIPES), default="few")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args()
    recipe = RECIPES[args.recipe]
    train = split_proofs("train")
    started = time.monotonic()
    train_rates = hit_rates(train, sampled_scores(MODEL, [train], SPREAD_SAMPLES)[0])
    spread = [proof for proof in train if 0 < train_rates[proof["id"]] < 1]
    chosen = distinct_problems(spread, recipe.proofs) if recipe.proofs else spread
    sets = {"trained_on": chosen, **({"test_in": split_proofs("test_in")} if recipe.held_out else {})}
    before = measured(MODEL, sets, recipe.samples)
    redrawn = measured(MODEL, sets, recipe.samples, REDRAW_SEED)
    results: dict[str, Any] = {
        "machine": "2-core CPU (AMD EPYC), 24 GiB, no GPU; transformers, fp32", "recipe": args.recipe, "steps": recipe.steps,
        "learning_rate": LEARNING_RATE, "group_size": GROUP, "samples": recipe.samples,
        "proofs": {name: len(rows) for name, rows in sets.items()}, "train_proofs": len(train), "with_spread": len(spread),
        "trained_on_ids": [proof["id"] for proof in chosen],
        "true_scores": {name: {f"{score:g}": [float(row["score"]) for row in rows].count(score) for score in (0.0, 0.5, 1.0)}
                        for name, rows in sets.items()},
        "before": before, "redrawn_before": {name: redrawn[name]["balanced_accuracy"] for name in sets},
        "measure_s": round(time.monotonic() - started, 1), "runs": []}
    print(f"{len(chosen)} of {len(train)} training proofs ({len(spread)} with a spread); before: {json.dumps(before)}")
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "proofs.jsonl"
        write_jsonl(data, training_rows(chosen))

        def measure(final: Path) -> dict[str, Any]:
            after = measured(final, sets, recipe.samples)
            return {"after": after,
                    "gain": {name: after[name]["balanced_accuracy"] - before[name]["balanced_accuracy"] for name in sets}}

        results["runs"] = runs_per_seed(lambda run_dir, seed, rate: grpo_command(data, run_dir, seed, rate, recipe.steps),
                                        Path(scratch), args.seeds, LEARNING_RATE, measure)
    write_result(args.out, recipe.result, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

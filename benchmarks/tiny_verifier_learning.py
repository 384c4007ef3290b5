"""Does a short verifier GRPO run raise the tiny world model's balanced accuracy, on its training proofs and on held-out ones?

The verifier's counterpart of ``tiny_generator_learning.py``: the tiny world model shipped with the
tests (``tests/fixtures/tiny-world-model``) is trained by verifier GRPO (R = R_format · R_score; no
meta-verifier, ``rewards.meta = "none"``) on the training proofs where its verdicts have a spread (of
SAMPLES analyses at temperature 1, some but not all give the checker's score: a group with no reward
spread teaches nothing), with the rows of the rarer true scores repeated (``data.balance_scores``) so
that "always 0" is not an optimum. Before and after, those proofs and every proof of test_in (new
problems and held-out templates, never trained on) are verified SAMPLES times with the same seeds and
scored against the checker's truth: per-sample balanced accuracy (mean over the true scores 0 / 0.5 / 1
of the share of analyses that give it; a format failure is a miss; chance is 1/3). Per GRPO seed, and
again with the learning rate at 1e-30 (what a trainer that does not learn gives), with what each true
score was given. Each set is measured in its own engine call (the transformers engine seeds a micro-batch
from its rows, so measuring sets together made a set's figure depend on the others). Measured 2026-12-05 on
seeds 0-4: 41 of 98 training proofs with a spread; their balanced accuracy 0.315 -> 0.26-0.35, test_in 0.308
-> 0.23-0.34 (mean -0.03; learning rate 1e-30: 0): no gain beyond the measurement's noise, about chance
(docs/results/world-model-rl.md reads it). Writes ``OUT/tiny_verifier_learning.json``.

    python benchmarks/tiny_verifier_learning.py --out benchmarks/results --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.learning_runs import runs_per_seed, write_result  # noqa: E402
from data.jsonl import read_jsonl, write_jsonl  # noqa: E402

MODEL = REPO / "tests" / "fixtures" / "tiny-world-model" / "final"
WORLD = MODEL.parent / "world"
STEPS, LEARNING_RATE, MAX_TOKENS, GROUP, SAMPLES = 16, 1e-3, 250, 8, 4
"""GRPO steps and learning rate of the learning run; tokens an analysis; analyses per proof in a GRPO group and when
measuring."""
COLUMNS = ("id", "problem", "proof", "score")


def grpo_command(data: Path, run_dir: Path, seed: int, learning_rate: float = LEARNING_RATE) -> list[str]:
    """The ``proofsmith train verifier`` arguments of the learning run."""
    return ["train", "verifier", "--run-dir", str(run_dir), "--data", str(data), "--model", str(MODEL),
            "--prompts", str(MODEL / "prompts"), "--json", "--max-steps", str(STEPS), "--group-size", str(GROUP),
            "--max-tokens", str(MAX_TOKENS), "--learning-rate", str(learning_rate),
            "--set", "rewards.meta=none", "--set", "data.balance_scores=true", "--set", "grpo.prompts_per_step=2",
            "--set", f"grpo.save_steps={STEPS}", "--set", f"grpo.seed={seed}"]


def split_proofs(name: str) -> list[dict[str, Any]]:
    return [{key: row[key] for key in COLUMNS} for row in read_jsonl(WORLD / f"{name}.jsonl")]


def sampled_scores(model: Path, proof_sets: list[list[dict[str, Any]]]) -> list[list[list[float | None]]]:
    """SAMPLES verifications of each proof by ``model`` (transformers, fp32, temperature 1, seed 0): their parsed scores
    (None: no score). One model load, one engine call per set: a set's draws never depend on the sets beside it, so
    the CI test that measures test_in alone sees exactly what this benchmark saw."""
    from engine.config import EngineConfig, SamplingConfig
    from engine.transformers_backend import TransformersEngine
    from verifier.verification import verify_proofs

    engine = TransformersEngine(EngineConfig(backend="transformers", model=str(model), device="cpu", dtype="float32"))
    try:
        return [[[analysis.score for analysis in result.analyses] for result in
                 verify_proofs(engine, [(proof["problem"], proof["proof"]) for proof in proofs], SAMPLES,
                               SamplingConfig(temperature=1.0, max_tokens=MAX_TOKENS, seed=0), str(MODEL / "prompts"))]
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


def measured(model: Path, sets: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per named proof set: per-sample balanced accuracy of ``model`` and what each true score got (one model load)."""
    results = {}
    for (name, rows), given in zip(sets.items(), sampled_scores(model, list(sets.values()))):
        rates = hit_rates(rows, given)
        results[name] = {"balanced_accuracy": balanced(rows, rates),
                         "given": breakdown(rows, {row["id"]: scores for row, scores in zip(rows, given)})}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args()
    train, test_in = split_proofs("train"), split_proofs("test_in")
    started = time.monotonic()
    train_rates = hit_rates(train, sampled_scores(MODEL, [train])[0])
    chosen = [proof for proof in train if 0 < train_rates[proof["id"]] < 1]
    sets = {"trained_on": chosen, "test_in": test_in}
    before = measured(MODEL, sets)
    results: dict[str, Any] = {
        "machine": "2-core CPU (AMD EPYC), 24 GiB, no GPU; transformers, fp32", "steps": STEPS,
        "learning_rate": LEARNING_RATE, "group_size": GROUP, "samples": SAMPLES,
        "proofs": {name: len(rows) for name, rows in sets.items()}, "train_proofs": len(train),
        "trained_on_ids": [proof["id"] for proof in chosen],
        "true_scores": {name: {f"{score:g}": [row["score"] for row in rows].count(score) for score in (0.0, 0.5, 1.0)}
                        for name, rows in sets.items()},
        "before": before, "measure_s": round(time.monotonic() - started, 1), "runs": []}
    print(f"{len(chosen)} of {len(train)} training proofs with a spread; before: {json.dumps(before)}")
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "proofs.jsonl"
        write_jsonl(data, chosen)

        def measure(final: Path) -> dict[str, Any]:
            after = measured(final, sets)
            return {"after": after,
                    "gain": {name: after[name]["balanced_accuracy"] - before[name]["balanced_accuracy"] for name in sets}}

        results["runs"] = runs_per_seed(lambda run_dir, seed, rate: grpo_command(data, run_dir, seed, rate),
                                        Path(scratch), args.seeds, LEARNING_RATE, measure)
    write_result(args.out, "tiny_verifier_learning.json", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

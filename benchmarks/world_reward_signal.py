"""Does the learned verifier's score tell the generator's true proofs from its false ones, where GRPO needs it to?

Generator GRPO with the learned verifier as reward (``rewards.verifier = "reference"``) only teaches
truth if, inside a group of rollouts of one problem, the proofs the checker passes score higher
than the ones it fails. This measures that on the generator's own proofs, not on the world's
hand-made flawed ones: the proofs a calibration sampled (``generations.jsonl``: 8 per problem,
each with the checker's verdict) are scored by the verifier with ``proofsmith eval verifier``
(n analyses each, in-process vLLM) at each temperature asked, and reported:

- the mean verifier score of passing and of failing proofs;
- AUC: the chance that a random passing proof scores above a random failing one (ties half);
- **within-problem ranking**: the same chance for a passing and a failing proof of the same
  problem, which is what a group's advantage rewards; with one analysis a proof (what training
  uses, ``rewards.verify_samples = 1``) and with the mean of all n.

0.5 is a coin; the checker itself is 1. Adds an entry (``--name``) to ``OUT/world_reward_signal.json``.

    python benchmarks/world_reward_signal.py --calibration runs/world-lm-long/calibration-train \\
        --out benchmarks/results --temperatures 0.7 0 --name "start, training problems"
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.jsonl import read_jsonl, write_jsonl  # noqa: E402
from eval.intervals import bootstrap_intervals  # noqa: E402
from world_runs import MACHINE, START_MODEL, proofsmith  # noqa: E402

SCORING_MAX_TOKENS = "448"
"""As configs/world_generator.toml's [scoring]: worked analyses run to ~370 tokens."""


def graded_proofs(calibration: Path, problems: dict[str, str]) -> list[dict[str, Any]]:
    """One row per sampled proof that parsed: its problem, the text, and the checker's verdict as the score."""
    rows = []
    for record in read_jsonl(calibration / "generations.jsonl"):
        for index, (proof, passed, parsed) in enumerate(zip(record["proofs"], record["passes"], record["formats_ok"])):
            if parsed and proof.strip():
                rows.append({"id": f"{record['id']}/{index}", "problem_id": record["id"], "problem": problems[record["id"]],
                             "proof": proof, "score": 1.0 if passed else 0.0})
    return rows


def chance_above(high: list[float], low: list[float]) -> float | None:
    """P(a score of ``high`` > one of ``low``), ties counting half; None without a pair. Counted by distinct value
    (scores take a few values), so the bootstrap can afford it."""
    if not high or not low:
        return None
    above, below = Counter(high), Counter(low)
    wins = sum(count_a * count_b * (1.0 if a > b else 0.5 if a == b else 0.0)
               for a, count_a in above.items() for b, count_b in below.items())
    return wins / (len(high) * len(low))


def signal(rows: list[dict[str, Any]], scores: dict[str, list[float]]) -> dict[str, Any]:
    """The measures of the module docstring from each proof's analysis scores (a failed parse counts as 0), with
    95 % bootstrap intervals over problems."""
    first = {key: values[0] for key, values in scores.items() if values}
    mean = {key: sum(values) / len(values) for key, values in scores.items() if values}
    scored = [row for row in rows if row["id"] in first]
    problems = [list(group) for _, group in itertools.groupby(sorted(scored, key=lambda row: row["problem_id"]),
                                                               key=lambda row: row["problem_id"])]

    def ranking(groups: Sequence[list[dict[str, Any]]], by: dict[str, float]) -> float | None:
        chances = [chance for group in groups
                   if (chance := chance_above([by[row["id"]] for row in group if row["score"] == 1.0],
                                              [by[row["id"]] for row in group if row["score"] == 0.0])) is not None]
        return sum(chances) / len(chances) if chances else None

    def measures(groups: Sequence[list[dict[str, Any]]]) -> dict[str, float | None]:
        proofs = [row for group in groups for row in group]
        passing = [row["id"] for row in proofs if row["score"] == 1.0]
        failing = [row["id"] for row in proofs if row["score"] == 0.0]
        return {"auc, one analysis": chance_above([first[key] for key in passing], [first[key] for key in failing]),
                "auc, mean of n": chance_above([mean[key] for key in passing], [mean[key] for key in failing]),
                "within-problem ranking, one analysis": ranking(groups, first),
                "within-problem ranking, mean of n": ranking(groups, mean)}

    passing = [row for row in scored if row["score"] == 1.0]
    failing = [row for row in scored if row["score"] == 0.0]
    return {
        "proofs": len(scored), "passing": len(passing), "failing": len(failing),
        "problems with both": sum(1 for group in problems if len({row["score"] for row in group} & {0.0, 1.0}) == 2),
        "mean score, passing": sum(mean[row["id"]] for row in passing) / len(passing) if passing else None,
        "mean score, failing": sum(mean[row["id"]] for row in failing) / len(failing) if failing else None,
        **measures(problems),
        "intervals": bootstrap_intervals(problems, measures),
    }


def measure(calibration: Path, world: Path, model: str, temperatures: list[float], samples: int, folder: Path,
            spread_only: bool = False) -> dict[str, Any]:
    """The :func:`signal` of ``model`` on the proofs of ``calibration`` at each temperature, its runs under ``folder``
    (each resumes; a finished one is read back). ``spread_only``: only problems with a passing and a failing proof
    (the groups GRPO learns from; AUC is then measured on them too)."""
    problems = {row["id"]: row["problem"] for split in ("train", "test_in", "test_out")
                if (world / f"{split}_problems.jsonl").exists() for row in read_jsonl(world / f"{split}_problems.jsonl")}
    rows = graded_proofs(calibration, problems)
    if spread_only:
        outcomes: dict[str, set[float]] = {}
        for row in rows:
            outcomes.setdefault(row["problem_id"], set()).add(row["score"])
        rows = [row for row in rows if len(outcomes[row["problem_id"]]) == 2]
    data = folder / "graded.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(data, [{key: row[key] for key in ("id", "problem", "proof", "score")} for row in rows])
    results: dict[str, Any] = {"calibration": str(calibration), "model": model, "samples": samples,
                               "spread only": spread_only, "temperatures": {}}
    for temperature in temperatures:
        run = folder / f"t{temperature:g}"
        if not (run / "metrics.json").exists():
            proofsmith("eval", "verifier", str(data), "--out", str(run), "--model", model, "--engine", "vllm",
                       "--samples", str(1 if temperature == 0 else samples), "--temperature", str(temperature),
                       "--max-tokens", SCORING_MAX_TOKENS, "--seed", "0", "--format", "jsonl",
                       "--set", "engine.max_model_len=1024")
        scores = {record["id"]: [analysis["score"] or 0.0 for analysis in record.get("analyses", [])]
                  for record in read_jsonl(run / "items.jsonl")}
        results["temperatures"][f"{temperature:g}"] = signal(rows, scores)
    return results


def record(out: Path, name: str, results: dict[str, Any]) -> None:
    """Add ``results`` under ``name`` to OUT/world_reward_signal.json (other entries kept) and print them."""
    path = out / "world_reward_signal.json"
    out.mkdir(parents=True, exist_ok=True)
    document = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    document = document if "measured" in document else {"measured": {}}  # a file of the first layout is replaced
    document["machine"] = MACHINE
    document["measured"][name] = results
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    for temperature, figures in results["temperatures"].items():
        print(f"{name}, temperature {temperature}: " + ", ".join(
            f"{key} {value:.3f}" + (f" [{figures['intervals'][key][0]:.3f}, {figures['intervals'][key][1]:.3f}]"
                                   if figures["intervals"].get(key) else "")
            if isinstance(value, float) else f"{key} {value}" for key, value in figures.items() if key != "intervals"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calibration", required=True, help="a world calibrate output folder with generations.jsonl")
    parser.add_argument("--world", default="runs/world-lm-long/world", help="the world the calibration measured")
    parser.add_argument("--model", default=START_MODEL, help="the verifier (default: the bundled world model)")
    parser.add_argument("--name", default="", help="the entry's name in the results (default: MODEL on CALIBRATION)")
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.7, 0.0])
    parser.add_argument("--samples", type=int, default=4, help="analyses per proof (n)")
    parser.add_argument("--spread-only", action="store_true", help="only problems with a passing and a failing proof")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    calibration = Path(args.calibration)
    folder = calibration / ("reward-signal" if args.model == START_MODEL else f"reward-signal-{Path(args.model).parent.name}")
    results = measure(calibration, Path(args.world), args.model, args.temperatures, args.samples,
                      folder.with_name(folder.name + ("-spread" if args.spread_only else "")), args.spread_only)
    record(Path(args.out), args.name or f"{args.model} on {calibration}", results)
    print(f"wrote {Path(args.out) / 'world_reward_signal.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

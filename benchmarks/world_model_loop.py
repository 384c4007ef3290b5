"""Two iterations of ``train loop`` on the world model, every stage's model against the checker. Issue 34 (e).

``configs/world_loop.toml`` runs the paper's schedule from the bundled world model, one model in
every role: iteration 1 verifier GRPO, then generator GRPO; iteration 2 samples proofs, auto-labels
them, fine-tunes on what the labels vouch for (rejection fine-tuning), then verifier GRPO with the
labelled proofs added, then generator GRPO. Steps, each read back when done (a rerun resumes):

1. what the config reads: the world and the meta-check (``rewards.meta_check``), made where
   ``world_verifier_rl.py`` makes them, and the calibration of the training split (``data.calibration``,
   ``RUNS/calibration-train``: 4 proofs of at most 4 problems per group, 4 analyses of each of their
   world proofs; world_verifier_rl.py's 8 and 8 take ~30 minutes on a CPU without native bf16);
2. per seed, ``proofsmith train loop --config CONFIG --run-dir RUNS/loop-sSEED`` with ``grpo.seed``
   and ``data.seed`` set to the seed;
3. the verifiers (the start, each iteration's verifier stage): ``world calibrate --split test_in --role
   verifier`` (2 analyses a proof at temperature 1, seed 0, the proofs of at most 4 problems per group),
   paired proof by proof: iteration 1 against the start, iteration 2 against iteration 1, iteration 2
   against the start; per analysis, balanced accuracy, κ, localisation and the invented-defect rate,
   beside always-0 and a random step;
4. the generators (the start, iteration 1's generator, iteration 2's rejection fine-tuned model and
   generator): ``world calibrate --split test_in --role generator`` (4 proofs of every test_in problem
   at temperature 1, seed 0), paired problem by problem the same way: true pass@1 on the edge groups
   the generator trains on, all seen templates and the held-out templates;
5. iteration 2's auto-labels against the checker's score of the same proofs: coverage, agreement,
   precision of label 1 (the paper's use of a label 1 is as a training target) with 95 % intervals.

Writes ``OUT/world_model_loop.json`` and ``OUT/world_model_loop.html`` (tables, the plot, the commands).

    python benchmarks/world_model_loop.py --out benchmarks/results --seeds 0
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from training.trainers.metrics import curve, read_metrics  # noqa: E402
from world_claims_report import number  # noqa: E402
from world_generator_arms import comparison, pass_rates  # noqa: E402
from world_loop import label_report, stage_seconds  # noqa: E402
from world_runs import MACHINE, START, START_MODEL, WORLD, draw_world, proofsmith  # noqa: E402
from world_runs import calibrate as calibrate_with  # noqa: E402
from world_verifier import figure_png  # noqa: E402
from world_verifier_rl import META_CHECK, compare  # noqa: E402

CONFIG = "configs/world_loop.toml"
SAMPLING = ("--engine", "vllm", "--temperature", "1", "--max-tokens", "640", "--seed", "0",
            "--set", "engine.max_model_len=1024", "--set", "calibrate.chunk_size=256")
TRAIN_CALIBRATION = ("--split", "train", "--max-problems-per-group", "4", "--samples", "4", *SAMPLING)
"""The config's data.calibration (RUNS/calibration-train): both roles on the training split."""
VERIFIER_EVAL = ("--split", "test_in", "--role", "verifier", "--max-problems-per-group", "4", "--samples", "2", *SAMPLING)
"""The world's proofs of 4 problems a group, 2 analyses each: ~5 minutes a model here."""
GENERATOR_EVAL = ("--split", "test_in", "--role", "generator", "--samples", "4", *SAMPLING)
"""4 proofs of each of the 285 problems: ~5 minutes a model here."""
VERIFIERS = ("iter1 verifier", "iter2 verifier")
GENERATORS = ("iter1 generator", "iter2 rft", "iter2 generator")
STAGE_DIRS = {"iter1 verifier": "iter1/verifier", "iter1 generator": "iter1/generator", "iter2 rft": "iter2/rft",
              "iter2 verifier": "iter2/verifier", "iter2 generator": "iter2/generator"}
VERIFIER_PAIRS = (("start", "iter1 verifier"), ("iter1 verifier", "iter2 verifier"), ("start", "iter2 verifier"))
GENERATOR_PAIRS = (("start", "iter1 generator"), ("iter1 generator", "iter2 rft"), ("iter1 generator", "iter2 generator"),
                   ("start", "iter2 generator"))
VERIFIER_METRICS = ("balanced_accuracy", "kappa", "localisation", "invented_defect_rate")
CURVES = {"verifier": ("reward", "reward/score_agreement", "reward/meta", "frac_reward_zero_std"),
          "generator": ("reward", "reward/proof_score", "truth/pass_rate", "truth/self_accuracy", "frac_reward_zero_std")}
"""What each GRPO stage's metrics.jsonl is plotted for (a metric the stage did not log is left out)."""


def prerequisites(runs: Path) -> dict[str, float | None]:
    """The world, its training calibration and the meta-check, made if missing (their wall seconds, None if read)."""
    seconds: dict[str, float | None] = {"world": draw_world()}
    seconds["calibration of the training split"] = calibrate_with(START_MODEL, runs / "calibration-train", *TRAIN_CALIBRATION)
    if not (START / "meta-check" / "metrics.json").exists():
        seconds["meta-check"] = proofsmith("eval", "meta-verifier", str(WORLD / "test_in_meta.jsonl"), "--out",
                                           str(START / "meta-check"), "--model", START_MODEL, *META_CHECK)
    return seconds


def edge_groups(calibration: Path) -> set[tuple[str, int]]:
    """(family, level) of the groups the training calibration put at the edge (pass@1 in 0.2–0.7): what the
    generator stages train on, and the group of test_in problems (d) is judged on."""
    edge = json.loads((calibration / "calibration.json").read_text(encoding="utf-8"))["edge_of_competence"]["groups"]
    return {(group["family"], group["level"]) for group in edge}


def label_truth(loop: Path) -> dict[str, Any] | None:
    """Iteration 2's auto-labels against the checker's score of each labelled proof (the problems are training ones),
    and whether the verifier's score separates them at all."""
    if not (loop / "iter2" / "label" / "COMPLETE").exists():
        return None
    trust, checked = label_report(loop / "iter2" / "labeled.jsonl", WORLD / "train_problems.jsonl")
    trust["signal"] = score_signal([record for record, _ in checked], [truth for _, truth in checked])
    return trust


def score_signal(records: list[dict[str, Any]], truths: list[float]) -> dict[str, Any]:
    """Does the verifier's score tell the sampled proofs that are true from the others at all? The chance that a
    true proof's mean analysis score beats a false one's (0.5: no signal, ties count half), and the precision of
    "the first n analyses all say 1" for each n up to the analyses a proof has (what more verification buys)."""
    def mean_score(record: dict[str, Any]) -> float | None:
        scores = [analysis["score"] for analysis in record["analyses"] if analysis["score"] is not None]
        return sum(scores) / len(scores) if scores else None

    true = [score for record, truth in zip(records, truths) if truth == 1.0 and (score := mean_score(record)) is not None]
    false = [score for record, truth in zip(records, truths) if truth < 1.0 and (score := mean_score(record)) is not None]
    pairs = [(a, b) for a in true for b in false]
    by_n = {}
    for n in range(1, max((len(record["analyses"]) for record in records), default=0) + 1):
        passed = [truth for record, truth in zip(records, truths)
                  if len(record["analyses"]) >= n and all(analysis["score"] == 1.0 for analysis in record["analyses"][:n])]
        by_n[n] = {"proofs": len(passed), "true": sum(truth == 1.0 for truth in passed)}
    return {"true_share": sum(truth == 1.0 for truth in truths) / len(truths) if truths else None,
            "mean_score_true": sum(true) / len(true) if true else None,
            "mean_score_false": sum(false) / len(false) if false else None,
            "true_above_false": sum((a > b) + 0.5 * (a == b) for a, b in pairs) / len(pairs) if pairs else None,
            "all_say_1_by_n": by_n}


def stage_curves(directory: Path, kind: str) -> dict[str, dict[int, float]]:
    records = read_metrics(directory / "metrics.jsonl") if (directory / "metrics.jsonl").exists() else []
    curves = {metric: dict(zip(*curve(records, metric))) for metric in CURVES[kind]}
    return {metric: points for metric, points in curves.items() if points}


def seed_iteration_1(source: Path, loop: Path) -> None:
    """Start a checker-labelled loop from a copy of the same seed's finished iteration 1 and its calibrations: iteration
    1 never labels, so it is the same run (same config but for loop.labeler, same seeds)."""
    if (loop / "iter1").exists() or not all((source / "iter1" / stage / "COMPLETE").exists() for stage in ("verifier", "generator")):
        return
    shutil.copytree(source / "iter1", loop / "iter1")
    for calibration in (source / "calibration").glob("iter1-*"):
        shutil.copytree(calibration, loop / "calibration" / calibration.name)


def run_seed(seed: int, runs: Path, labeler: str = "verifier") -> dict[str, Any]:
    """Train (or resume) one seed's loop and measure every stage it finished."""
    loop = runs / (f"loop-s{seed}" if labeler == "verifier" else f"loop-{labeler}-s{seed}")
    command = ["train", "loop", "--config", CONFIG, "--run-dir", str(loop), "--set", f"grpo.seed={seed}",
               "--set", f"data.seed={seed}", "--set", f"loop.labeler={labeler}"]
    if labeler != "verifier":
        seed_iteration_1(runs / f"loop-s{seed}", loop)
    seconds: dict[str, float | None] = {"loop": None if (loop / "COMPLETE").exists() else proofsmith(*command, "--json")}
    verifier_calibrations = {"start": runs / "start-verifier"}
    generator_calibrations = {"start": runs / "start-generator"}
    seconds["start verifier calibration"] = calibrate_with(START_MODEL, runs / "start-verifier", *VERIFIER_EVAL)
    seconds["start generator calibration"] = calibrate_with(START_MODEL, runs / "start-generator", *GENERATOR_EVAL)
    for name, relative in STAGE_DIRS.items():
        model = loop / relative / "final"
        if not model.is_dir():
            continue  # not trained (an rft stage with nothing to fine-tune on carries the model over)
        out = loop / "calibration" / name.replace(" ", "-")
        if name in VERIFIERS:
            seconds[f"{name} calibration"] = calibrate_with(model, out, *VERIFIER_EVAL)
            verifier_calibrations[name] = out
        else:
            seconds[f"{name} calibration"] = calibrate_with(model, out, *GENERATOR_EVAL)
            generator_calibrations[name] = out
    verifier_pairs, generator_pairs = list(VERIFIER_PAIRS), list(GENERATOR_PAIRS)
    if labeler != "verifier":  # the same stages of the paper's arm, paired with this one's: what the labels changed
        paper = runs / f"loop-s{seed}" / "calibration"
        for name in ("iter2 verifier", "iter2 generator"):
            calibrations = verifier_calibrations if name in VERIFIERS else generator_calibrations
            if (paper / name.replace(" ", "-") / "calibration.json").exists() and name in calibrations:
                calibrations[f"{name} (verifier labels)"] = paper / name.replace(" ", "-")
                (verifier_pairs if name in VERIFIERS else generator_pairs).append((f"{name} (verifier labels)", name))
    edge = edge_groups(runs / "calibration-train")
    rates = {name: pass_rates(path) for name, path in generator_calibrations.items()}
    return {
        "command": "proofsmith " + " ".join(command),
        "stage_s": stage_seconds(loop),
        "verifier": {f"{before} -> {after}": compare(verifier_calibrations[before], verifier_calibrations[after])
                     for before, after in verifier_pairs if before in verifier_calibrations and after in verifier_calibrations},
        "generator": {f"{before} -> {after}": comparison(rates[before], rates[after], edge)
                      for before, after in generator_pairs if before in rates and after in rates},
        "labels": label_truth(loop),
        "curves": {name: stage_curves(loop / relative, "verifier" if name in VERIFIERS else "generator")
                   for name, relative in STAGE_DIRS.items() if name not in ("iter2 rft",) and (loop / relative).is_dir()},
        "seconds": seconds,
    }


def across_seeds(seeds: Mapping[Any, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each headline figure per seed, with the mean and range over the seeds that measured it."""
    figures: dict[str, dict[str, float]] = {}
    for seed, entry in seeds.items():
        if entry.get("labels"):
            figures.setdefault("precision of label 1", {})[str(seed)] = entry["labels"]["metrics"]["precision_of_1"]
            figures.setdefault("label AUC (true above false)", {})[str(seed)] = entry["labels"]["signal"]["true_above_false"]
        for pair, paired in entry["verifier"].items():
            if "test_in" in paired:
                for name in ("balanced_accuracy", "localisation"):
                    figures.setdefault(f"verifier {pair}: {name} gain", {})[str(seed)] = \
                        paired["test_in"]["metrics"][f"{name} gain"]["value"]
        for pair, paired in entry["generator"].items():
            if paired["edge groups (seen)"]["problems"]:
                figures.setdefault(f"generator {pair}: edge-group pass@1 gain", {})[str(seed)] = paired["edge groups (seen)"]["gain"]
    figures = {name: {seed: value for seed, value in values.items() if value is not None} for name, values in figures.items()}
    return {name: {"seeds": values, "mean": sum(values.values()) / len(values), "min": min(values.values()),
                   "max": max(values.values())} for name, values in figures.items() if values}


def across_table(summary: Mapping[str, Any]) -> str:
    if not summary or max(len(entry["seeds"]) for entry in summary.values()) < 2:
        return ""
    def shown(name: str, value: float) -> str:
        return f"{value:+.3f}" if "gain" in name else f"{value:.3f}"

    rows = "".join(f"<tr><th>{html.escape(name)}</th><td>"
                   f"{html.escape(', '.join(f'{seed}: {shown(name, value)}' for seed, value in entry['seeds'].items()))}</td>"
                   f"<td>{shown(name, entry['mean'])}</td><td>{shown(name, entry['min'])} … {shown(name, entry['max'])}</td></tr>"
                   for name, entry in summary.items())
    return ("<h2>Across seeds</h2><table><tr><th>figure</th><th>per seed</th><th>mean</th><th>range</th></tr>"
            + rows + "</table>")


def interval_cell(value: float | None, interval: Any, signed: bool = False) -> str:
    return "–" if value is None else number(value, interval, signed)


def verifier_table(comparisons: Mapping[str, Any], group: str) -> str:
    rows = []
    for pair, figures in comparisons.items():
        if group not in figures:
            continue
        metrics = figures[group]["metrics"]
        cells = "".join(
            f"<td>{interval_cell(metrics[f'{name} before']['value'], metrics[f'{name} before']['interval'])} → "
            f"{interval_cell(metrics[f'{name} after']['value'], metrics[f'{name} after']['interval'])}; "
            f"gain {interval_cell(metrics[f'{name} gain']['value'], metrics[f'{name} gain']['interval'], signed=True)}</td>"
            for name in VERIFIER_METRICS)
        rows.append(f"<tr><th>{html.escape(pair)}</th><td>{figures[group]['proofs']}</td>{cells}</tr>")
    if not rows:
        return ""
    baselines = next(iter(comparisons.values()))[group]["baselines"]
    return (f"<h3>Verifier, {html.escape(group)} (per analysis, paired proof by proof)</h3><table><tr><th>models</th><th>proofs</th>"
            + "".join(f"<th>{name.replace('_', ' ')}</th>" for name in VERIFIER_METRICS) + "</tr>" + "".join(rows)
            + f"</table><p>Baselines: {html.escape(json.dumps(baselines))}</p>")


def generator_table(comparisons: Mapping[str, Any]) -> str:
    groups = ("edge groups (seen)", "seen templates", "held-out templates")
    rows = []
    for pair, figures in comparisons.items():
        cells = "".join(
            f"<td>{figures[group]['before']:.3f} → {figures[group]['after']:.3f}; gain "
            f"{interval_cell(figures[group]['gain'], figures[group]['intervals']['gain'], signed=True)} "
            f"({figures[group]['problems']})</td>" if figures[group]["problems"] else "<td>–</td>"
            for group in groups)
        rows.append(f"<tr><th>{html.escape(pair)}</th>{cells}</tr>")
    return ("<h3>Generator: true pass@1 on test_in problems (8 proofs each, paired problem by problem; problems in "
            "brackets)</h3><table><tr><th>models</th>" + "".join(f"<th>{group}</th>" for group in groups) + "</tr>"
            + "".join(rows) + "</table>")


def label_table(labels: Mapping[str, Any] | None) -> str:
    if not labels:
        return ""
    rows = "".join(f"<tr><th>{metric.replace('_', ' ')}</th><td>{interval_cell(labels['metrics'][metric], labels['intervals'].get(metric))}"
                   "</td></tr>" for metric in ("coverage", "agreement", "precision_of_1", "flawed_labelled_1"))
    return ("<h3>Iteration 2's auto-labels against the checker</h3><table>" + rows
            + f"<tr><th>proofs, labelled, labelled 1</th><td>{labels['proofs']}, {labels['labelled']}, {labels['labelled_1']}</td></tr>"
            + f"<tr><th>proofs by true score</th><td>{html.escape(json.dumps(labels['true_score_counts']))}</td></tr>"
            + f"<tr><th>rules that decided</th><td>{html.escape(json.dumps(labels['rules']))}</td></tr>"
            + f"<tr><th>does the score separate true from false proofs?</th><td>{html.escape(json.dumps(labels['signal']))}</td></tr>"
            + "</table>")


def chart(seed_results: Mapping[str, Any]) -> str:
    """Every GRPO stage's training curves, one panel a stage."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = seed_results["curves"]
    figure, axes = plt.subplots(1, max(1, len(stages)), figsize=(4 * max(1, len(stages)), 3.2), squeeze=False)
    for axis, (name, curves) in zip(axes[0], stages.items()):
        for metric, points in curves.items():
            axis.plot([int(step) for step in points], list(points.values()), label=metric, linewidth=1)
        axis.set_title(name, fontsize=9)
        axis.set_xlabel("step", fontsize=8)
        axis.set_ylim(-0.05, 1.05)
        axis.grid(alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=6)
    return figure_png(figure)


def write_report(results: Mapping[str, Any], path: Path) -> None:
    sections = []
    for seed, entry in results["seeds"].items():
        sections.append(
            f"<h2>Seed {seed}</h2><p><code>{html.escape(entry['command'])}</code></p>"
            f"<p>Training wall time by stage (s): {html.escape(json.dumps(entry['stage_s']))}</p>"
            + "".join(verifier_table(entry["verifier"], group) for group in ("test_in", "test_out"))
            + generator_table(entry["generator"]) + label_table(entry["labels"])
            + (f"<h3>Training curves</h3><img alt='curves' src='{chart(entry)}'>" if entry["curves"] else ""))
    path.write_text(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>World model loop</title>"
        "<style>body{font-family:sans-serif;max-width:100em;margin:2em auto}td,th{border:1px solid #ccc;"
        "padding:.2em .5em;text-align:right}table{border-collapse:collapse;margin:1em 0}</style></head><body>"
        f"<h1>Two iterations of train loop on the world model ({html.escape(results.get('labeler', 'verifier'))} labels), "
        "every stage against the checker</h1>"
        f"<p>{html.escape(results['machine'])}. Config: <code>{html.escape(results['config'])}</code>; start "
        f"<code>{html.escape(results['start'])}</code>. Prerequisites (s): {html.escape(json.dumps(results['prerequisites']))}</p>"
        + across_table(results.get("across_seeds", {})) + "".join(sections) + "</body></html>", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results", help="where world_model_loop.json and .html go")
    parser.add_argument("--runs", default="runs/world-model-loop", help="where the loops and their calibrations go")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="loop seeds (grpo.seed and data.seed)")
    parser.add_argument("--labeler", default="verifier", choices=("verifier", "checker"),
                        help="loop.labeler: the paper's auto-labels, or the checker's (the upper bound: runs loop-checker-sN, "
                             "iteration 1 copied from loop-sN when it is there; results world_model_loop_checker.*)")
    args = parser.parse_args()
    out, runs = Path(args.out), Path(args.runs)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"machine": MACHINE, "config": CONFIG, "start": START_MODEL, "labeler": args.labeler,
                               "prerequisites": prerequisites(runs),
                               "evaluation": {"verifier": " ".join(VERIFIER_EVAL), "generator": " ".join(GENERATOR_EVAL)},
                               "seeds": {}}
    stem = "world_model_loop" + ("" if args.labeler == "verifier" else f"_{args.labeler}")
    earlier = out / f"{stem}.json"
    if earlier.exists():  # seeds measured before and not rerun now stay (a later seed is added, not swapped in)
        kept = json.loads(earlier.read_text(encoding="utf-8")).get("seeds", {})
        results["seeds"] = {int(seed): entry for seed, entry in kept.items() if int(seed) not in args.seeds}
    for seed in args.seeds:
        results["seeds"][seed] = run_seed(seed, runs, args.labeler)
        results["seeds"] = dict(sorted(results["seeds"].items()))
        results["across_seeds"] = across_seeds(results["seeds"])
        path = out / f"{stem}.json"
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        write_report(results, out / f"{stem}.html")
    for seed, entry in results["seeds"].items():
        for pair, figures in entry["verifier"].items():
            for group in ("test_in", "test_out"):
                if group in figures:
                    metrics = figures[group]["metrics"]
                    print(f"seed {seed} verifier {pair:32} {group:8} " + "; ".join(
                        f"{name} {metrics[f'{name} before']['value']:.3f} -> {metrics[f'{name} after']['value']:.3f}"
                        for name in ("balanced_accuracy", "localisation")))
        for pair, figures in entry["generator"].items():
            edge = figures["edge groups (seen)"]
            if edge["problems"]:
                print(f"seed {seed} generator {pair:32} edge groups pass@1 {edge['before']:.3f} -> {edge['after']:.3f} "
                      f"({edge['gain']:+.3f} [{edge['intervals']['gain'][0]:+.3f}, {edge['intervals']['gain'][1]:+.3f}])")
        if entry["labels"]:
            print(f"seed {seed} labels: {json.dumps(entry['labels']['metrics'])}")
    print(f"wrote {out / stem}.json and {out / stem}.html")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

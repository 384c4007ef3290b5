"""One HTML page for every claim of the paper measured on the world model, read from the benchmarks' results.

Each section reads the JSON that one benchmark script wrote (``benchmarks/world_claims.py`` lists which) and
states the claim's goal (issue 34), whether the figures meet it (``met``, ``not met`` or ``not measured`` when
the file or the entry is missing) and the figures it was judged on, beside the majority-class and random-step
baselines, with the 95 % bootstrap intervals the scripts computed. The page judges; it never recomputes a metric.
It loads nothing (plots are PNG ``data:`` URIs) and every string from the results is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from eval.plots import pyplot

MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"


@dataclass(frozen=True)
class Section:
    """One claim: its goal, the verdict on it, and the tables and plots it was judged on (HTML)."""

    title: str
    goal: str
    verdict: str
    body: str

    def __post_init__(self) -> None:
        if self.verdict not in (MET, NOT_MET, NOT_MEASURED):
            raise ValueError(f"verdict must be {MET!r}, {NOT_MET!r} or {NOT_MEASURED!r}, not {self.verdict!r}")


def read(results: Path, name: str) -> dict[str, Any] | None:
    path = results / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def number(value: float | None, interval: Sequence[float] | None = None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    text = f"{value:+.3f}" if signed else f"{value:.3f}"
    if interval:
        text += f" [{interval[0]:+.3f}, {interval[1]:+.3f}]" if signed else f" [{interval[0]:.3f}, {interval[1]:.3f}]"
    return text


def excludes_zero_above(interval: Sequence[float] | None) -> bool:
    return bool(interval) and interval[0] > 0


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{html.escape(str(header))}</th>" for header in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def paragraph(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


def image(uri: str, caption: str) -> str:
    # alt before src: docs/hooks/result_plots.py takes the plot out for the results pages by that shape
    return f"<figure><img alt='{html.escape(caption)}' src='{uri}'><figcaption>{html.escape(caption)}</figcaption></figure>"


def png_uri(figure: Any) -> str:
    from world_verifier import figure_png

    return figure_png(figure)


def moving_average(curve: Mapping[str, float], window: int = 10) -> tuple[list[int], list[float]]:
    steps = sorted(int(step) for step in curve)
    values = [float(curve[str(step)] if str(step) in curve else curve[step]) for step in steps]
    smoothed = [mean(values[max(0, index - window + 1): index + 1]) for index in range(len(values))]
    return steps, smoothed


def gain(metrics: Mapping[str, Any], name: str) -> tuple[float | None, list[float] | None]:
    entry = metrics.get(f"{name} gain") or {}
    return entry.get("value"), entry.get("interval")


VERIFIER_METRICS = ("balanced_accuracy", "kappa", "localisation", "invented_defect_rate")


def verifier_rows(label: str, comparison: Mapping[str, Any], groups: Sequence[str]) -> list[list[object]]:
    rows = []
    for group in groups:
        if group not in comparison:
            continue
        metrics = comparison[group]["metrics"]
        rows.append([label, group, comparison[group]["proofs"]] + [
            f"{number(metrics[f'{name} before']['value'])} → {number(metrics[f'{name} after']['value'])} "
            f"({number(*gain(metrics, name), signed=True)})" for name in VERIFIER_METRICS])
    return rows


def verifier_learns(results: Path) -> Section:
    goal = ("(a) Verifier GRPO, R = R_format · R_score · R_meta, three seeds: the gain in balanced accuracy and in "
            "localisation has an interval above 0 on test_in, and the trained verifier beats always-0 and a random step there.")
    data = read(results, "world_verifier_rl.json")
    seeds = (data or {}).get("arms", {}).get("reference", {})
    seeds = {seed: entry for seed, entry in seeds.items() if "comparison" in entry}
    if not seeds:
        return Section("(a) The verifier learns to verify", goal, NOT_MEASURED, paragraph("world_verifier_rl.json has no reference arm."))
    met = True
    rows: list[list[object]] = []
    for seed, entry in sorted(seeds.items()):
        test_in = entry["comparison"]["test_in"]
        metrics, baselines = test_in["metrics"], test_in["baselines"]
        met &= excludes_zero_above(gain(metrics, "balanced_accuracy")[1]) and excludes_zero_above(gain(metrics, "localisation")[1])
        met &= metrics["balanced_accuracy after"]["value"] > baselines["majority class (always 0)"]["balanced_accuracy"]
        met &= metrics["localisation after"]["value"] > baselines["random step"]["localisation"]
        rows += verifier_rows(f"seed {seed}", entry["comparison"], ("test_in", "test_out"))
    baselines = next(iter(seeds.values()))["comparison"]["test_in"]["baselines"]
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(6.5, 3.2))
    for offset, name in enumerate(("balanced_accuracy", "localisation", "invented_defect_rate")):
        for index, (seed, entry) in enumerate(sorted(seeds.items())):
            value, interval = gain(entry["comparison"]["test_in"]["metrics"], name)
            if value is None:
                continue
            low, high = interval or (value, value)
            axis.errorbar(offset + 0.12 * (index - 1), value, yerr=[[value - low], [high - value]], fmt="o", color=f"C{index}",
                          label=f"seed {seed}" if offset == 0 else None)
    axis.axhline(0, color="#888", linewidth=0.8)
    axis.set_xticks(range(3), ["balanced accuracy", "localisation", "invented defects"])
    axis.set_ylabel("gain on test_in (95 % CI)")
    axis.legend(fontsize=8)
    body = (table(["run", "split", "proofs", *VERIFIER_METRICS], rows)
            + paragraph(f"Baselines on test_in: always 0 has balanced accuracy "
                        f"{baselines['majority class (always 0)']['balanced_accuracy']:.3f}; a random step localises "
                        f"{baselines['random step']['localisation']:.3f}.")
            + image(png_uri(figure), "Gain of each seed, trained minus start, test_in"))
    return Section("(a) The verifier learns to verify", goal, MET if met else NOT_MET, body)


def meta_earns_its_place(results: Path) -> Section:
    goal = ("(b) With R_meta against without (same data, steps, seeds): fewer invented defects and more flaws localised, "
            "each interval excluding 0; R_meta comes from a meta-verifier that rates true critiques above invented ones "
            "at the same boxed score.")
    data = read(results, "world_verifier_rl.json")
    if not data or not data.get("reference_vs_none"):
        return Section("(b) Meta-verification earns its place", goal, NOT_MEASURED, paragraph("No paired run without R_meta."))
    defect_split = data["meta_check"]["defect_split"]
    check_rows = [[boxed, entry["true"], entry["invented"], number(entry["gap"], entry["interval"], signed=True), entry["decided"]]
                  for boxed, entry in defect_split["by_boxed_score"].items()]
    met, rows = bool(defect_split["rates_by_defect"]), []
    for seed, groups in sorted(data["reference_vs_none"].items()):
        metrics = groups["test_in"]["metrics"]
        invented, localisation = gain(metrics, "invented_defect_rate"), gain(metrics, "localisation")
        met &= bool(invented[1]) and invented[1][1] < 0 and excludes_zero_above(localisation[1])
        rows += verifier_rows(f"seed {seed}: none → reference", groups, ("test_in", "test_out"))
    body = (paragraph("The meta-check: the start's mean rating of true minus invented critiques, by boxed score.")
            + table(["boxed score", "true critiques", "invented", "gap", "decided"], check_rows)
            + table(["pair", "split", "proofs", *VERIFIER_METRICS], rows))
    return Section("(b) Meta-verification earns its place", goal, MET if met else NOT_MET, body)


def more_verification(results: Path) -> Section:
    goal = "(c) n = 1…16 analyses of the trained verifier: flawed proofs localised by at least one, above the random-step curve."
    data = read(results, "world_verifier_rl.json")
    scaling = (data or {}).get("scaling", {})
    trained = [name for name in scaling if name != "start"]
    if not trained:
        return Section("(c) More verification finds more flaws", goal, NOT_MEASURED, paragraph("No trained verifier was scaled."))
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 3.2))
    rows, met = [], True
    for index, name in enumerate(scaling):
        by_n = scaling[name]["truth_by_n"]
        ns = sorted(by_n, key=int)
        axis.plot([int(n) for n in ns], [by_n[n]["localised_by_any"] for n in ns], "o-", color=f"C{index}", label=name)
        for n in ns:
            rows.append([name, n, number(by_n[n]["localised_by_any"]), number(by_n[n]["random_step"]["localised_by_any"])])
            if name in trained:
                met &= by_n[n]["localised_by_any"] > by_n[n]["random_step"]["localised_by_any"]
    by_n = scaling[trained[0]]["truth_by_n"]
    ns = sorted(by_n, key=int)
    axis.plot([int(n) for n in ns], [by_n[n]["random_step"]["localised_by_any"] for n in ns], "k--", label="n random steps")
    axis.set_xscale("log", base=2)
    axis.set_xlabel("analyses a proof (n)")
    axis.set_ylabel("flawed proofs localised by any")
    axis.legend(fontsize=8)
    body = table(["verifier", "n", "localised by any", "random steps"], rows) + image(png_uri(figure), "Localised by any of n, test_in")
    return Section("(c) More verification finds more flaws", goal, MET if met else NOT_MET, body)


GENERATOR_ARMS_FILE = "world_generator_arms_group_lr1e-5.json"


def generator_improves(results: Path) -> Section:
    goal = ("(d) Generator GRPO with the learned verifier's reward (α 0.76 / β 0.24): the gain in true pass@1 on fresh problems "
            "of the edge groups has an interval above 0 and is at least half the checker arm's (three seeds).")
    data = read(results, GENERATOR_ARMS_FILE)
    if not data or not data.get("arms"):
        return Section("(d) The generator truly improves", goal, NOT_MEASURED, paragraph(f"{GENERATOR_ARMS_FILE} is missing."))
    rows, gains = [], {}
    for name, entry in sorted(data["arms"].items()):
        edge = entry["test_in pass@1"]["edge groups (seen)"]
        arm = name.split("-")[0]
        gains.setdefault(arm, []).append((edge["gain"], edge["intervals"].get("gain")))
        rows.append([name, edge["problems"], number(edge["before"]), number(edge["after"]),
                     number(edge["gain"], edge["intervals"].get("gain"), signed=True)])
    summary = [[arm, len(values), number(mean(value for value, _ in values), signed=True),
                sum(excludes_zero_above(interval) for _, interval in values)] for arm, values in sorted(gains.items())]
    reference, checker = gains.get("reference", []), gains.get("checker", [])
    met = bool(reference and checker) and all(excludes_zero_above(interval) for _, interval in reference) and (
        mean(value for value, _ in reference) >= 0.5 * mean(value for value, _ in checker))
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(6.5, 3.2))
    for index, arm in enumerate(("reference", "checker")):
        entry = next((entry for name, entry in sorted(data["arms"].items()) if name.startswith(arm)), None)
        curves = (entry or {}).get("curves", {})
        for metric, style in (("reward/proof_score", "-"), ("truth/pass_rate", "--")):
            if metric in curves:
                steps, values = moving_average(curves[metric])
                axis.plot(steps, values, style, color=f"C{index}", label=f"{arm}: {metric}")
    axis.set_xlabel("GRPO step (moving average of 10)")
    axis.set_ylabel("rollouts")
    axis.legend(fontsize=7)
    body = (table(["arm", "fresh problems", "before", "after", "gain"], rows)
            + table(["reward", "seeds", "mean gain", "seeds whose interval is above 0"], summary)
            + image(png_uri(figure), "The hacking picture (first seed): the verifier score of rollouts and their true pass rate"))
    return Section("(d) The generator truly improves", goal, MET if met else NOT_MET, body)


def loop_rows(data: Mapping[str, Any], arm: str) -> tuple[list[list[object]], bool, bool]:
    """Rows of one loop arm; whether label precision reached 0.9 and whether iteration 2 was never worse than 1."""
    rows, precise, not_worse = [], True, True
    for seed, entry in sorted(data.get("seeds", {}).items()):
        labels = entry.get("labels") or {}
        if labels:
            metrics, intervals = labels["metrics"], labels["intervals"]
            precise &= metrics["precision_of_1"] >= 0.9
            rows.append([arm, seed, "labels", "precision of label 1 / coverage",
                         f"{number(metrics['precision_of_1'], intervals['precision_of_1'])} / "
                         f"{number(metrics['coverage'], intervals['coverage'])}"])
        verifier = entry["verifier"].get("iter1 verifier -> iter2 verifier", {}).get("test_in")
        if verifier:
            for name in ("balanced_accuracy", "localisation"):
                value, interval = gain(verifier["metrics"], name)
                not_worse &= not (interval and interval[1] < 0)
                rows.append([arm, seed, "verifier iter1 → iter2", name, number(value, interval, signed=True)])
        generator = entry["generator"].get("iter1 generator -> iter2 generator", {}).get("edge groups (seen)")
        if generator:
            interval = generator["intervals"].get("gain")
            not_worse &= not (interval and interval[1] < 0)
            rows.append([arm, seed, "generator iter1 → iter2", "true pass@1, edge groups",
                         number(generator["gain"], interval, signed=True)])
        # not judged (the goal compares the iterations), shown because a gain of iteration 2 can only undo iteration 1's loss
        overall = entry["generator"].get("start -> iter2 generator", {}).get("edge groups (seen)")
        if overall:
            rows.append([arm, seed, "generator start → iter2", "true pass@1, edge groups",
                         number(overall["gain"], overall["intervals"].get("gain"), signed=True)])
    return rows, precise, not_worse


def loop_and_labels(results: Path) -> Section:
    goal = ("(e) Two iterations of train loop: auto-label 1 has precision ≥ 0.9 against the checker, and iteration 2 is at "
            "least as good as iteration 1 (no gain interval below 0) on the verifier's and the generator's truth metrics.")
    paper, checker = read(results, "world_model_loop.json"), read(results, "world_model_loop_checker.json")
    if not paper or not paper.get("seeds"):
        return Section("(e) The loop and its labels", goal, NOT_MEASURED, paragraph("world_model_loop.json is missing."))
    rows, precise, not_worse = loop_rows(paper, "verifier labels")
    if checker:
        rows += loop_rows(checker, "checker labels (upper bound)")[0]
    body = table(["arm", "seed", "what", "metric", "value"], rows) + paragraph(
        "The checker-labelled arm is the upper bound of auto-labeling; the verdict is on the paper's arm.")
    return Section("(e) The loop and its labels", goal, MET if precise and not_worse else NOT_MET, body)


def test_time(results: Path) -> Section:
    goal = ("(f) More test-time compute: the verifier's pick of the pool beats a random proof of it (interval above 0), "
            "and refinement rounds raise the true pass rate.")
    data = read(results, "world_model_test_time.json")
    runs = (data or {}).get("runs", {})
    search = runs.get("search_selection")
    if not search:
        return Section("(f) Test-time compute", goal, NOT_MEASURED, paragraph("world_model_test_time.json has no search run."))
    intervals = search["intervals"]
    rows = [[name, number(entry["value"], entry["interval"], signed="minus" in name)] for name, entry in intervals.items()]
    met = excludes_zero_above(intervals["pick minus random pool proof"]["interval"])
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 3.2))
    for index, name in enumerate(("refine_verifier", "refine_self")):
        by_round = runs.get(name, {}).get("true_pass_rate_by_round")
        if by_round:
            rounds = sorted(by_round, key=int)
            axis.plot([int(r) for r in rounds], [by_round[r] for r in rounds], "o-", color=f"C{index}", label=name)
            last = runs[name]["intervals"]["last round minus round 1"]
            met &= excludes_zero_above(last["interval"])
            rows.append([f"{name}: last round minus round 1", number(last["value"], last["interval"], signed=True)])
    axis.axhline(search["true_pass_rate"], color="C2", linestyle="--", label="search pick")
    axis.axhline(search["true_pool_pass_rate"], color="#888", linestyle=":", label="random pool proof")
    axis.set_xlabel("refinement round")
    axis.set_ylabel("true pass rate")
    axis.legend(fontsize=8)
    body = table(["figure", "value"], rows) + image(png_uri(figure), "True pass rate by refinement round, beside search")
    return Section("(f) Test-time compute", goal, MET if met else NOT_MET, body)


def learns_beyond_frozen(gains: Sequence[tuple[bool, float]]) -> bool:
    """(learning?, gain) per run: every learning run gains more than 0 and more than every run at learning rate ~0."""
    learning = [gain for learns, gain in gains if learns]
    frozen = [gain for learns, gain in gains if not learns]
    return bool(learning) and min(learning) > max([0.0, *frozen])


def learning_tests(results: Path) -> Section:
    goal = ("A learning test in CI: a few dozen GRPO steps raise the generator's true pass rate and the verifier's held-out "
            "balanced accuracy by a margin over 5 seeds, and nothing at learning rate ~0.")
    generator, verifier = read(results, "tiny_generator_learning.json"), read(results, "tiny_verifier_learning.json")
    if not generator or not verifier:
        return Section("A learning test in CI", goal, NOT_MEASURED, paragraph("The tiny learning results are missing."))
    rows = [["generator: true pass rate", run["learning_rate"], run["seed"], number(run["gain"], signed=True)]
            for run in generator["runs"]]
    rows += [["verifier: held-out balanced accuracy", run["learning_rate"], run["seed"],
              number(run["after"]["test_in"]["balanced_accuracy"] - verifier["before"]["test_in"]["balanced_accuracy"], signed=True)]
             for run in verifier["runs"] if "test_in" in run["after"]]
    few = read(results, "tiny_verifier_learning_few.json")
    rows += [["verifier: balanced accuracy on its 8 training proofs (the CI test)", run["learning_rate"], run["seed"],
              number(run["gain"]["trained_on"], signed=True)] for run in (few or {}).get("runs", [])]
    before = verifier["before"]["test_in"]["balanced_accuracy"]
    held_out = [(run["learning_rate"] > 1e-20, run["after"]["test_in"]["balanced_accuracy"] - before)
                for run in verifier["runs"] if "test_in" in run["after"]]
    passes = [(run["learning_rate"] > 1e-20, run["gain"]) for run in generator["runs"]]
    met = all(learns_beyond_frozen(gains) for gains in (held_out, passes))
    return Section("A learning test in CI", goal, MET if met else NOT_MET, table(["what", "learning rate", "seed", "gain"], rows))


SECTIONS: tuple[Callable[[Path], Section], ...] = (verifier_learns, meta_earns_its_place, more_verification, generator_improves,
                                                   loop_and_labels, test_time, learning_tests)

STYLE = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:.5em 0 1em}"
         "td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left}th{background:#eee}.met{color:#070}.not-met{color:#a00}"
         ".not-measured{color:#888}figure{display:inline-block;margin:0 1em 1em 0}figcaption{font-size:.85em;color:#555}")


def page(results: Path, steps_table: str, machine: str) -> str:
    sections = []
    for build in SECTIONS:
        try:
            sections.append(build(results))
        except (KeyError, TypeError, ValueError, IndexError) as error:  # a results file of another shape: say so, go on
            sections.append(Section(build.__name__.replace("_", " "), "", NOT_MEASURED,
                                    paragraph(f"its results could not be read: {type(error).__name__}: {error}")))
    summary = table(["claim", "verdict"], [[section.title, section.verdict] for section in sections])
    parts = "".join(
        f"<h2>{html.escape(section.title)} — <span class='{section.verdict.replace(' ', '-')}'>{section.verdict}</span></h2>"
        f"<p><b>Goal.</b> {html.escape(section.goal)}</p>{section.body}" for section in sections)
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>The paper's claims on the world model</title>"
            f"<style>{STYLE}</style></head><body><h1>The paper's claims on the world model, against the checker</h1>"
            f"<p>{html.escape(machine)}. Results read from <code>{html.escape(str(results))}</code>.</p>"
            f"{summary}<h2>How to reproduce</h2>{steps_table}{parts}</body></html>")

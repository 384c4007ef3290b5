"""Where a model stands on the world, per family and level: its generator's pass rates and its verifier's recalls.

Input: the records ``eval.calibration_run`` writes, one per problem (``generations``) and one
per proof (``verifications``), each with its ``split``, ``family``, ``level``, ``template`` and
``templates`` (``seen``: a template the training split draws from; ``held-out``: one it never
does). Groups are (split, family, level, templates), so a test split's fresh problems of seen
templates are never averaged with its unseen templates; each split also gets an ``all`` row,
and one per kind of template when it has both. Every metric is measured against the checker,
never against a model:

- generator, per problem of k samples: ``passes`` (the checker scores the written proof 1).
  ``pass@1`` = the mean pass rate of the samples; ``pass@k`` = the share of problems with at
  least one passing sample (k = the samples drawn); ``format_failure_rate`` = samples whose
  proof or self-evaluation does not parse.
- verifier, per proof with its true score and first bad step: the first analysis of each
  proof is its one-sample verdict (``eval.truth``'s metrics at n = 1: balanced accuracy, κ,
  localisation, invented-defect rate), and ``recall`` per true score counts every analysis
  (the share of analyses of proofs of that score that give it). Beside them the majority-class
  and random-step baselines of the same proofs.

Every figure has a 95 % interval from a bootstrap over problems (generator) or proofs
(verifier). A group with fewer than ``MIN_GROUP`` items is reported with its count but no
interval. :func:`edge_groups` picks the groups at the edge of competence: generator pass@1
strictly between the given bounds (groups with no spread teach GRPO nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from eval.intervals import bootstrap_intervals
from eval.truth import SCALE, Truth, truth_report

GroupKey = tuple[str, str, int, str]
"""(split, family, level, templates)."""
ALL = "all"


def group_key(record: Mapping[str, Any]) -> GroupKey:
    return str(record["split"]), str(record["family"]), int(record["level"]), str(record.get("templates", ""))


def groups(records: Iterable[Mapping[str, Any]]) -> dict[GroupKey, list[Mapping[str, Any]]]:
    """Records by (split, family, level, templates); by (split, 'all', 0, '') for each split's whole, and by
    (split, 'all', 0, templates) for each kind of template of a split that has both."""
    records = list(records)
    found: dict[GroupKey, list[Mapping[str, Any]]] = {}
    kinds: dict[str, set[str]] = {}
    for record in records:
        key = group_key(record)
        found.setdefault(key, []).append(record)
        found.setdefault((key[0], ALL, 0, ""), []).append(record)
        kinds.setdefault(key[0], set()).add(key[3])
    for record in records:
        split, _, _, templates = group_key(record)
        if len(kinds[split]) > 1:
            found.setdefault((split, ALL, 0, templates), []).append(record)
    return dict(sorted(found.items()))


def generator_values(records: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    failures = [ok for record in records for ok in record["formats_ok"]]
    rates = [sum(record["passes"]) / len(record["passes"]) for record in records if record["passes"]]
    return {
        "pass@1": sum(rates) / len(rates) if rates else None,
        "pass@k": sum(any(record["passes"]) for record in records) / len(records) if records else None,
        "format_failure_rate": 1 - sum(failures) / len(failures) if failures else None,
    }


def recall_values(records: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Per true score, the share of its proofs' analyses that give that score; their mean (per-sample balanced accuracy)."""
    values: dict[str, float | None] = {}
    present = []
    for score in SCALE:
        given = [analysis.get("score") for record in records if record["truth"]["score"] == score
                 for analysis in record["analyses"]]
        values[f"recall_{score:g}"] = sum(value == score for value in given) / len(given) if given else None
        if given:
            present.append(values[f"recall_{score:g}"])
    values["sample_balanced_accuracy"] = sum(present) / len(present) if present else None  # type: ignore[arg-type]
    return values


def with_intervals(records: Sequence[Mapping[str, Any]], compute: Callable[[Sequence[Mapping[str, Any]]], Mapping[str, float | None]],
                   minimum: int) -> dict[str, Any]:
    values = dict(compute(records))
    intervals = bootstrap_intervals(records, compute) if len(records) >= minimum else {}
    return {**values, "intervals": {name: intervals.get(name) for name in values}}


def truth_of(record: Mapping[str, Any]) -> Truth:
    truth = record["truth"]
    return Truth(float(truth["score"]), truth["first_bad_step"], truth.get("steps"))


def verifier_summary(records: Sequence[Mapping[str, Any]], minimum: int) -> dict[str, Any]:
    report = truth_report(records, {record["id"]: truth_of(record) for record in records}, 1).to_dict()
    recalls = with_intervals(records, recall_values, minimum)
    kept = ("items", "flawed", "correct", "balanced_accuracy", "accuracy", "kappa", "localisation", "invented_defect_rate",
            "format_failure_rate", "majority_class", "random_step")
    intervals = {name: report["intervals"].get(name) for name in ("balanced_accuracy", "accuracy", "kappa", "localisation",
                                                                 "invented_defect_rate")}
    return {**{name: report[name] for name in kept}, **{name: value for name, value in recalls.items() if name != "intervals"},
            "intervals": {**(intervals if len(records) >= minimum else {}), **recalls["intervals"]}}


MIN_GROUP = 5


def calibration_table(generations: Sequence[Mapping[str, Any]], verifications: Sequence[Mapping[str, Any]],
                      minimum: int = MIN_GROUP) -> list[dict[str, Any]]:
    """One row per (split, family, level, templates) present in either list, and the 'all' rows of ``groups``."""
    generated, verified = groups(generations), groups(verifications)
    rows = []
    for key in sorted(set(generated) | set(verified)):
        split, family, level, templates = key
        row: dict[str, Any] = {"split": split, "family": family, "level": level, "templates": templates}
        if key in generated:
            row["problems"] = len(generated[key])
            row["generator"] = with_intervals(generated[key], generator_values, minimum)
        if key in verified:
            row["proofs"] = len(verified[key])
            row["verifier"] = verifier_summary(verified[key], minimum)
        rows.append(row)
    return rows


def edge_groups(rows: Sequence[Mapping[str, Any]], low: float, high: float) -> list[dict[str, Any]]:
    """The (split, family, level, templates) rows whose generator pass@1 lies strictly between ``low`` and ``high``."""
    return [{"split": row["split"], "family": row["family"], "level": row["level"], "templates": row.get("templates", ""),
             "pass@1": row["generator"]["pass@1"]}
            for row in rows if row["family"] != ALL and "generator" in row
            and row["generator"]["pass@1"] is not None and low < row["generator"]["pass@1"] < high]


def problems_in_groups(problems: Iterable[Mapping[str, Any]], groups: Sequence[Mapping[str, Any]]) -> list[str]:
    """Ids of every problem (measured or not) of the (split, family, level, templates) ``groups``: GRPO on edge
    groups draws from all of their problems, not only the few the calibration sampled."""
    wanted = {(group["split"], group["family"], group["level"], group.get("templates", "")) for group in groups}
    return [str(problem["id"]) for problem in problems
            if (problem["split"], problem["family"], problem["level"], problem.get("templates", "")) in wanted]


def problems_at_the_edge(generations: Iterable[Mapping[str, Any]]) -> list[str]:
    """Ids of the problems whose own measured pass rate lies strictly between 0 and 1 (GRPO groups with spread)."""
    return [str(record["id"]) for record in generations if record["passes"] and 0 < sum(record["passes"]) < len(record["passes"])]


def proofs_at_the_edge(verifications: Iterable[Mapping[str, Any]]) -> list[str]:
    """Ids of the proofs some but not all of whose analyses give the true score (verifier GRPO groups with spread)."""
    edge = []
    for record in verifications:
        hits = [analysis.get("score") == record["truth"]["score"] for analysis in record["analyses"]]
        if hits and 0 < sum(hits) < len(hits):
            edge.append(str(record["id"]))
    return edge


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def interval_text(row: Mapping[str, Any], name: str) -> str:
    interval = row.get("intervals", {}).get(name)
    return f"{percent(row.get(name))}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def markdown_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The table as Markdown (values with their 95 % intervals)."""
    lines = ["| split | family | level | templates | problems | pass@1 | pass@k | proofs | recall 0 | recall 0.5 | recall 1 | "
             "balanced acc. (majority class) | localisation (random step) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        generator, verifier = row.get("generator", {}), row.get("verifier", {})
        majority = verifier.get("majority_class", {}).get("balanced_accuracy")
        random_step = verifier.get("random_step", {}).get("localisation")
        lines.append(" | ".join([
            f"| {row['split']}", row["family"], str(row["level"] or ""), row.get("templates", ""), str(row.get("problems", "")),
            interval_text(generator, "pass@1") if generator else "", interval_text(generator, "pass@k") if generator else "",
            str(row.get("proofs", "")),
            *(interval_text(verifier, f"recall_{score:g}") if verifier else "" for score in SCALE),
            f"{interval_text(verifier, 'balanced_accuracy')} ({percent(majority)})" if verifier else "",
            f"{interval_text(verifier, 'localisation')} ({percent(random_step)})" if verifier else "",
        ]) + " |")
    return "\n".join(lines) + "\n"

"""``report.html`` for an evaluation run: one self-contained page of tables and embedded plots.

Contract:

* The page loads nothing: no script, no stylesheet or font link, no external URL; each plot
  is a PNG in a ``data:`` URI. It opens offline and can be mailed as one file.
* Every string that comes from data (settings, ids, table names, column names, cells) is
  HTML-escaped. A missing value (None) reads "n/a", never 0; floats show 3 decimals.
* The page is built in memory, then written atomically (``data.atomic``): a failure while
  building leaves any earlier ``report.html`` as it was and no partial file.
* The numbers themselves live in ``metrics.json`` and ``items.jsonl``, which the calling
  command writes; the page presents them and is never the record.

Tables carry stable ids (``settings``, ``counts``, ``headline``, ``confusion``, ``per-class``,
``calibration``, ``metric-vs-n``, ``field-vs-n``, ``cost``, ``definitions`` (a list), with a
reference verifier ``reference-verifier``, and with meta-filtered metrics ``headline-meta-filtered``
and ``metric-vs-n-meta-filtered``; prover reports: ``summary-<name>``, ``rows``) so that
the sections can be linked to.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from data.atomic import write_text_atomic
from eval import plots
from eval.binary_metrics import TIE_RULE
from eval.judge_cost import JudgeCost
from eval.metrics import SCALE, AgreementReport, VerifiedItem, mean_score
from eval.point_metrics import POINT_RULE
from eval.reference_verifier import NO_REFERENCE, REFERENCE_RULE, ReferenceComparison
from eval.truth import TruthReport

REPORT_NAME = "report.html"
MAX_CELL_CHARS = 300
"""Longer cells (a whole proof, say) are cut in the page; items.jsonl keeps them whole."""
ProverSummary = Mapping[str, Sequence[Mapping[str, object]]]
"""Named tables of a prover report, e.g. {"total": [...], "by level": [...], "by category": [...]}."""

_STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.missing { color: #888; }
figure { display: inline-block; vertical-align: top; width: min-content; margin: 0 1em 1em 0; }
figure img { border: 1px solid #ddd; }
figcaption { font-size: 0.85em; color: #555; }
"""


def format_value(value: object) -> str:
    """Display text of one value (not yet escaped): None -> "n/a", floats to 3 decimals."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if value != value else f"{value:.3f}"
    return str(value)


def calibration(items: Sequence[VerifiedItem], samples: int | None = None) -> list[tuple[float, float | None, int]]:
    """(human score, mean of the items' mean verifier scores or None, items with a verdict) per class.

    ``samples`` keeps the first that many samples of each item, matching the headline n.
    """
    points = []
    for score in SCALE:
        means = [mean_score(item.sample_scores[:samples]) for item in items if item.human_score == score]
        valid = [mean for mean in means if mean is not None]
        points.append((score, sum(valid) / len(valid) if valid else None, len(valid)))
    return points


def _cell(value: object, header: bool = False) -> str:
    text = format_value(value)
    if value is None and not header:
        return f'<td class="missing">{text}</td>'
    if len(text) > MAX_CELL_CHARS:
        text = text[:MAX_CELL_CHARS] + "…"
    if header:
        return f"<th>{html.escape(text)}</th>"
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return f'<td class="number">{html.escape(text)}</td>' if numeric else f"<td>{html.escape(text)}</td>"


def _table(table_id: str, headers: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(_cell(header, header=True) for header in headers)
    body = "".join("<tr>" + "".join(_cell(value) for value in row) + "</tr>\n" for row in rows)
    return f'<table id="{html.escape(table_id)}">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n'


def _section(title: str, *parts: str) -> str:
    return f"<section>\n<h2>{html.escape(title)}</h2>\n{''.join(parts)}</section>\n"


def _figure(png: bytes, alt: str, caption: str) -> str:
    return (f'<figure><img src="{plots.data_uri(png)}" alt="{html.escape(alt)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>\n")


def _page(title: str, sections: Sequence[str]) -> str:
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n{''.join(sections)}</body>\n</html>\n")


def _write(out_dir: str | Path, page: str) -> Path:
    path = Path(out_dir) / REPORT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, page)
    return path


def _settings_section(settings: Mapping[str, object]) -> str:
    return _section("Settings", _table("settings", ["setting", "value"], list(settings.items())))


def _headline_rows(n: int, report: AgreementReport) -> list[tuple[str, object]]:
    return [
        ("items", report.items), ("samples per item (n)", n),
        ("accuracy (majority)", report.accuracy_majority), ("accuracy (rounded mean)", report.accuracy_rounded_mean),
        ("balanced accuracy (majority)", report.balanced_accuracy),
        ("binary accuracy, one sample (correct = score 1)", report.binary.accuracy_per_sample),
        (f"binary accuracy, majority of {n}", report.binary.accuracy_majority),
        ("binary balanced accuracy", report.binary.balanced_accuracy),
        ("4-class accuracy (points 0/1/6/7)", report.points.four_class_accuracy),
        ("NMAE (points / 7)", report.points.nmae), ("MAE on 0-7 points", report.points.mae_points),
        ("mean absolute error (mean score)", report.mean_absolute_error),
        ("Cohen's kappa", report.cohen_kappa), ("quadratic kappa", report.quadratic_kappa),
        ("AUROC (human = 1 vs rest, by mean score)", report.auroc),
        ("all-pass items", report.all_pass.passed), ("all-pass false positives", report.all_pass.false_positives),
        ("all-pass false-positive rate", report.all_pass.false_positive_rate),
        ("format failures", report.format_failures), ("format-failure rate", report.format_failure_rate),
        ("items without verdict", report.items_without_verdict),
    ]


def _metric_vs_n_rows(metrics_by_n: Mapping[int, AgreementReport]) -> list[list[object]]:
    return [[n, m.accuracy_majority, m.accuracy_rounded_mean, m.cohen_kappa, m.quadratic_kappa, m.auroc,
             m.all_pass.passed, m.all_pass.false_positive_rate, m.format_failure_rate]
            for n, m in sorted(metrics_by_n.items())]


def _field_vs_n_rows(metrics_by_n: Mapping[int, AgreementReport]) -> list[list[object]]:
    return [[n, m.balanced_accuracy, m.binary.accuracy_per_sample, m.binary.accuracy_majority, m.binary.balanced_accuracy,
             m.points.four_class_accuracy, m.points.nmae, m.points.mae_points] for n, m in sorted(metrics_by_n.items())]


_FIELD_VS_N_HEADERS = ("n", "balanced accuracy", "binary accuracy, one sample", "binary accuracy, majority of n",
                       "binary balanced accuracy", "4-class accuracy", "NMAE", "MAE on 0-7 points")
DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("accuracy (majority)", "share of proofs whose majority score (ties to the lowest; format failures are not votes) "
                            "equals the human score; a proof without a verdict is wrong"),
    ("balanced accuracy", "mean over the human score classes present of that class's recall of the majority score; "
                          "always answering one class scores 1 / classes"),
    ("binary accuracy, one sample", "correct = score 1, human correct = human score 1; the share of (proof, sample) "
                                    "pairs whose verdict is the human one, a format failure wrong"),
    ("binary accuracy, majority of n", "the binary vote of the first n samples (maj@n); " + TIE_RULE
                                       + "; a proof with no parsed sample is wrong"),
    ("binary balanced accuracy", "mean of the majority verdict's recall on humanly correct and humanly incorrect proofs"),
    ("4-class accuracy, NMAE, MAE on 0-7 points", "only proofs graded in points out of 7; " + POINT_RULE),
    ("tokens per judgement", "mean completion tokens of one verifier sample (prompt tokens are shared by the n samples "
                             "and left out)"),
    ("reference verifier", REFERENCE_RULE),
)


_METRIC_VS_N_HEADERS = ("n", "accuracy (majority)", "accuracy (rounded mean)", "Cohen's kappa", "quadratic kappa", "AUROC",
                        "all-pass items", "all-pass FP rate", "format-failure rate")


def _meta_filtered_section(filtered: Mapping[int, AgreementReport], removed: Mapping[int, int]) -> str:
    n = max(filtered)
    rows = _headline_rows(n, filtered[n])
    rows.insert(2, ("analyses removed by the meta-verifier", removed.get(n)))
    curve = [[*row, removed.get(row[0])] for row in _metric_vs_n_rows(filtered)]
    return _section(
        f"Meta-filtered metrics (n = {n})",
        "<p>Each item keeps its first n analyses minus those whose critique the meta-verifier refuted; "
        "removed analyses are not format failures (rule: metrics.json, meta_filtered.rule).</p>\n",
        _table("headline-meta-filtered", ["metric", "value"], rows),
        _table("metric-vs-n-meta-filtered", [*_METRIC_VS_N_HEADERS, "analyses removed"], curve),
    )


def _with_interval(report: TruthReport, name: str) -> str | None:
    value, interval = getattr(report, name), report.intervals.get(name)
    if value is None:
        return None
    return f"{format_value(value)} [{format_value(interval[0])}, {format_value(interval[1])}]" if interval else format_value(value)


TRUTH_COLUMNS = (("accuracy", "accuracy"), ("balanced accuracy", "balanced_accuracy"), ("κ", "kappa"),
                 ("localisation", "localisation"), ("localised by any of n", "localised_by_any"),
                 ("invented-defect rate", "invented_defect_rate"), ("format failure rate", "format_failure_rate"))


def _truth_section(truth: Mapping[int, TruthReport]) -> str:
    headers = ["n", *(label for label, _ in TRUTH_COLUMNS)]
    rows: list[list[object]] = [[n, *(_with_interval(report, name) for _, name in TRUTH_COLUMNS)]
                                for n, report in sorted(truth.items())]
    last = truth[max(truth)]
    baseline = last.majority_class
    if baseline:
        rows.append([f"always {format_value(baseline['score'])}",
                     *(format_value(baseline[name]) if name in baseline else None for _, name in TRUTH_COLUMNS)])
    if last.random_step:
        rows.append([f"a random step (n = {last.n})",
                     *(format_value(last.random_step[name]) if name in last.random_step else None for _, name in TRUTH_COLUMNS)])
    return _section(
        "Against the checker's truth",
        f"<p>{last.items} proofs with a checked truth ({last.flawed} flawed, {last.correct} correct). Localisation: the "
        "share of analyses of flawed proofs that blame the first bad step; invented defects: analyses that blame a correct "
        "step or mark a correct proof down. Brackets: 95 % bootstrap intervals over the proofs. The last rows are the "
        "majority-class baseline, always answering the commonest true score, and the localisation of an analysis that blames "
        "a uniformly drawn step of the proof (eval/truth.py).</p>\n",
        _table("truth-vs-n", headers, rows),
        _figure(plots.truth_vs_n_png(truth), "truth metrics against n",
                "Each point uses the first n analyses of every proof."),
    )


def _reference_section(reference: ReferenceComparison | None) -> str:
    if reference is None:
        return _section("Reference verifier", f"<p>Not available: {html.escape(NO_REFERENCE)}.</p>\n")
    rows: list[list[object]] = []
    for label, name in (("accuracy (3-class)", "accuracy_majority"), ("balanced accuracy", "balanced_accuracy"),
                        ("mean absolute error (score)", "mean_absolute_error")):
        rows.append([label, getattr(reference.reference, name), getattr(reference.ours, name)])
    for label, name in (("binary accuracy (verdict)", "accuracy_majority"), ("binary balanced accuracy", "balanced_accuracy")):
        rows.append([label, getattr(reference.reference.binary, name), getattr(reference.ours.binary, name)])
    for label, name in (("4-class accuracy", "four_class_accuracy"), ("NMAE", "nmae"), ("MAE on 0-7 points", "mae_points")):
        rows.append([label, getattr(reference.reference.points, name), getattr(reference.ours.points, name)])
    rows.append(["MAE of the unrounded rating (score)", reference.mae_reference_score, reference.ours.mean_absolute_error])
    rows.append(["MAE of 7 x the unrounded rating (points)", reference.mae_reference_points,
                 reference.ours.points.mae_points_mean_score])
    gaps = [[n, gap] for n, gap in sorted(reference.ours_vs_reference_mae.items())]
    return _section(
        f"Reference verifier ({reference.items} proofs)",
        f"<p>{html.escape(REFERENCE_RULE)}. Ours: the majority of our first {reference.n} samples, on the same proofs.</p>\n",
        _table("reference-verifier", ["metric", "reference verifier", f"ours (n = {reference.n})"], rows),
        _table("reference-gap", ["n", "mean |our mean score - reference rating|"], gaps),
    )


def _cost_section(cost: JudgeCost) -> str:
    return _section("Cost", _table("cost", ["measure", "value"], [
        ("proofs", cost.proofs), ("verifier samples (judgements)", cost.judgements),
        ("completion tokens per judgement", cost.tokens_per_judgement),
        ("share of judgements cut at max_tokens", cost.hit_max_tokens), ("meta ratings", cost.meta_ratings),
        ("completion tokens per meta rating", cost.tokens_per_meta_rating),
        ("completion tokens per proof (verifier + meta)", cost.tokens_per_proof)]))


def _definitions_section() -> str:
    entries = "".join(f"<li><b>{html.escape(name)}</b>: {html.escape(text)}</li>\n" for name, text in DEFINITIONS)
    return _section("Definitions", f'<ul id="definitions">\n{entries}</ul>\n')


def verifier_report_html(settings: Mapping[str, object], metrics_by_n: Mapping[int, AgreementReport],
                         items: Sequence[VerifiedItem], meta_filtered: Mapping[int, AgreementReport] | None = None,
                         meta_removed: Mapping[int, int] | None = None, counts: Mapping[str, object] | None = None,
                         truth: Mapping[int, TruthReport] | None = None, reference: ReferenceComparison | None = None,
                         cost: JudgeCost | None = None) -> str:
    """The verifier-agreement page; the headline uses the largest n of ``metrics_by_n``.

    ``meta_filtered`` (metrics after the meta-verifier's veto, by n) and ``meta_removed``
    (analyses removed, by n) add a section; ``counts`` (items read, evaluated, left out)
    adds a table after the settings.
    """
    sections = [_settings_section(settings)]
    if counts:
        sections.append(_section("Items", _table("counts", ["count", "value"], list(counts.items()))))
    if not metrics_by_n:
        sections.append(_section("Results", "<p>No items were evaluated: there are no metrics to show.</p>\n"))
        return _page("Verifier evaluation", sections)
    n = max(metrics_by_n)
    report = metrics_by_n[n]
    points = calibration(items, n)
    labels = [f"{score:g}" for score in SCALE]
    sections += [
        _section(f"Headline metrics (n = {n})", _table("headline", ["metric", "value"], _headline_rows(n, report)),
                 "<p>Raw numbers: metrics.json and items.jsonl beside this file.</p>\n"),
        _section("Plots",
                 _figure(plots.confusion_png(report.confusion_matrix, f"Confusion matrix (n = {n})"),
                         "confusion matrix",
                         "Rows: human score; columns: majority verifier score; items without a verdict are left out."),
                 _figure(plots.calibration_png(points), "calibration plot",
                         "Mean verifier score per human score class; the dashed diagonal is perfect calibration."),
                 _figure(plots.metric_vs_n_png(metrics_by_n), "metrics against n",
                         "Each point uses the first n samples of every item; missing points are undefined metrics.")),
        _section("Confusion matrix", _table("confusion", ["human \\ verifier", *labels],
                                            [[label, *row] for label, row in zip(labels, report.confusion_matrix)])),
        _section("Per class", _table("per-class", ["human score", "items", "precision", "recall"],
                                     [[label, stats.support, stats.precision, stats.recall]
                                      for label, stats in report.per_class.items()])),
        _section("Calibration", _table("calibration", ["human score", "items with a verdict", "mean verifier score"],
                                       [[f"{score:g}", count, mean] for score, mean, count in points])),
        _section("Metrics against n", _table("metric-vs-n", _METRIC_VS_N_HEADERS, _metric_vs_n_rows(metrics_by_n)),
                 _table("field-vs-n", _FIELD_VS_N_HEADERS, _field_vs_n_rows(metrics_by_n)),
                 "<p>0-7 point metrics: " + html.escape(report.points.reason or f"{report.points.on_scale} proofs graded "
                 f"in points out of 7 ({report.points.four_class_items} on 0/1/6/7), {report.points.off_scale} left out")
                 + ".</p>\n"),
        _reference_section(reference),
    ]
    if cost is not None:
        sections.append(_cost_section(cost))
    if truth:
        sections.append(_truth_section(truth))
    if meta_filtered:
        sections.append(_meta_filtered_section(meta_filtered, meta_removed or {}))
    sections.append(_definitions_section())
    return _page("Verifier evaluation", sections)


def write_verifier_report(out_dir: str | Path, settings: Mapping[str, object],
                          metrics_by_n: Mapping[int, AgreementReport], items: Sequence[VerifiedItem],
                          meta_filtered: Mapping[int, AgreementReport] | None = None,
                          meta_removed: Mapping[int, int] | None = None, counts: Mapping[str, object] | None = None,
                          truth: Mapping[int, TruthReport] | None = None, reference: ReferenceComparison | None = None,
                          cost: JudgeCost | None = None) -> Path:
    """Write ``out_dir/report.html`` for a verifier-agreement run; returns its path.

    ``settings``: what the run used, shown in order (model, engine, data path, grade mapping,
    n, meta m, ...); ``metrics_by_n``: :func:`eval.metrics.agreement_by_sample_count`; the
    optional rest as in :func:`verifier_report_html`.
    """
    return _write(out_dir, verifier_report_html(settings, metrics_by_n, items, meta_filtered, meta_removed, counts, truth,
                                                reference, cost))


def _columns(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """Every key of the rows, in order of first appearance."""
    return list(dict.fromkeys(key for row in rows for key in row))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "table"


def prover_report_html(settings: Mapping[str, object], summary: ProverSummary,
                       rows: Sequence[Mapping[str, object]], bar_column: str | None = None) -> str:
    """The prover-benchmark page: settings, each summary table, a bar chart per table, the per-problem rows."""
    sections = [_settings_section(settings)]
    for name, table in summary.items():
        columns = _columns(table)
        parts = [_table(f"summary-{_slug(name)}", columns, [[row.get(column) for column in columns] for row in table])]
        # A chart only helps where there is something to compare: more than one row.
        if bar_column and bar_column in columns and len(table) > 1:
            values = [row.get(bar_column) for row in table]
            labels = [format_value(row.get(columns[0])) for row in table]
            numbers = [float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
                       for value in values]
            parts.append(_figure(plots.bar_png(labels, numbers, f"{bar_column} {name}", bar_column),
                                 f"{bar_column} {name}", f"{bar_column} per {columns[0]}."))
        sections.append(_section(name, *parts))
    columns = _columns(rows)
    problems = _table("rows", columns, [[row.get(column) for column in columns] for row in rows])
    sections.append(_section(f"Problems ({len(rows)})", problems if rows else "<p>No problems.</p>\n"))
    return _page("Prover evaluation", sections)


def write_prover_report(out_dir: str | Path, settings: Mapping[str, object], summary: ProverSummary,
                        rows: Sequence[Mapping[str, object]], bar_column: str | None = None) -> Path:
    """Write ``out_dir/report.html`` for a prover benchmark run; returns its path.

    ``summary`` maps a table name to its rows (dicts, columns in order of first appearance;
    the first column labels the row); ``rows`` are the per-problem rows. ``bar_column``
    names a summary column to draw as bars, one chart per table with several rows.
    """
    return _write(out_dir, prover_report_html(settings, summary, rows, bar_column))

"""The report's figures as PNG bytes, ready to embed; matplotlib (Agg) is imported on first use.

Every function draws one figure, returns the PNG, and closes the figure, so a long
evaluation process that writes many reports does not pile up open figures. Missing values
(None) are drawn as gaps, never as 0: a metric that is undefined is not a bad score.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from eval.metrics import SCALE

CURVES: tuple[tuple[str, str], ...] = (
    ("accuracy (majority)", "accuracy_majority"),
    ("Cohen's kappa", "cohen_kappa"),
    ("AUROC (human = 1)", "auroc"),
    ("all-pass false-positive rate", "all_pass.false_positive_rate"),
)
"""The metric-vs-n curves: (label, dotted attribute path in AgreementReport)."""
_LABELS = [f"{score:g}" for score in SCALE]


def data_uri(png: bytes) -> str:
    """A ``data:`` URI for an <img> src, so the page needs no file beside it."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display needed); imported on first use, so importing this module stays light."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_png_bytes(figure: Any) -> bytes:
    """The figure as PNG bytes, closed afterwards so figures do not pile up in a long run."""
    buffer = io.BytesIO()
    try:
        figure.tight_layout()
        figure.savefig(buffer, format="png", dpi=100)
    finally:
        pyplot().close(figure)
    return buffer.getvalue()


def confusion_png(confusion: Sequence[Sequence[int]], title: str) -> bytes:
    """Heat map of a 3x3 confusion matrix, rows human and columns predicted, each cell's count written in it."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(4.4, 3.8))
    largest = max((count for row in confusion for count in row), default=0)
    axis.imshow(confusion, cmap="Blues", vmin=0, vmax=max(largest, 1))
    for row, counts in enumerate(confusion):
        for column, count in enumerate(counts):
            # Dark cells get white text so that the count stays readable.
            colour = "white" if largest and count > largest / 2 else "black"
            axis.text(column, row, str(count), ha="center", va="center", color=colour, fontsize=12)
    axis.set_xticks(range(len(_LABELS)), _LABELS)
    axis.set_yticks(range(len(_LABELS)), _LABELS)
    axis.set_xlabel("verifier score (majority of samples)")
    axis.set_ylabel("human score")
    axis.set_title(title, fontsize=10)
    return figure_png_bytes(figure)


def calibration_png(points: Sequence[tuple[float, float | None, int]]) -> bytes:
    """Mean verifier score per human score class, as (human score, mean or None, items); the diagonal is perfect."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(4.4, 3.8))
    axis.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="perfect")
    drawn = [(human, mean, count) for human, mean, count in points if mean is not None]
    axis.plot([human for human, _, _ in drawn], [mean for _, mean, _ in drawn], marker="o", label="verifier")
    for human, mean, count in points:
        note = "no items" if mean is None else f"{count} item" + ("s" if count != 1 else "")
        axis.annotate(note, (human, 0.02 if mean is None else mean), textcoords="offset points", xytext=(0, 8),
                      ha="center", fontsize=8)
    axis.set_xticks(list(SCALE), _LABELS)
    axis.set_xlim(-0.15, 1.15)
    axis.set_ylim(-0.05, 1.12)
    axis.set_xlabel("human score")
    axis.set_ylabel("mean verifier score")
    axis.set_title("Calibration", fontsize=10)
    axis.legend(fontsize=8, loc="upper left")
    axis.grid(alpha=0.3)
    return figure_png_bytes(figure)


def _plain(text: str) -> str:
    """Text from data, with "$" escaped so that matplotlib does not read it as math (and fail on it)."""
    return text.replace("$", r"\$")


def _attribute(report: Any, path: str) -> float | None:
    value: Any = report
    for name in path.split("."):
        value = getattr(value, name)
    return value


def metric_vs_n_png(metrics_by_n: Mapping[int, Any], curves: Sequence[tuple[str, str]] = CURVES,
                    title: str = "Metrics against the number of samples") -> bytes:
    """``curves`` (label, attribute path) of each report against the number of samples n (log2 axis); None values are gaps."""
    plt = pyplot()
    counts = sorted(metrics_by_n)
    figure, axis = plt.subplots(figsize=(5.6, 3.8))
    lowest = 0.0
    for label, path in curves:
        values = [_attribute(metrics_by_n[count], path) for count in counts]
        lowest = min([lowest, *(value for value in values if value is not None)])
        axis.plot(counts, [math.nan if value is None else value for value in values], marker="o", label=label)
    axis.set_xscale("log", base=2)
    axis.set_xticks(counts, [str(count) for count in counts])
    axis.minorticks_off()
    axis.set_ylim(lowest - 0.05, 1.05)  # kappa can be negative
    axis.set_xlabel("samples per item (n)")
    axis.set_title(title, fontsize=10)
    axis.legend(fontsize=8)
    axis.grid(alpha=0.3)
    return figure_png_bytes(figure)


TRUTH_CURVES = (("balanced accuracy", "balanced_accuracy"), ("κ", "kappa"), ("localisation", "localisation"),
                ("localised by any of n", "localised_by_any"), ("invented-defect rate", "invented_defect_rate"))


def truth_vs_n_png(truth_by_n: Mapping[int, Any]) -> bytes:
    """The metrics against the checker's truth (``eval.truth``) against n."""
    return metric_vs_n_png(truth_by_n, TRUTH_CURVES, "Against the checker's truth, by number of samples")


def bar_png(labels: Sequence[str], values: Sequence[float | None], title: str, ylabel: str) -> bytes:
    """One bar per label; a None value gets no bar."""
    plt = pyplot()
    labels = [_plain(label) for label in labels]
    figure, axis = plt.subplots(figsize=(max(4.0, 0.6 * len(labels) + 2), 3.4))
    axis.bar(range(len(labels)), [0.0 if value is None else value for value in values],
             color=["#cccccc" if value is None else "C0" for value in values])
    for position, value in enumerate(values):
        if value is None:
            axis.text(position, 0, "n/a", ha="center", va="bottom", color="#888888")
    crowded = len(labels) > 6  # slant the labels so that they do not overlap
    axis.set_xticks(range(len(labels)), labels, rotation=30 if crowded else 0, ha="right" if crowded else "center")
    axis.set_ylabel(_plain(ylabel))
    axis.set_title(_plain(title), fontsize=10)
    axis.grid(alpha=0.3, axis="y")
    return figure_png_bytes(figure)

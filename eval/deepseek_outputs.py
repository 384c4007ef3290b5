"""Final proofs written in DeepSeekMath-V2's released output shape, one JSONL line per problem.

A line is what the release's ``outputs/*.jsonl`` hold, with the keys in the release's order,
so a run diffs line by line against a released one:

* problems with a reference solution or guidelines (IMO-ProofBench): ``solution``,
  ``grading guidelines``, ``level``, ``source``, ``question``, ``problem_idx``, ``type``
  (the category), ``model_prediction``;
* other problems (the contest inputs): ``question``, ``problem_idx``, ``model_prediction``.

``model_prediction`` is ``{proof, average_automatic_rating, human_rating}``:
``average_automatic_rating`` is our verifier's mean score of the final proof in [0, 1]
(null when it was not verified); ``human_rating`` is null unless a grade exists. ``eval
prover`` puts its grader's points there, out of 7, rescaled to the contest's full marks
when ``problem_idx`` names a contest with another scale (CMO 21, Putnam 10), so that the
release's reader (``eval.human_grades``, format ``deepseek-math-v2``) maps them as it maps
the released human ratings. It is a model's marking, not a human's: say so when reporting.

:func:`read_outputs` reads such lines back, ours or the release's, as :class:`OutputRow`
records whose ratings may be null (``eval.human_grades`` needs a human rating on every line;
this reader does not), so a ``prove --search`` file round-trips too. A bad line is an
InputError naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from data.readers import text_field
from data.row_checks import read_checked
from eval.benchmark_problems import BenchmarkProblem
from eval.grader import MAX_POINTS
from eval.human_grades import contest_max_points

OUTPUTS_NAME = "deepseek_outputs.jsonl"
"""The file name ``prove --search --problems`` and ``eval prover`` write in their run directory."""


@dataclass(frozen=True)
class FinalRecord:
    """One problem's final proof and its ratings, as a DeepSeekMath-V2 output line holds them."""

    problem: BenchmarkProblem
    proof: str
    verifier_mean: float | None
    """Our verifier's mean score of ``proof``, in [0, 1]; None when it was not verified."""
    grader_points: int | None = None
    """A grader's points out of 7 (``eval prover``); None when there is no grade."""

    def __post_init__(self) -> None:
        if self.verifier_mean is not None and not 0.0 <= self.verifier_mean <= 1.0:
            raise ValueError(f"{self.problem.id}: a verifier mean lies in [0, 1], not {self.verifier_mean}")
        if self.grader_points is not None and not 0 <= self.grader_points <= MAX_POINTS:
            raise ValueError(f"{self.problem.id}: grader points lie in 0..{MAX_POINTS}, not {self.grader_points}")


def human_rating(problem_idx: str, points: int | None) -> int | float | None:
    """Grader points out of 7 on the contest's own scale (unchanged for 7-point contests and unknown ones)."""
    if points is None:
        return None
    maximum = contest_max_points(problem_idx) or MAX_POINTS
    scaled = round(points * maximum / MAX_POINTS, 2)
    return int(scaled) if scaled == int(scaled) else scaled


def output_row(record: FinalRecord) -> dict[str, Any]:
    """The release-shaped line for one problem (module docstring)."""
    problem = record.problem
    prediction = {"proof": record.proof, "average_automatic_rating": record.verifier_mean,
                  "human_rating": human_rating(problem.id, record.grader_points)}
    if problem.reference_solution or problem.guidelines:
        return {"solution": problem.reference_solution, "grading guidelines": problem.guidelines, "level": problem.level,
                "source": problem.source, "question": problem.problem, "problem_idx": problem.id, "type": problem.category,
                "model_prediction": prediction}
    return {"question": problem.problem, "problem_idx": problem.id, "model_prediction": prediction}


def write_outputs(path: Path, records: Iterable[FinalRecord]) -> Path:
    """Write one line per record (atomically: a reader never sees half a file); returns ``path``."""
    lines = "".join(json.dumps(output_row(record), ensure_ascii=False) + "\n" for record in records)
    write_text_atomic(path, lines)
    return path


@dataclass(frozen=True)
class OutputRow:
    """One line of a release-shaped output file, as :func:`read_outputs` reads it back."""

    problem: BenchmarkProblem
    proof: str
    average_automatic_rating: float | None
    """The verifier's mean score in [0, 1]; None when the line has none."""
    human_rating: float | None
    """The rating on the contest's scale; None when the line has none."""

    @property
    def id(self) -> str:
        return self.problem.id

    def __post_init__(self) -> None:
        if self.average_automatic_rating is not None and not 0.0 <= self.average_automatic_rating <= 1.0:
            raise ValueError(f"average_automatic_rating {self.average_automatic_rating} is not in [0, 1]")
        if self.human_rating is not None and self.human_rating < 0:
            raise ValueError(f"human_rating {self.human_rating} is negative")


def _optional_number(prediction: dict[str, Any], key: str) -> float | None:
    value = prediction.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"model_prediction.{key} {value!r} is not a number")
    return value


def output_record(row: dict[str, Any]) -> OutputRow:
    """One line as an :class:`OutputRow`; ValueError naming what is wrong with it."""
    prediction = row.get("model_prediction")
    if not isinstance(prediction, dict):
        raise ValueError("missing object 'model_prediction'")
    problem = BenchmarkProblem(
        text_field(row, "problem_idx"), text_field(row, "question"), reference_solution=str(row.get("solution") or ""),
        guidelines=str(row.get("grading guidelines") or ""), level=str(row.get("level") or ""),
        category=str(row.get("type") or ""), source=str(row.get("source") or ""),
    )
    return OutputRow(problem, text_field(prediction, "proof"), _optional_number(prediction, "average_automatic_rating"),
                     _optional_number(prediction, "human_rating"))


def read_outputs(path: str | Path) -> list[OutputRow]:
    """Every line of a release-shaped output JSONL; InputError naming the first bad line."""
    return read_checked(path, output_record)

"""Training rows for each role, read and checked before any model is loaded.

    verifier        (problem, proof, reference score)      -> verification prompt
    meta-verifier   (problem, proof, analysis, rating)     -> meta-verification prompt
    generator       (problem)                              -> generation prompt
    sft             (problem, proof, score)                -> prompt + a target answer in the
                    (+ analysis, rating for meta-verifier)    verifier / generator / meta-verifier format

Data comes from JSONL, CSV, Parquet, a ``datasets`` folder or a Hub dataset id, with the
column names of ``DataSettings``. Any bad row (missing column, empty text, a score outside
{0, 0.5, 1}) stops the run with its line number: training silently on part of a dataset
would make results impossible to compare.

The SFT cold start teaches a row's written ``critique`` (and, for the meta-verifier, its
``assessment``) when the data has one: the ground-truth world writes critiques that name
the flawed step (``training.role_data.world_critiques``). Graded proofs from elsewhere
carry a score but rarely a critique; their target analysis is then a short fixed
paragraph per score (``COLD_START_ANALYSES``; ``COLD_START_RATINGS`` for the
meta-verifier), which teaches the output format and the score, not how to find errors.

Verifier rows (``data.verifier_rows``: ``ground_truth_judgement``, ``ground_truth_verify_score``)
are read as they are: a file whose first row lacks the configured score (critique) column
but has ``ground_truth_verify_score`` (``ground_truth_judgement``) reads those instead, so
the reference critique becomes the cold start's verifier target. Where a meta-verifier row
is wanted and a verifier-row file has no analysis and rating columns, each row's critique
(``ground_truth_judgement``), in the verifier format with its reference score, is the
analysis to rate, and its reference rating is 1 (``REFERENCE_CRITIQUE_RATING``). This assumes the reference
critique is reasonable: its defects are real and its score fits them. Such rows teach and
measure only the acceptance of sound critiques, never the catching of invented defects.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.readers import detect_format, parse_score, parse_score_map, raw_rows
from data.records import stable_id
from data.verifier_rows import VerifierRowColumns, is_verifier_rows
from training.config import DataSettings
from training.role_data.answers import COLD_START_ANALYSES, COLD_START_RATINGS, critique_body, verifier_answer  # noqa: F401

REFERENCE_CRITIQUE_RATING = 1.0
"""The meta rating a reference critique gets when it stands in for a rated analysis: it is assumed reasonable."""

@dataclass(frozen=True)
class TrainingRow:
    """One row of training data; which fields are set depends on the role."""

    id: str
    problem: str
    proof: str = ""
    score: float | None = None
    analysis: str = ""
    rating: float | None = None
    critique: str = ""
    """A written analysis of the proof to teach (empty: the fixed paragraph for its score)."""
    assessment: str = ""
    """A written meta-verification of ``analysis`` to teach (empty: the fixed paragraph for its rating)."""
    task: str = ""
    """The GRPO prompt this row makes when it is not the run's role: 'meta-verifier' for the rated analyses an
    enhanced verifier run trains on beside its graded proofs (``verifier_rows``); empty: the run's role."""
    goal: tuple[str, ...] = ()
    """The claims the world's checker decides a proof of ``problem`` against (``data.world.checker.check_goal``);
    empty when the data has no checker."""
    first_bad_step: int | None = None
    """The checker's first bad step of ``proof`` (None: the proof is correct, or the data does not say)."""
    step_known: bool = False
    """Whether the data says ``first_bad_step`` (world proofs do, as a column that is null for a correct proof)."""


def rows_of(data: DataSettings) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Raw (line, row, error) triples from a local file/folder or a Hub dataset."""
    if not data.path:
        raise InputError("no training data: set data.path (a .jsonl/.csv/.parquet file, a datasets folder or a Hub id)")
    path = Path(data.path).expanduser()
    if path.exists():
        yield from raw_rows(path, detect_format(path), data.split)
        return
    if data.path.count("/") != 1 or data.path.startswith((".", "/", "~")) or Path(data.path).suffix:
        raise InputError(f"training data not found: {data.path}")
    try:
        import datasets

        table = datasets.load_dataset(data.path, split=data.split)
    except Exception as error:  # datasets raises many types when offline or the id is wrong
        from engine.model_store import hub_offline

        hint = " (proofsmith works offline by default: set HF_HUB_OFFLINE=0 to download it)" if hub_offline() else ""
        raise InputError(f"training data {data.path!r} is not a local path and could not be loaded from the Hub: "
                         f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}{hint}") from None
    for number, row in enumerate(table, start=1):
        yield number, dict(row), None


def _text(row: dict[str, Any], column: str, what: str) -> str:
    if column not in row or row[column] is None:
        raise ValueError(f"missing column {column!r} ({what})")
    text = str(row[column])
    if not text.strip():
        raise ValueError(f"empty {what} in column {column!r}")
    return text


def _goal(row: dict[str, Any], column: str) -> tuple[str, ...]:
    """The row's checkable goal (absent or empty: none); every claim must parse, so a bad one fails before training."""
    value = row.get(column)
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(claim, str) and claim.strip() for claim in value):
        raise ValueError(f"column {column!r} must be a list of claims (strings)")
    from data.world.checker import parse_goal
    from data.world.claims import ClaimError

    try:
        parse_goal(tuple(value))  # cached: the reward checks rollouts against the same parsed goal
    except ClaimError as error:
        raise ValueError(f"a goal claim does not parse: {error}") from None
    return tuple(value)


FIRST_BAD_STEP = "first_bad_step"
"""The column of world proofs that says where a proof first goes wrong (null: nowhere)."""


def _step(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{FIRST_BAD_STEP} must be a step number >= 1 or null, not {value!r}")
    return value


def _reference(row: dict[str, Any], column: str, score_map: tuple[tuple[str, float], ...], what: str) -> float:
    if column not in row or row[column] is None or (isinstance(row[column], str) and not row[column].strip()):
        raise ValueError(f"missing column {column!r} ({what})")
    value = parse_score(row[column], score_map)
    if isinstance(value, str):
        raise ValueError(value)
    assert value is not None
    return value


def _with_verifier_row_columns(data: DataSettings, row: dict[str, Any], needs_rating: bool) -> tuple[DataSettings, bool]:
    """(the columns to read, whether critiques stand in for rated analyses) for a file whose first row is ``row``."""
    names = VerifierRowColumns()
    changes = {field: fallback for field, fallback in (("score_column", names.score), ("critique_column", names.judgement))
               if getattr(data, field) not in row and fallback in row}
    data = replace(data, **changes)
    as_analyses = (needs_rating and data.analysis_column not in row and data.rating_column not in row
                   and is_verifier_rows(row) and data.critique_column == names.judgement and data.score_column in row)
    return data, as_analyses


def read_rows(data: DataSettings, role: str, formats: tuple[str, ...] = ("verifier", "generator")) -> list[TrainingRow]:
    """Every usable row for ``role``; InputError naming the first bad row, or if nothing is left.

    For ``sft``, ``formats`` says which answers will be built: verifier and generator answers
    need a score, meta-verifier answers an analysis and a rating.
    """
    needs_score = role == "verifier" or (role == "sft" and bool({"verifier", "generator"} & set(formats)))
    needs_rating = role == "meta-verifier" or (role == "sft" and "meta-verifier" in formats)
    score_map = parse_score_map(data.score_map)
    rows: list[TrainingRow] = []
    seen: set[str] = set()
    triples = rows_of(data)
    first = next(triples, None)
    critiques_as_analyses = False
    if first is not None and first[1] is not None:
        data, critiques_as_analyses = _with_verifier_row_columns(data, first[1], needs_rating)
    for line, raw, error in itertools.chain([first] if first is not None else [], triples):
        where = f"{data.path}: row at line {line}"
        if raw is None:
            raise InputError(f"{where}: {error}")
        try:
            problem = _text(raw, data.problem_column, "problem")
            proof = analysis = ""
            score = rating = None
            if role in ("verifier", "meta-verifier", "sft"):
                proof = _text(raw, data.proof_column, "proof")
            if needs_score:
                score = _reference(raw, data.score_column, score_map, "score")
            if needs_rating and critiques_as_analyses:
                critique_score = _reference(raw, data.score_column, score_map, "score")
                analysis = verifier_answer(critique_score, critique_body(_text(raw, data.critique_column, "critique")))
                rating = REFERENCE_CRITIQUE_RATING
            elif needs_rating:
                analysis = _text(raw, data.analysis_column, "analysis")
                rating = _reference(raw, data.rating_column, (), "rating")
            goal = _goal(raw, data.goal_column) if role == "generator" else ()
            step_known = role == "verifier" and FIRST_BAD_STEP in raw
            first_bad_step = _step(raw[FIRST_BAD_STEP]) if step_known else None
        except ValueError as problem_error:
            raise InputError(f"{where}: {problem_error}") from None
        if data.max_proof_chars and max(len(proof), len(analysis)) > data.max_proof_chars:
            continue
        raw_id = raw.get(data.id_column)
        row_id = str(raw_id) if raw_id not in (None, "") else stable_id(problem, proof, analysis)
        if row_id in seen:
            raise InputError(f"{where}: duplicate id {row_id!r}")
        seen.add(row_id)
        critique, assessment = ((str(raw.get(column) or "").strip() if role == "sft" else "")
                                for column in (data.critique_column, data.assessment_column))
        critique = critique_body(critique) if critique else ""
        rows.append(TrainingRow(row_id, problem, proof, score, analysis, rating, critique, assessment, goal=goal,
                                first_bad_step=first_bad_step, step_known=step_known))
    if not rows:
        raise InputError(f"no usable rows in {data.path} (after max_proof_chars={data.max_proof_chars})")
    return rows[: data.max_rows] if data.max_rows else rows


def read_sft_rows(data: DataSettings, formats: tuple[str, ...]) -> list[TrainingRow]:
    """The cold start's rows: every format from ``data.path``; or, with ``data.meta_path``, the
    verifier and generator answers from ``data.path`` and the meta-verifier answers from the rated
    analyses in ``data.meta_path`` (``sft_records`` builds from a row only the answers it has fields for).
    """
    if not data.meta_path or "meta-verifier" not in formats:
        return read_rows(data, "sft", formats)
    proof_formats = tuple(name for name in formats if name != "meta-verifier")
    proof_rows = read_rows(data, "sft", proof_formats) if proof_formats else []
    return proof_rows + read_rows(replace(data, path=data.meta_path), "sft", ("meta-verifier",))


def as_meta_verification_tasks(rows: Sequence[TrainingRow]) -> list[TrainingRow]:
    """Rated analyses as the meta-verification prompts of an enhanced verifier run (``TrainingRow.task``)."""
    return [replace(row, task="meta-verifier") for row in rows]


def verifier_rows(data: DataSettings, held_out: int = 0) -> tuple[list[TrainingRow], list[TrainingRow]]:
    """(training rows, held-out rows) of a verifier GRPO run: the graded proofs of ``data.path`` with ``held_out``
    of them set aside, plus, when ``data.meta_path`` is set, its rated analyses as meta-verification tasks (the
    paper's enhanced verifier: one run on both prompts). Only graded proofs are held out: the before/after
    agreement is the verifier's."""
    rows = read_rows(data, "verifier")
    held: list[TrainingRow] = []
    if held_out:
        rows, held = split_holdout(rows, held_out, data.seed)
    if data.meta_path:
        rows += as_meta_verification_tasks(read_rows(replace(data, path=data.meta_path), "meta-verifier"))
    return rows, held


def split_holdout(rows: Sequence[TrainingRow], holdout: int, seed: int) -> tuple[list[TrainingRow], list[TrainingRow]]:
    """(training rows, held-out rows): ``holdout`` rows picked by a seeded shuffle."""
    if holdout >= len(rows):
        raise InputError(f"data.holdout={holdout} leaves no training rows out of {len(rows)}")
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    held = set(order[:holdout])
    return [row for index, row in enumerate(rows) if index not in held], [rows[index] for index in sorted(held)]

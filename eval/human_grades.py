"""Read human-graded proofs from four formats into one record, :class:`HumanGrade`.

Formats (``FORMATS``), and how each grade becomes a score in {0, 0.5, 1}:

* ``imo-gradingbench``: IMO-GradingBench CSV; ``Points`` out of 7 (7/6/1/0 =
  Correct/Almost/Partial/Incorrect), mapped by a named grade mapping (below).
* ``open-proof-corpus``: OPC Parquet; the binary ``reward_model.ground_truth``,
  "correct" -> 1 and "incorrect" -> 0. The problem and the proof exist only inside the judge
  prompt (``prompt[0].content``), see :func:`split_opc_prompt`.
* ``deepseek-math-v2``: DeepSeekMath-V2 output JSONL; ``model_prediction.human_rating`` in
  contest points, out of ``CONTEST_MAX_POINTS`` found from the ``problem_idx`` prefix,
  mapped by a named grade mapping.
* ``jsonl``: generic JSONL with ``problem``, ``proof``, ``score`` (already 0/0.5/1) and an
  optional ``id``.
* ``verifier-rows``: JSONL, CSV or Parquet rows of ``problem``, ``proof``,
  ``ground_truth_judgement``, ``ground_truth_verify_score`` (``data.verifier_rows``; other
  column names through ``columns``); the score is the grade, the reference critique is kept
  in ``source_fields["reference_critique"]``.

Grade mappings for point grades (``GRADE_MAPPINGS``); both keep 7/7 -> 1 and 6/7 -> 0.5:

* ``almost-half`` (default): full marks -> 1; at least 3/4 of the marks ("almost": 6/7,
  Putnam 8/10, CMO 16/21) -> 0.5; less -> 0. On the 7/6/1/0 scale: 7->1, 6->0.5, 1->0, 0->0.
* ``partial-half``: full marks -> 1; any positive mark -> 0.5; 0 -> 0 (so 1/7 -> 0.5).

A path may be a file or a folder of such files (read in name order). The format is
detected from the file's columns when unambiguous (a file with both ``score`` and the
verifier-row columns is not); otherwise pass it. A bad row raises
:class:`InputError` naming the file and the row's line (CSV, JSONL) or 1-based row (Parquet).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.readers import raw_rows
from data.readers import detect_format as file_kind_of
from data.records import ProofItem, check_score, stable_id
from data.verifier_rows import FORMAT_NAME as VERIFIER_ROWS, VerifierRowColumns, is_verifier_rows, verifier_row

FORMATS = ("imo-gradingbench", "open-proof-corpus", "deepseek-math-v2", "jsonl", VERIFIER_ROWS)
GRADE_MAPPINGS = {
    "almost-half": "full marks -> 1, at least 3/4 of the marks -> 0.5, less -> 0 (7-6-1-0 -> 1, 0.5, 0, 0)",
    "partial-half": "full marks -> 1, any positive mark -> 0.5, none -> 0 (7-6-1-0 -> 1, 0.5, 0.5, 0)",
}
ALMOST_FRACTION = 0.75
"""The share of the marks that still counts as "sound with minor errors" under almost-half."""
CONTEST_MAX_POINTS: tuple[tuple[str, int], ...] = (("PB-", 7), ("IMO", 7), ("CMO", 21), ("Putnam", 10))
"""Full marks per DeepSeekMath-V2 problem, by the prefix of ``problem_idx`` (first match wins)."""
OPC_PROBLEM_MARKER = "### Problem Statement:"
OPC_PROOF_MARKER = "### Model Solution:"
_SUFFIXES = (".csv", ".jsonl", ".parquet")


@dataclass(frozen=True)
class HumanGrade:
    """A proof with a human score; ``raw_grade`` is the grade as the source wrote it."""

    id: str
    problem: str
    proof: str
    human_score: float
    raw_grade: str
    source: str
    """The format it was read from, one of FORMATS."""
    problem_id: str = ""
    model: str = ""
    """Who wrote the proof, when the source says."""
    reference_solution: str = ""
    source_fields: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Other short fields of the source row (guidelines, contest, automatic rating, ...); read-only."""

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a human grade needs an id")
        if not self.problem.strip() or not self.proof.strip():
            raise ValueError(f"grade {self.id}: problem and proof must not be empty")
        check_score(self.human_score, f"grade {self.id}: human score", allow_none=False)

    def to_proof_item(self) -> ProofItem:
        return ProofItem(self.id, self.problem, self.proof, self.human_score)


def points_to_score(points: float, max_points: float, mapping: str = "almost-half") -> float:
    """A point grade as 0, 0.5 or 1 under a named mapping; ValueError for an impossible grade."""
    if mapping not in GRADE_MAPPINGS:
        raise ValueError(f"unknown grade mapping {mapping!r}; choose one of {', '.join(GRADE_MAPPINGS)}")
    if not 0 <= points <= max_points:
        raise ValueError(f"grade {points:g} is outside 0..{max_points:g}")
    if points == max_points:
        return 1.0
    if mapping == "partial-half":
        return 0.5 if points > 0 else 0.0
    return 0.5 if points >= ALMOST_FRACTION * max_points else 0.0


def contest_max_points(problem_idx: str) -> int | None:
    """Full marks of a DeepSeekMath-V2 problem id such as "CMO2024-3"; None when unknown."""
    return next((points for prefix, points in CONTEST_MAX_POINTS if problem_idx.startswith(prefix)), None)


def split_opc_prompt(prompt: str) -> tuple[str, str]:
    """(problem, proof) from an OPC judge prompt; ValueError when the markers are missing.

    The prompt ends "### Problem Statement:\\n<problem>\\n\\n### Model Solution:\\n<proof>".
    The first proof marker after the first problem marker splits them, so a proof that
    itself contains either marker stays whole.
    """
    start = prompt.find(OPC_PROBLEM_MARKER)
    if start < 0:
        raise ValueError(f"no {OPC_PROBLEM_MARKER!r} in the prompt")
    middle = prompt.find(OPC_PROOF_MARKER, start)
    if middle < 0:
        raise ValueError(f"no {OPC_PROOF_MARKER!r} after the problem statement")
    problem = prompt[start + len(OPC_PROBLEM_MARKER): middle].strip()
    proof = prompt[middle + len(OPC_PROOF_MARKER):].strip()
    if not problem or not proof:
        raise ValueError("empty problem" if not problem else "empty proof")
    return problem, proof


def detect_format(path: Path, names: VerifierRowColumns = VerifierRowColumns()) -> str:
    """The format of one file from its columns (``names``: the verifier-row columns); InputError when it is not clear."""
    suffix = path.suffix.lower()
    columns: set[str] = set()
    if suffix == ".parquet":
        import pyarrow.parquet as parquet

        try:
            columns = set(parquet.read_schema(path).names)
        except Exception as error:  # pyarrow raises several types for a bad file
            raise InputError(f"cannot read {path} as Parquet: {error}") from None
    elif suffix in (".csv", ".jsonl"):
        first = next((row for _, row, _ in raw_rows(path, suffix[1:])), None)
        columns = set(first or {})
    if {"Points", "Response", "Problem"} <= columns:
        return "imo-gradingbench"
    if {"prompt", "reward_model"} <= columns:
        return "open-proof-corpus"
    if {"model_prediction", "question", "problem_idx"} <= columns:
        return "deepseek-math-v2"
    if is_verifier_rows(columns, names) and {names.problem, names.proof} <= columns:
        if "score" in columns:
            raise InputError(f"{path} has both a score column and {names.score!r}: pass --format {VERIFIER_ROWS} or jsonl")
        return VERIFIER_ROWS
    if {"problem", "proof", "score"} <= columns:
        return "jsonl"
    raise InputError(f"cannot tell which human-grade format {path} is: pass one of {', '.join(FORMATS)}")


def read_human_grades(path: str | Path, format_name: str | None = None, mapping: str = "almost-half",
                      columns: VerifierRowColumns = VerifierRowColumns()) -> list[HumanGrade]:
    """Every graded proof in a file or a folder of files; InputError on the first bad row or duplicate id.

    ``columns`` names the columns of the verifier-row format where a file's differ."""
    source = Path(path)
    if format_name is not None and format_name not in FORMATS:
        raise InputError(f"unknown human-grade format {format_name!r}; choose one of {', '.join(FORMATS)}")
    if mapping not in GRADE_MAPPINGS:
        raise InputError(f"unknown grade mapping {mapping!r}; choose one of {', '.join(GRADE_MAPPINGS)}")
    if not source.exists():
        raise InputError(f"human grades not found: {path}")
    files = sorted(file for file in source.iterdir() if file.suffix.lower() in _SUFFIXES) if source.is_dir() else [source]
    if not files:
        raise InputError(f"no .csv, .jsonl or .parquet file in {path}")
    grades: list[HumanGrade] = []
    seen: dict[str, str] = {}
    for file in files:
        for where, grade in _read_file(file, format_name or detect_format(file, columns), mapping, columns):
            if grade.id in seen:
                raise InputError(f"{where}: duplicate id {grade.id!r} (first seen in {seen[grade.id]})")
            seen[grade.id] = where
            grades.append(grade)
    return grades


def _read_file(path: Path, kind: str, mapping: str,
               columns: VerifierRowColumns = VerifierRowColumns()) -> Iterator[tuple[str, HumanGrade]]:
    """(where, grade) per row; bad rows become InputError naming where they are."""
    file_kind = file_kind_of(path) if kind == VERIFIER_ROWS else \
        {"imo-gradingbench": "csv", "open-proof-corpus": "parquet"}.get(kind, "jsonl")
    unit = "row" if file_kind == "parquet" else "line"
    builder = {"imo-gradingbench": _gradingbench, "open-proof-corpus": _open_proof_corpus,
               "deepseek-math-v2": _deepseek, "jsonl": _generic,
               VERIFIER_ROWS: lambda row, _: _verifier_rows(row, columns)}[kind]
    for number, row, error in raw_rows(path, file_kind):
        where = f"{path} {unit} {number}"
        if row is None:
            raise InputError(f"{where}: {error}")
        try:
            grade = builder(row, mapping)
        except (KeyError, TypeError, ValueError, IndexError) as problem:
            reason = f"missing field {problem}" if isinstance(problem, KeyError) else str(problem)
            raise InputError(f"{where}: {reason}") from None
        yield where, grade


def _text(row: dict[str, Any], key: str) -> str:
    value = row[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"field {key!r} is empty" if not value else f"field {key!r} is not text")
    return value


def _number(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} {value!r} is not a number") from None
    if number != number:  # NaN, as pandas writes an empty cell
        raise ValueError(f"{what} is empty")
    return number


def _gradingbench(row: dict[str, Any], mapping: str) -> HumanGrade:
    points = _number(row["Points"], "Points")
    return HumanGrade(
        id=_text(row, "Grading ID"), problem=_text(row, "Problem"), proof=_text(row, "Response"),
        human_score=points_to_score(points, 7, mapping), raw_grade=f"{points:g}", source="imo-gradingbench",
        problem_id=str(row.get("Problem ID") or ""), reference_solution=str(row.get("Solution") or ""),
        source_fields={key: row[key] for key in ("Grading guidelines", "Reward", "Problem Source") if row.get(key)},
    )


def _open_proof_corpus(row: dict[str, Any], mapping: str) -> HumanGrade:
    prompt = row["prompt"]
    if not prompt or not isinstance(prompt[0], dict):
        raise ValueError("prompt is empty")
    problem, proof = split_opc_prompt(str(prompt[0]["content"]))
    verdict = str((row["reward_model"] or {}).get("ground_truth", "")).strip().lower()
    if verdict not in ("correct", "incorrect"):
        raise ValueError(f"ground truth {verdict!r} is neither 'correct' nor 'incorrect'")
    index = (row.get("extra_info") or {}).get("index")
    solutions = [entry.get("solution") for entry in row.get("solutions") or [] if entry and entry.get("solution")]
    return HumanGrade(
        id=f"opc-{index}" if index is not None else stable_id(problem, proof), problem=problem, proof=proof,
        human_score=1.0 if verdict == "correct" else 0.0, raw_grade=verdict, source="open-proof-corpus",
        problem_id=str(row.get("problem_id") or ""), model=str(row.get("model_id") or ""),
        reference_solution=str(solutions[0]) if solutions else "",
        source_fields={"metadata": row.get("metadata") or {}},
    )


def _deepseek(row: dict[str, Any], mapping: str) -> HumanGrade:
    problem_idx, prediction = _text(row, "problem_idx"), row["model_prediction"]
    if not isinstance(prediction, dict):
        raise ValueError("model_prediction is not an object")
    maximum = contest_max_points(problem_idx)
    if maximum is None:
        raise ValueError(f"no known point scale for problem {problem_idx!r} (known prefixes: "
                         + ", ".join(prefix for prefix, _ in CONTEST_MAX_POINTS) + ")")
    points = _number(prediction["human_rating"], "human_rating")
    extra = {key: row[key] for key in ("grading guidelines", "level", "source", "type") if row.get(key)}
    return HumanGrade(
        id=problem_idx, problem=_text(row, "question"), proof=_text(prediction, "proof"),
        human_score=points_to_score(points, maximum, mapping), raw_grade=f"{points:g}/{maximum}",
        source="deepseek-math-v2", problem_id=problem_idx, model="DeepSeekMath-V2",
        reference_solution=str(row.get("solution") or ""),
        source_fields={"max_points": maximum, "average_automatic_rating": prediction.get("average_automatic_rating"), **extra},
    )


def _generic(row: dict[str, Any], mapping: str) -> HumanGrade:
    score = _number(row["score"], "score")
    if score not in (0.0, 0.5, 1.0):
        raise ValueError(f"score {row['score']!r} is not one of 0, 0.5, 1")
    problem, proof = _text(row, "problem"), _text(row, "proof")
    known = {"id", "problem", "proof", "score"}
    item_id = str(row["id"]) if row.get("id") not in (None, "") else stable_id(problem, proof)
    return HumanGrade(
        id=item_id, problem=problem, proof=proof, human_score=score,
        raw_grade=json.dumps(row["score"]), source="jsonl", problem_id=str(row.get("problem_id") or ""),
        source_fields={key: value for key, value in row.items() if key not in known},
    )



def _verifier_rows(row: dict[str, Any], columns: VerifierRowColumns) -> HumanGrade:
    checked = verifier_row(row, columns)
    return HumanGrade(
        id=checked.id, problem=checked.problem, proof=checked.proof, human_score=checked.score,
        raw_grade=json.dumps(row[columns.score]), source=VERIFIER_ROWS, problem_id=str(row.get("problem_id") or ""),
        source_fields={"reference_critique": checked.judgement},
    )

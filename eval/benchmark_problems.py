"""Proof problems with a reference solution and marking guidelines, for ``eval prover``.

Two formats, read whole and checked before any model loads:

* ``imo-proofbench``: the IMO-ProofBench CSV (``Problem ID``, ``Problem``, ``Solution``,
  ``Grading guidelines``, ``Category``, ``Level``, ``Short Answer``, ``Source``).
* ``jsonl``: one object per line with ``problem`` and optional ``id``, ``reference_solution``
  (or ``solution``), ``grading_guidelines`` (or ``guidelines``), ``short_answer`` (or
  ``answer``), ``level``, ``category``, ``source``, ``goal`` (the claims the world's checker
  holds a proof to: ``proofsmith world`` writes such problems). A row without an id gets a
  content hash.

A problem without a reference or guidelines is still marked (the grader is told none was
given); a blank short answer means the problem has none to check. ``select`` keeps the
problems whose id starts with one of its prefixes (``PB-Basic`` picks the 30 Basic ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.readers import raw_rows
from data.records import stable_id

FORMATS = ("imo-proofbench", "jsonl")
PROOFBENCH_COLUMNS = {
    "id": "Problem ID", "problem": "Problem", "reference_solution": "Solution", "guidelines": "Grading guidelines",
    "category": "Category", "level": "Level", "short_answer": "Short Answer", "source": "Source",
}
JSONL_ALIASES = {
    "reference_solution": ("reference_solution", "solution"),
    "guidelines": ("grading_guidelines", "guidelines"),
    "short_answer": ("short_answer", "answer"),
}


@dataclass(frozen=True)
class BenchmarkProblem:
    id: str
    problem: str
    reference_solution: str = ""
    guidelines: str = ""
    short_answer: str = ""
    level: str = ""
    category: str = ""
    source: str = ""
    goal: tuple[str, ...] = ()
    """The claims a proof must establish, for the world's checker (``data.world``); empty elsewhere."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "goal", tuple(self.goal))
        if not self.id.strip():
            raise ValueError("a problem needs a non-empty id")
        if not self.problem.strip():
            raise ValueError(f"problem {self.id} has an empty statement")


def detect_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "imo-proofbench"
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    raise InputError(f"cannot tell the format of {path}: give --format ({', '.join(FORMATS)})")


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise ValueError(f"{key!r} must be text, got {type(value).__name__}")
    return str(value).strip()


def _from_proofbench(row: dict[str, Any]) -> BenchmarkProblem:
    missing = [column for column in ("Problem ID", "Problem") if column not in row]
    if missing:
        raise ValueError(f"missing column {missing[0]!r} (IMO-ProofBench CSV needs {', '.join(PROOFBENCH_COLUMNS.values())})")
    return BenchmarkProblem(**{field: _text(row, column) for field, column in PROOFBENCH_COLUMNS.items()})


def _from_jsonl(row: dict[str, Any]) -> BenchmarkProblem:
    if "problem" not in row:
        raise ValueError("missing field 'problem'")
    fields = {name: next((_text(row, key) for key in keys if _text(row, key)), "") for name, keys in JSONL_ALIASES.items()}
    problem = _text(row, "problem")
    identifier = _text(row, "id") or stable_id(problem)
    goal = row.get("goal") or []
    if not isinstance(goal, list) or not all(isinstance(claim, str) for claim in goal):
        raise ValueError("field 'goal' must be a list of claims (strings)")
    if goal:
        from data.world.claims import parse_claim

        for claim in goal:
            parse_claim(claim)  # a ClaimError is a ValueError: the row is reported with its line
    return BenchmarkProblem(identifier, problem, level=_text(row, "level"), category=_text(row, "category"),
                            source=_text(row, "source"), goal=tuple(goal), **fields)


def read_benchmark_problems(path: str | Path, format_name: str = "", select: Sequence[str] = ()) -> list[BenchmarkProblem]:
    """Every problem of ``path`` (whose id starts with a ``select`` prefix, when given), in file order.

    InputError names the first bad row; duplicate ids are refused (resuming goes by id).
    """
    source = Path(path)
    if not source.is_file():
        raise InputError(f"benchmark file not found: {path}")
    kind = format_name or detect_format(source)
    if kind not in FORMATS:
        raise InputError(f"unknown benchmark format {kind!r}; choose one of {', '.join(FORMATS)}")
    build = _from_proofbench if kind == "imo-proofbench" else _from_jsonl
    problems: list[BenchmarkProblem] = []
    seen: set[str] = set()
    for line, row, error in raw_rows(source, "csv" if kind == "imo-proofbench" else "jsonl"):
        try:
            if error:
                raise ValueError(error)
            assert row is not None
            problem = build(row)
        except ValueError as bad:
            raise InputError(f"{path}: row at line {line}: {bad}") from None
        if problem.id in seen:
            raise InputError(f"{path}: row at line {line}: duplicate id {problem.id!r}")
        seen.add(problem.id)
        problems.append(problem)
    return select_problems(problems, select)


def select_problems(problems: Sequence[BenchmarkProblem], prefixes: Sequence[str]) -> list[BenchmarkProblem]:
    """The problems whose id starts with one of ``prefixes`` (all of them when there are none)."""
    return [problem for problem in problems if not prefixes or any(problem.id.startswith(prefix) for prefix in prefixes)]

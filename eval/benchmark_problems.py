"""Proof problems with a reference solution and marking guidelines, for ``eval prover``.

Four formats, read whole and checked before any model loads:

* ``imo-proofbench``: the IMO-ProofBench CSV (``Problem ID``, ``Problem``, ``Solution``,
  ``Grading guidelines``, ``Category``, ``Level``, ``Short Answer``, ``Source``).
* ``jsonl``: one object per line with ``problem`` and optional ``id``, ``reference_solution``
  (or ``solution``), ``grading_guidelines`` (or ``guidelines``), ``short_answer`` (or
  ``answer``), ``level``, ``category``, ``source``, ``goal`` (the claims the world's checker
  holds a proof to: ``proofsmith world`` writes such problems). A row without an id gets a
  content hash. A ``.json`` file holding a list of such objects reads the same.
* ``csv``: a CSV with the same columns as ``jsonl`` (``problem``, optional ``id``, ...).
* ``deepseek-math-v2``: DeepSeekMath-V2's inputs, a JSON list of ``{id, question, answer,
  contest, problem_idx}``; the id is ``problem_idx`` (``id`` only numbers a contest's
  problems), ``answer`` the short answer unless it is the string ``"null"`` (a pure proof
  problem), ``contest`` the source.

The format is detected when unambiguous: a ``.csv`` by its header (``Problem ID``/``Problem``
or ``problem``), a ``.json`` list by its first item's keys (``question`` + ``problem_idx``, or
``problem``), other ``.json``/``.jsonl`` files as JSONL.

A problem without a reference or guidelines is still marked (the grader is told none was
given); a blank short answer means the problem has none to check. ``select`` keeps the
problems whose id starts with one of its prefixes (``PB-Basic`` picks the 30 Basic ones).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data.errors import InputError
from data.readers import raw_rows
from data.records import stable_id

FORMATS = ("imo-proofbench", "jsonl", "csv", "deepseek-math-v2")
DEEPSEEK_NO_ANSWER = "null"
"""What DeepSeekMath-V2's inputs write as the answer of a pure-proof problem."""
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
        first = next(raw_rows(path, "csv"), None)
        columns = set(first[1] or {}) if first else set()
        return "csv" if "problem" in columns and not {"Problem", "Problem ID"} & columns else "imo-proofbench"
    if suffix == ".json":
        items = _json_list(path)
        if items is not None:
            keys = set(items[0]) if items and isinstance(items[0], dict) else set()
            if {"question", "problem_idx"} <= keys:
                return "deepseek-math-v2"
            if "problem" in keys:
                return "jsonl"
            raise InputError(f"cannot tell the format of the JSON list in {path} (its first item has neither question + "
                             f"problem_idx nor problem): give --format ({', '.join(FORMATS)})")
        return "jsonl"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise InputError(f"cannot tell the format of {path}: give --format ({', '.join(FORMATS)})")


def _json_list(path: Path) -> list[Any] | None:
    """The file's items when the whole file is one JSON list; None when it is not (JSONL, say)."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, list) else None


def _list_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """(where, row, error) per item of a JSON list file; the item is named by number and, when it has one, its id."""
    items = _json_list(path)
    if items is None:
        yield "the file", None, "not a JSON list of problems"
        return
    for number, item in enumerate(items, start=1):
        name = item.get("problem_idx") or item.get("id") if isinstance(item, dict) else None
        where = f"item {number}" + (f" ({name})" if isinstance(name, (str, int)) and str(name).strip() else "")
        yield (where, item, None) if isinstance(item, dict) else (where, None, "not a JSON object")


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


def _from_deepseek(row: dict[str, Any]) -> BenchmarkProblem:
    for key in ("question", "problem_idx"):
        if key not in row:
            raise ValueError(f"missing field {key!r} (DeepSeekMath-V2 inputs have id, question, answer, contest, problem_idx)")
        if not isinstance(row[key], str) or not row[key].strip():
            raise ValueError(f"field {key!r} must be non-empty text")
    answer = row.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ValueError(f"field 'answer' must be text (\"{DEEPSEEK_NO_ANSWER}\" for none), got {type(answer).__name__}")
    short = "" if answer is None or answer.strip() == DEEPSEEK_NO_ANSWER else answer.strip()
    return BenchmarkProblem(row["problem_idx"].strip(), row["question"].strip(), short_answer=short,
                            source=_text(row, "contest"))


def _rows(source: Path, kind: str) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    if kind == "deepseek-math-v2" or (kind == "jsonl" and source.suffix.lower() == ".json" and _json_list(source) is not None):
        yield from _list_rows(source)
        return
    for line, row, error in raw_rows(source, "jsonl" if kind == "jsonl" else "csv"):
        yield f"row at line {line}", row, error


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
    build = {"imo-proofbench": _from_proofbench, "deepseek-math-v2": _from_deepseek}.get(kind, _from_jsonl)
    problems: list[BenchmarkProblem] = []
    seen: set[str] = set()
    for where, row, error in _rows(source, kind):
        try:
            if error:
                raise ValueError(error)
            assert row is not None
            problem = build(row)
        except ValueError as bad:
            raise InputError(f"{path}: {where}: {bad}") from None
        if problem.id in seen:
            raise InputError(f"{path}: {where}: duplicate id {problem.id!r}")
        seen.add(problem.id)
        problems.append(problem)
    return select_problems(problems, select)


def select_problems(problems: Sequence[BenchmarkProblem], prefixes: Sequence[str]) -> list[BenchmarkProblem]:
    """The problems whose id starts with one of ``prefixes`` (all of them when there are none)."""
    return [problem for problem in problems if not prefixes or any(problem.id.startswith(prefix) for prefix in prefixes)]

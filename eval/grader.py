"""Mark a proof 0 / 1 / 6 / 7 against a reference solution and marking guidelines.

Contract:

* The prompt is ``eval/prompts/grade.md`` (replaceable through ``prompts_dir``, like every
  role's template); the problem, reference, guidelines and proof are fenced so that text
  inside them cannot close their tags.
* Points are read the way ``verifier.parse`` reads scores: only the text after any
  reasoning block, the last brace-matched ``\\boxed{}`` after the last "Final points:",
  nothing but markup after it, and not from a truncated completion. Anything other than
  0, 1, 6 or 7 there is a format failure with ``points=None``, never 0.
* With several grader samples a proof's points are the lower median of the parsed ones (a
  tie between 1 and 6 marks 1: a benchmark should not round a split panel up); a proof
  no sample could mark has ``points=None`` and is reported as ungraded.
* A prompt that does not fit the grader's context is set aside (``engine.fitting``): that
  proof is ungraded with the reason, and the rest of the batch is marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.base import ChatMessage, Engine
from engine.config import SamplingConfig
from engine.fitting import generate_fitting
from engine.sampling import make_requests
from verifier.parse import boxed_spans, phrase_pattern, visible_text
from verifier.templates import fence, load_template

PROMPTS_DIR = Path(__file__).parent / "prompts"
POINTS = (0, 1, 6, 7)
MAX_POINTS = 7
CLOSER = "Final points:"
_TRAILER = frozenset(" \t\r\n.,;:!$*_`()[]{}<>|\\-")


@dataclass(frozen=True)
class Marking:
    """One grader sample: its points (None on a format failure) and the text it wrote."""

    points: int | None
    text: str
    format_errors: tuple[str, ...] = ()
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        if self.points is not None and self.points not in POINTS:
            raise ValueError(f"points must be one of {POINTS} or None, got {self.points!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"points": self.points, "text": self.text, "format_errors": list(self.format_errors),
                "finish_reason": self.finish_reason}


@dataclass(frozen=True)
class Grade:
    """All grader samples for one proof, and the points they add up to."""

    markings: tuple[Marking, ...]
    refused: str = ""
    """Why the proof was not sent to the grader (its prompt did not fit), else empty."""

    @property
    def points(self) -> int | None:
        parsed = sorted(marking.points for marking in self.markings if marking.points is not None)
        return parsed[(len(parsed) - 1) // 2] if parsed else None

    def to_dict(self) -> dict[str, Any]:
        return {"points": self.points, "samples": [marking.points for marking in self.markings],
                "refused": self.refused or None, "markings": [marking.to_dict() for marking in self.markings]}


def grading_messages(problem: str, reference_solution: str, guidelines: str, proof: str,
                     prompts_dir: str | Path | None = None) -> tuple[ChatMessage, ...]:
    template = load_template("grade", PROMPTS_DIR, prompts_dir)
    return template.render({
        "problem": fence(problem, "problem"),
        "reference_solution": fence(reference_solution or "(none given)", "reference"),
        "guidelines": fence(guidelines or "(none given)", "guidelines"),
        "proof": fence(proof, "proof"),
    })


def parse_points(text: str, finish_reason: str | None = None) -> Marking:
    """The points of one grader completion; see the module docstring for the rules."""
    visible, think_error = visible_text(text)
    errors = [think_error] if think_error else []
    if finish_reason == "length":
        errors.append("truncated: the completion hit max_tokens before finishing")
    closers = list(phrase_pattern(CLOSER).finditer(visible))
    if not closers:
        return Marking(None, text, (*errors, f"missing closing phrase {CLOSER!r}"), finish_reason)
    boxes = [span for span in boxed_spans(visible) if span[0] >= closers[-1].end()]
    if not boxes:
        return Marking(None, text, (*errors, "no brace-matched \\boxed{} after the closing phrase"), finish_reason)
    raw = boxes[-1][2]
    edges = [closers[-1].end(), *(edge for start, end, _ in boxes for edge in (start, end)), len(visible)]
    between = "".join(visible[left:right] for left, right in zip(edges[::2], edges[1::2]))
    if not set(between) <= _TRAILER:
        errors.append("text follows the final points")
    cleaned = raw.strip().strip("$").strip()
    points = int(cleaned) if cleaned.isascii() and cleaned.isdigit() and int(cleaned) in POINTS else None
    if points is None:
        errors.append(f"points {cleaned!r} are not one of 0, 1, 6, 7")
    return Marking(None if errors else points, text, tuple(errors), finish_reason)


@dataclass(frozen=True)
class ToGrade:
    problem: str
    reference_solution: str
    guidelines: str
    proof: str


def grade_proofs(engine: Engine, items: Sequence[ToGrade], samples: int, sampling: SamplingConfig,
                 prompts_dir: str | Path | None = None) -> list[Grade]:
    """``samples`` markings of every item, all items in one batch."""
    prompts = [grading_messages(item.problem, item.reference_solution, item.guidelines, item.proof, prompts_dir)
               for item in items]
    results, refused = generate_fitting(engine, make_requests(prompts, sampling, n=samples))
    grades = []
    for index, result in enumerate(results):
        if result is None:
            grades.append(Grade((), refused.get(index, "not sent")))
            continue
        grades.append(Grade(tuple(parse_points(completion.text, completion.finish_reason)
                                  for completion in result.completions)))
    return grades

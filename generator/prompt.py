"""Build the generator's first-attempt and refinement prompts from their templates."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engine.base import ChatMessage
from verifier.templates import fence, load_template

PROMPTS_DIR = Path(__file__).parent / "prompts"


def generation_messages(problem: str, prompts_dir: str | Path | None = None) -> tuple[ChatMessage, ...]:
    return load_template("generate", PROMPTS_DIR, prompts_dir).render({"problem": fence(problem, "problem")})


def issues_first(evaluations: Sequence[tuple[str, float | None]]) -> list[tuple[str, float | None]]:
    """(analysis, score) pairs reordered for a refinement prompt: those finding issues first (0, then 0.5,
    then 1, then unscored); equal scores keep their order."""
    return sorted(evaluations, key=lambda evaluation: 2.0 if evaluation[1] is None else evaluation[1])


def format_evaluations(evaluations: Sequence[tuple[str, float | None]]) -> str:
    """Quote each (analysis, score) in its own fence, numbered, with its score stated outside it."""
    if not evaluations:
        return "(no usable evaluation of the earlier attempt)"
    blocks = []
    for number, (analysis, score) in enumerate(evaluations, start=1):
        stated = "no score" if score is None else f"score {score:g}"
        blocks.append(f"Evaluation {number} ({stated}):\n{fence(analysis or '(empty)', 'evaluation')}")
    return "\n\n".join(blocks)


def refinement_messages(
    problem: str,
    previous_proof: str,
    evaluations: Sequence[tuple[str, float | None]],
    prompts_dir: str | Path | None = None,
) -> tuple[ChatMessage, ...]:
    template = load_template("refine", PROMPTS_DIR, prompts_dir)
    return template.render(
        {
            "problem": fence(problem, "problem"),
            "previous_proof": fence(previous_proof, "proof"),
            "evaluations": format_evaluations(evaluations),
        }
    )

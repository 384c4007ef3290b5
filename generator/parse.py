"""Split a generator completion into its proof and its self-evaluation.

The proof is the text under the first ``## Solution`` heading, up to the *last*
``## Self Evaluation`` heading; the self-evaluation is everything after that last heading,
parsed with the verifier's parser (``verifier.parse``). Taking the last heading means a
fake self-evaluation written inside the proof becomes part of the proof, and the score can
only come from the real one at the end; a completion cut off by ``max_tokens`` has no
self-score at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifier.parse import VERIFIER_FORMAT, Verdict, parse_verdict, visible_text

_SOLUTION_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]*(?:\*\*)?solution(?:\*\*)?[ \t]*:?[ \t]*$", re.IGNORECASE | re.MULTILINE)
_SELF_EVAL_HEADING = re.compile(
    r"^[ \t]*#{1,6}[ \t]*(?:\*\*)?self[ \t-]*evaluation(?:\*\*)?[ \t]*:?[ \t]*$", re.IGNORECASE | re.MULTILINE
)


@dataclass(frozen=True)
class GeneratedProof:
    proof: str
    self_evaluation: Verdict
    format_errors: tuple[str, ...] = ()
    """Problems with the sections themselves; the self-evaluation's own are in its verdict."""
    self_evaluation_text: str = ""
    """The whole self-evaluation section as written: analysis, verdict line and boxed self-score (what a
    meta-verifier must see to check that the score fits the defects)."""

    @property
    def self_score(self) -> float | None:
        return self.self_evaluation.score

    @property
    def format_ok(self) -> bool:
        return not self.format_errors and self.self_evaluation.format_ok and bool(self.proof)

    @property
    def all_format_errors(self) -> tuple[str, ...]:
        return self.format_errors + self.self_evaluation.format_errors


def parse_generation(text: str, finish_reason: str | None = None) -> GeneratedProof:
    """Parse one completion of the ``generate`` or ``refine`` prompt."""
    visible, think_error = visible_text(text)
    errors: list[str] = [think_error] if think_error else []
    solution = _SOLUTION_HEADING.search(visible)
    evaluations = list(_SELF_EVAL_HEADING.finditer(visible))
    last_evaluation = evaluations[-1] if evaluations else None
    if solution is None:
        errors.append("missing '## Solution' section")
    if last_evaluation is None:
        errors.append("missing '## Self Evaluation' section")
        proof_start = solution.end() if solution else 0
        proof = visible[proof_start:].strip()
        verdict = Verdict(None, "", ("no self-evaluation",))
        if finish_reason == "length":
            errors.append("truncated: the completion hit max_tokens before finishing")
        return GeneratedProof(proof, verdict, tuple(errors))
    if solution is not None and solution.start() > last_evaluation.start():
        errors.append("'## Solution' comes after the self-evaluation")
        solution = None
    proof_start = solution.end() if solution else 0
    proof = visible[proof_start: last_evaluation.start()].strip()
    if not proof:
        errors.append("the solution section is empty")
    section = visible[last_evaluation.end():]
    verdict = parse_verdict(section, VERIFIER_FORMAT, finish_reason)
    return GeneratedProof(proof, verdict, tuple(errors), section.strip())

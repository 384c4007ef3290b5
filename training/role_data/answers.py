"""The target answers the cold start teaches, in each role's output format.

An answer carries a written analysis (a critique, an assessment) when the data has one; otherwise
a short fixed paragraph per score (``COLD_START_ANALYSES``; ``COLD_START_RATINGS`` for the
meta-verifier), which teaches the output format and the score, not how to find errors.
"""

from __future__ import annotations

from meta_verifier.meta_verify import META_FORMAT
from verifier.parse import VERIFIER_FORMAT

COLD_START_ANALYSES = {
    1.0: "I checked each step against the problem statement. Every claim follows from the previous ones or from "
         "standard facts, all cases are covered, and the argument proves exactly what was asked. I found no issues.",
    0.5: "The argument is sound overall, but some steps are only asserted or sketched: details a complete proof must "
         "give are omitted, or a minor error needs fixing. The main idea works.",
    0.0: "The proof does not establish the claim: a key step is false or unjustified, or the argument does not "
         "address what the problem asks. This is a fatal error, so the proof cannot be accepted.",
}

COLD_START_RATINGS = {
    1.0: "Each defect the evaluation reports is real and accurately described, its summary of the proof is faithful, "
         "and its score matches the defects it found.",
    0.5: "The evaluation invents no defect, but it misses real problems or its score does not match what it found.",
    0.0: "The defects the evaluation reports do not exist in the proof: its critique is unreasonable.",
}


def verifier_answer(score: float, analysis: str = "") -> str:
    """An answer in the verifier format: ``analysis`` (else the cold-start paragraph for ``score``), then the score."""
    body = analysis.strip() or COLD_START_ANALYSES[score]
    return f"{VERIFIER_FORMAT.opener}\n{body}\n\n{VERIFIER_FORMAT.closers[0]} \\boxed{{{score:g}}}"


def meta_answer(rating: float, assessment: str = "") -> str:
    """An answer in the meta-verifier format: ``assessment`` (else the cold-start paragraph for ``rating``), then the rating."""
    body = assessment.strip() or COLD_START_RATINGS[rating]
    return f"{META_FORMAT.opener}\n{body}\n\n{META_FORMAT.closers[0]} \\boxed{{{rating:g}}}"


def generator_answer(proof: str, score: float, critique: str = "") -> str:
    """A solution followed by an honest self-evaluation: ``critique`` of it (if written) and its reference score."""
    return f"## Solution\n{proof.strip()}\n\n## Self Evaluation\n{verifier_answer(score, critique)}"


def critique_body(text: str) -> str:
    """A written critique without the verifier format around it: a leading opener and a trailing closing phrase with
    its boxed score are removed (a reference critique may be a whole verifier answer), so that an answer built from it
    holds exactly one opener and one score."""
    body = text.strip()
    if body.startswith(VERIFIER_FORMAT.opener):
        body = body[len(VERIFIER_FORMAT.opener):].strip()
    ends = [body.rfind(closer) for closer in VERIFIER_FORMAT.closers]
    cut = max(ends)
    if cut >= 0 and "\\boxed{" in body[cut:]:
        body = body[:cut].strip()
    return body or text.strip()

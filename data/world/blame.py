"""Which step an analysis blames: the first ``Step N`` named in a sentence that reports a problem.

A sentence reports a problem when it uses one of ``PROBLEM_WORDS`` (false, wrong, error,
does not follow, without justification, ...). Sentences that only check a step (``Step 2
is correct``) name no blame. This reads the analyses proofsmith's world critiques are
written in (``training.role_data.world_critiques``) and the plain ways people and models
point at a step; an analysis that names no step in a problem sentence blames none, and the
truth metrics count that as not localising the flaw, never as a guess.
"""

from __future__ import annotations

import re

PROBLEM_WORDS = (
    "false", "wrong", "incorrect", "error", "mistake", "invalid", "does not follow", "doesn't follow", "non sequitur",
    "not justified", "unjustified", "without justification", "without any justification", "no reason", "without saying why",
    "does not hold", "doesn't hold", "fails", "flaw", "gap", "breaks", "never establish", "not correct", "cannot verify",
)
_STEP = re.compile(r"\bstep\s+(\d+)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def problem_sentence(sentence: str) -> bool:
    lowered = sentence.lower()
    return any(re.search(rf"\b{re.escape(word)}", lowered) for word in PROBLEM_WORDS)


def blamed_step(analysis: str) -> int | None:
    """The first step number named in a problem-reporting sentence of ``analysis``; None if there is none."""
    for sentence in _SENTENCE.split(analysis):
        if problem_sentence(sentence):
            match = _STEP.search(sentence)
            if match:
                return int(match[1])
    return None

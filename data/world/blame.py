"""Which step an analysis blames: the first ``Step N`` named in a sentence that reports a problem.

A sentence reports a problem when it uses one of ``PROBLEM_WORDS`` (false, wrong, error,
does not follow, without justification, ...). Sentences that only check a step (``Step 2
is correct``) name no blame. When no problem sentence names a step, a problem sentence
that names none ("Step 1 claims X, but X expands to Y. So the argument fails.") points
back at the last step named before it, unless that sentence checked the step (``Step 2 is
correct. The argument fails.`` blames nothing): its antecedent, as a reader takes it.
This reads the analyses proofsmith's world critiques are written in
(``training.role_data.world_critiques``) and the plain ways people and models point at a
step; an analysis that names no step this way blames none, and the truth metrics count
that as not localising the flaw, never as a guess.
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
_CHECK = re.compile(r"\b(is|are|looks|seems) (correct|right|true|fine|valid|sound)\b|\bholds\b|\bchecks out\b|\bcorrectly\b|\bchecked\b",
                    re.IGNORECASE)
_DENIAL = re.compile(r"\bno (errors?|mistakes?|flaws?|gaps?|issues?|problems?)\b|\bnothing\b|\bnot (find|see)\b", re.IGNORECASE)


def problem_sentence(sentence: str) -> bool:
    lowered = sentence.lower()
    return any(re.search(rf"\b{re.escape(word)}", lowered) for word in PROBLEM_WORDS)


def checks_a_step(sentence: str) -> bool:
    """The sentence declares a step sound (``Step 2 is correct``, ``it holds``) and reports no problem."""
    return not problem_sentence(sentence) and _CHECK.search(sentence) is not None


def blamed_step(analysis: str) -> int | None:
    """The first step number named in a problem-reporting sentence of ``analysis``, else the antecedent of the first
    problem sentence that names none (module docstring); None if there is neither."""
    sentences = [sentence for sentence in _SENTENCE.split(analysis) if sentence.strip()]
    for sentence in sentences:
        if problem_sentence(sentence):
            match = _STEP.search(sentence)
            if match:
                return int(match[1])
    antecedent: int | None = None
    for sentence in sentences:
        match = _STEP.search(sentence)
        if match:
            antecedent = None if checks_a_step(sentence) else int(match[1])
        elif checks_a_step(sentence):  # "I checked Step 3, X; it holds.": the clause after the step cleared it
            antecedent = None
        elif problem_sentence(sentence) and antecedent is not None and not _DENIAL.search(sentence):
            return antecedent
    return None

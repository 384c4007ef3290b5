"""Binary judge metrics: "is this proof correct?", as the Open Proof Corpus reports LLM judges.

A verifier sample says *correct* when its score is 1 and *incorrect* when it is 0 or 0.5; a
format failure (None) says nothing. A proof is humanly correct when its human score is 1
(OPC "correct"; GradingBench 7/7 under either grade mapping). Over the first n samples of
each proof:

* ``accuracy_per_sample``: the share of (proof, sample) pairs whose verdict is the human
  one; a format failure is wrong. The expected accuracy of a judge asked once: OPC's
  "one sample" figure, averaged over the n samples instead of taking only the first.
* ``accuracy_majority`` (maj@n): the majority verdict of the n samples against the human.
  Votes are the parsed samples; *correct* needs strictly more correct votes than incorrect
  ones, so a tie (possible for even n, or after format failures) is *incorrect*: a split
  judge does not pass a proof. A proof without a parsed sample has no verdict and counts
  as wrong. At n = 1 this is the first sample's accuracy.
* ``balanced_accuracy``: the mean of the majority verdict's recall on the humanly correct
  and on the humanly incorrect proofs (the classes present), no verdict a miss; 0.5 for a
  judge that always says the same thing.
* ``true_positive_rate``, ``true_negative_rate``: those two recalls (None when the class is
  absent).

The binary majority is a vote of correct against not correct: it can differ from "the
3-class majority score is 1" (samples 1, 1, 0, 0.5: the 3-class majority is 1, the binary
vote 2 against 2 is a tie, so incorrect).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from eval.votes import valid_scores

if TYPE_CHECKING:
    from eval.votes import VerifiedItem

TIE_RULE = "a tie between correct (score 1) and not-correct votes is 'incorrect'; format failures are not votes"


def says_correct(score: float) -> bool:
    """A score of 1 is the verdict "correct"; 0 and 0.5 are "incorrect"."""
    return score == 1


def binary_majority(samples: Sequence[float | None]) -> bool | None:
    """The majority binary verdict of the parsed samples (a tie is False); None when none parsed."""
    scores = valid_scores(samples)
    if not scores:
        return None
    correct = sum(1 for score in scores if says_correct(score))
    return correct > len(scores) - correct


@dataclass(frozen=True)
class BinaryReport:
    """Correct-vs-not agreement of one set of items at one n (module docstring: the rules)."""

    items: int
    humanly_correct: int
    accuracy_per_sample: float | None
    accuracy_majority: float | None
    balanced_accuracy: float | None
    true_positive_rate: float | None
    true_negative_rate: float | None
    items_without_verdict: int
    tie_rule: str = TIE_RULE

    def __post_init__(self) -> None:
        if not 0 <= self.humanly_correct <= self.items:
            raise ValueError(f"{self.humanly_correct} correct items out of {self.items}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _recall(hits: Sequence[bool]) -> float | None:
    return sum(hits) / len(hits) if hits else None


def binary_report(items: Sequence[VerifiedItem]) -> BinaryReport:
    """Binary metrics of ``items`` with all their samples."""
    humans = [item.human_score == 1 for item in items]
    verdicts = [binary_majority(item.sample_scores) for item in items]
    pairs = [(human, score) for human, item in zip(humans, items) for score in item.sample_scores]
    per_sample = [score is not None and says_correct(score) == human for human, score in pairs]
    positives = [verdict is True for human, verdict in zip(humans, verdicts) if human]
    negatives = [verdict is False for human, verdict in zip(humans, verdicts) if not human]
    recalls = [recall for recall in (_recall(positives), _recall(negatives)) if recall is not None]
    return BinaryReport(
        items=len(items),
        humanly_correct=sum(humans),
        accuracy_per_sample=_recall(per_sample),
        accuracy_majority=_recall([verdict == human for human, verdict in zip(humans, verdicts)]),
        balanced_accuracy=sum(recalls) / len(recalls) if recalls else None,
        true_positive_rate=_recall(positives),
        true_negative_rate=_recall(negatives),
        items_without_verdict=sum(1 for verdict in verdicts if verdict is None),
    )

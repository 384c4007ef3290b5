"""Where a worked analysis decides, and a loss that weights those tokens (``training.decision_weight``).

A worked step of an analysis (``data.world.work.WORKED_STEP``) expands the proof's step and ends
"... the right side is R. They agree" (or "differ"). Two spans decide whether a flawed step is
caught: R, the right side as written (a flawed step's miscomputed side is where a model that knows
correct algebra writes the correct expansion instead, and then agrees), and the verdict word. On
its own training analyses the stage-3 world model's loss on the first bad step's verdict word was
37× the answer's mean (benchmarks/results/world_verifier_token_loss.json): the plain mean over
answer tokens spends almost all of its gradient on tokens already learned. The comparison drills'
lines (``drills.py``) are the same sentence without a step, and are weighted the same way.

The weighted loss is ``sum(w · cross-entropy) / sum(w)`` over the answer tokens, with ``w`` =
``decision_weight`` on a token that overlaps a decision span (``training.decision_parts``: the right
side, the verdict word, or both; or the right side of a flawed step alone, ``flawed_right``: there a
model that has learned that sides agree writes the left side's value instead of expanding the proof's
own right side, teacher-forced too, docs/results/world-model.md) and 1 elsewhere: at weight 1 it is
the causal LM loss ``transformers`` computes (a test checks it). The weights apply to every answer
with worked steps, the generator's self-evaluation included: it is the same decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from data.world.work import COMPARED_SIDES, WORKED_STEP
from training.world_model.config import DECISION_PARTS, FLAWED_RIGHT


def decision_spans(answer: str, parts: Sequence[str] = DECISION_PARTS) -> list[tuple[int, int]]:
    """Character spans (start, end) of each comparison's ``parts`` (right side, verdict word) in ``answer``, and with
    ``flawed_right`` the right side of each worked step that says "They differ", in order."""
    spans = [match.span(group) for match in COMPARED_SIDES.finditer(answer) for group in parts if group != FLAWED_RIGHT]
    if FLAWED_RIGHT in parts:  # a step, not a bare drill line: without its claim a drill's sides are drawn
        spans += [match.span("right") for match in WORKED_STEP.finditer(answer) if match.group("verdict") == "differ"]
    return sorted(spans)


def token_weights(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]], weight: float) -> list[float]:
    """Per token (character ``offsets`` of each): ``weight`` if it overlaps one of ``spans``, else 1."""
    return [weight if any(start < span_end and span_start < end for span_start, span_end in spans) else 1.0
            for start, end in offsets]


def weighted_answer_ids(tokenizer: Any, answer: str, weight: float,
                        parts: Sequence[str] = DECISION_PARTS) -> tuple[list[int], list[float]]:
    """``tokenizer.answer_ids(answer)`` (its text's tokens, then the end token) and each id's weight (``weight`` on
    the comparisons' ``parts``, the end token's 1), from one encoding of ``answer``."""
    from training.world_model.tokenizer import END

    encoded = tokenizer(answer, add_special_tokens=False, return_offsets_mapping=True)
    ids = [*encoded["input_ids"], tokenizer.convert_tokens_to_ids(END)]
    return ids, [*token_weights(encoded["offset_mapping"], decision_spans(answer, parts), weight), 1.0]


def weighted_loss(logits: Any, labels: Any, weights: Any) -> Any:
    """``sum(w · cross-entropy) / sum(w)`` of next-token predictions over the positions whose label is not ignored."""
    import torch

    logits, labels, weights = logits[:, :-1, :].float(), labels[:, 1:], weights[:, 1:].float()
    kept = labels != -100
    losses = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1).clamp(min=0),
                                               reduction="none").view_as(weights)
    weights = weights * kept
    return (losses * weights).sum() / weights.sum().clamp(min=1e-9)

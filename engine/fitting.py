"""Send a batch, setting aside the prompts that do not fit the model's context.

Backends name the too-long prompts of a batch (``PromptTooLongError.indices``); the rest are
sent again, so one oversized row never stops a pipeline. Used by auto-labeling and by the
reward's scoring calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from data.errors import PromptTooLongError
from engine.base import Engine, GenerationRequest, GenerationResult


def generate_fitting(engine: Engine, requests: Sequence[GenerationRequest]) -> tuple[list[GenerationResult | None], dict[int, str]]:
    """Generate for every request that fits the context; the others get None and the reason.

    A backend names the too-long prompts of a batch (``PromptTooLongError.indices``); those are
    set aside and the rest sent again, so one oversized row never stops a run.
    """
    results: list[GenerationResult | None] = [None] * len(requests)
    refused: dict[int, str] = {}
    remaining = list(range(len(requests)))
    while remaining:
        try:
            answers = engine.generate([requests[index] for index in remaining])
        except PromptTooLongError as error:
            named = {offset for offset in error.indices if 0 <= offset < len(remaining)}
            if not named:
                raise  # the backend could not say which prompt: nothing to set aside
            for offset in named:
                refused[remaining[offset]] = str(error) if len(named) == 1 else "prompt does not fit the model's context"
            remaining = [index for offset, index in enumerate(remaining) if offset not in named]
            continue
        for index, answer in zip(remaining, answers):
            results[index] = answer
        break
    return results, refused

"""Per-completion token counts from an OpenAI-style answer with ``n`` choices.

The rule: a completion's count is exact whenever the server says it, and the counts of a
request always sum to the server's ``usage.completion_tokens``.

* n = 1: the request's total is the completion's count (exact).
* n > 1 and every choice carries its generated ``token_ids`` (vLLM's ``return_token_ids``
  request field, which the openai backend sends): each count is ``len(token_ids)`` (exact;
  vLLM's usage is the sum of these lengths).
* n > 1 and the server reports only the total (hosted APIs, SGLang, llama.cpp): the total
  is split across the choices in proportion to their text length (largest remainders, so
  the shares sum to the total) and each completion is flagged ``tokens_estimated``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def split_total(total: int, texts: Sequence[str]) -> list[int]:
    """``total`` tokens shared among ``texts`` in proportion to their length; the shares sum to ``total``."""
    if not texts:
        return []
    weights = [max(len(text), 1) for text in texts]  # an empty completion still cost its end-of-sequence token
    scale = sum(weights)
    exact = [total * weight / scale for weight in weights]
    shares = [int(value) for value in exact]
    order = sorted(range(len(texts)), key=lambda index: (shares[index] - exact[index], index))
    for index in order[: total - sum(shares)]:
        shares[index] += 1
    return shares


def choice_token_counts(choices: Sequence[Mapping[str, Any]], total: int) -> tuple[list[int], bool]:
    """(count per choice, whether the counts are estimates) under the module's rule."""
    if len(choices) == 1:
        return [total], False
    ids = [choice.get("token_ids") for choice in choices]
    if all(isinstance(tokens, list) for tokens in ids):
        counts = [len(tokens) for tokens in ids]  # type: ignore[arg-type]
        if sum(counts) == total or not total:
            return counts, False
    texts = [str((choice.get("message") or {}).get("content") or choice.get("text") or "") for choice in choices]
    return split_total(total, texts), True

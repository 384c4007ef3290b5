"""Prompt lengths in tokens, and the check that prompts fit, before a model loads.

Every in-process backend refuses a prompt that leaves no room to generate
(``engine.base.raise_if_too_long``), but only once its model is up: seconds with
transformers, half a minute with vLLM here, minutes for a large model. When a command knows
its prompts up front (``verify``, ``meta-verify``, the first round of ``prove``) the
tokenizer and the model's config alone can tell, in about a second, so ``create_engine``
checks them first. The count is the one the backends use (:func:`chat_token_ids`), and the
context is the one the chosen backend will have; where that cannot be known without
loading (a server's model), nothing is checked here and the server answers instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data.errors import InputError
from engine.base import ChatMessage, raise_if_too_long
from engine.config import EngineConfig
from engine.model_store import ModelSource

DEFAULT_CONTEXT = 2048
"""What the transformers backend assumes of a model whose config states no context length."""


def chat_token_ids(tokenizer: Any, messages: Sequence[dict[str, str]], model: str) -> list[int]:
    """The prompt's token ids: the chat template with the generation prompt, no extra special tokens."""
    try:
        rendered = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
    except ValueError as error:  # transformers raises ValueError when the tokenizer has no chat template
        raise InputError(f"model {model!r} has no chat template, so it cannot take chat prompts: {error}") from None
    return list(tokenizer(rendered, add_special_tokens=False)["input_ids"])


def transformers_context(model_config: Any) -> int:
    """The transformers backend's context: the model's position limit, else :data:`DEFAULT_CONTEXT`."""
    return int(getattr(model_config, "max_position_embeddings", 0) or 0) or DEFAULT_CONTEXT


def vllm_context(model_config: Any, max_model_len: int) -> int:
    """An upper bound of the vLLM backend's context: ``max_model_len`` when set, else the model's limit.

    vLLM derives the limit from several config keys and RoPE scaling; taking the largest of
    them can only let a too-long prompt through to vLLM's own check, never refuse one that fits.
    """
    if max_model_len:
        return max_model_len
    keys = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "max_sequence_length", "model_max_length")
    limit = max((int(getattr(model_config, key, 0) or 0) for key in keys), default=0)
    scaling = getattr(model_config, "rope_scaling", None) or {}
    factor = float(scaling.get("factor", 1.0) or 1.0) if isinstance(scaling, dict) else 1.0
    return int(limit * max(factor, 1.0)) or DEFAULT_CONTEXT


def load_tokenizer_and_config(source: ModelSource) -> tuple[Any, Any]:
    from transformers import AutoConfig, AutoTokenizer

    location, extra = source.path, {}
    if source.kind == "gguf":
        location, extra = str(Path(source.path).parent), {"gguf_file": Path(source.path).name}
    return AutoTokenizer.from_pretrained(location, **extra), AutoConfig.from_pretrained(location, **extra)


def check_prompts_fit(config: EngineConfig, backend: str, source: ModelSource, prompts: Sequence[Sequence[ChatMessage]]) -> None:
    """Raise ``PromptTooLongError`` naming the first prompt that leaves ``backend`` no room to generate."""
    if not prompts or backend not in ("transformers", "vllm"):
        return
    try:
        tokenizer, model_config = load_tokenizer_and_config(source)
    except (OSError, ValueError):
        return  # the backend's own load reports an unloadable model, with its full reason
    context = transformers_context(model_config) if backend == "transformers" else vllm_context(model_config, config.max_model_len)
    lengths = [len(chat_token_ids(tokenizer, [message.to_dict() for message in prompt], source.name)) for prompt in prompts]
    raise_if_too_long(lengths, context)

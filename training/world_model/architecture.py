"""The world model's network: transformers' Llama decoder, sized by ``ArchitectureSettings``, freshly initialised.

Nothing about it is special: saved with ``save_pretrained`` it is an ordinary Llama checkpoint
that transformers, vLLM and TRL load by path.
"""

from __future__ import annotations

from typing import Any

from training.world_model.config import ArchitectureSettings


def llama_config(settings: ArchitectureSettings, tokenizer: Any) -> Any:
    from transformers import LlamaConfig

    end = tokenizer.eos_token_id
    return LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=settings.hidden_size, intermediate_size=settings.intermediate_size,
        num_hidden_layers=settings.layers, num_attention_heads=settings.heads, num_key_value_heads=settings.kv_heads,
        max_position_embeddings=settings.max_position_embeddings,
        rope_parameters={"rope_type": "default", "rope_theta": settings.rope_theta},
        tie_word_embeddings=settings.tie_embeddings, bos_token_id=None, eos_token_id=end,
        pad_token_id=tokenizer.pad_token_id, dtype="float32",
    )


def new_model(settings: ArchitectureSettings, tokenizer: Any, seed: int) -> Any:
    """A ``LlamaForCausalLM`` with weights drawn from ``seed``; its generation config stops at the tokenizer's end token."""
    from transformers import GenerationConfig, LlamaForCausalLM, set_seed

    set_seed(seed)
    model = LlamaForCausalLM(llama_config(settings, tokenizer))
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return model


def parameter_count(model: Any) -> int:
    return sum(parameter.numel() for parameter in model.parameters())

"""The world model's network: transformers' Llama decoder, sized by ``ArchitectureSettings``, freshly initialised
or continued from a world-model checkpoint (``init_model``) whose shape the settings must describe.

Nothing about it is special: saved with ``save_pretrained`` it is an ordinary Llama checkpoint
that transformers, vLLM and TRL load by path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from data.errors import InputError
from training.world_model.config import ArchitectureSettings

# ArchitectureSettings field -> the name transformers' LlamaConfig writes into config.json
CHECKPOINT_FIELDS = {"hidden_size": "hidden_size", "layers": "num_hidden_layers", "heads": "num_attention_heads",
                     "kv_heads": "num_key_value_heads", "intermediate_size": "intermediate_size",
                     "max_position_embeddings": "max_position_embeddings", "tie_embeddings": "tie_word_embeddings"}


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


def checked_init_model(settings: ArchitectureSettings, checkpoint: Path) -> Path:
    """``checkpoint`` if it is a world-model checkpoint (config.json and tokenizer.json) of the shape ``settings``
    describe; else an InputError naming what differs. Reads JSON only: nothing heavy runs before it."""
    config_file = checkpoint / "config.json"
    if not config_file.is_file() or not (checkpoint / "tokenizer.json").is_file():
        raise InputError(f"init_model {checkpoint} is not a world-model checkpoint (it needs config.json and tokenizer.json)")
    try:
        written = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read {config_file}: {error}") from None
    differing = [f"{name} {getattr(settings, name)} (it has {written.get(key)})" for name, key in CHECKPOINT_FIELDS.items()
                 if written.get(key) != getattr(settings, name)]
    if differing:
        raise InputError(f"[architecture] does not describe init_model {checkpoint}: " + ", ".join(differing))
    return checkpoint


def init_checkpoint(settings: ArchitectureSettings, init_model: str) -> Path | None:
    """The checkpoint ``init_model`` names (``world-model``: the bundled one), checked against ``settings``; None for a
    run from fresh weights."""
    if not init_model:
        return None
    from engine.model_store import WORLD_MODEL, bundled_world_model

    path = bundled_world_model() if init_model == WORLD_MODEL else Path(init_model).expanduser()
    return checked_init_model(settings, path)


def continued_model(checkpoint: Path) -> Any:
    """The ``LlamaForCausalLM`` saved in ``checkpoint``, in float32 (training's autocast decides the precision)."""
    from transformers import LlamaForCausalLM

    return LlamaForCausalLM.from_pretrained(str(checkpoint), dtype="float32")


def parameter_count(model: Any) -> int:
    return sum(parameter.numel() for parameter in model.parameters())

"""Build the engine a config names; resolve ``auto`` and check the model before any heavy import."""

from __future__ import annotations

from collections.abc import Sequence

from data.errors import InputError
from engine.auto import Workload, choose_backend
from engine.base import ChatMessage, Engine
from engine.config import EngineConfig
from engine.devices import cuda_available
from engine.model_store import ensure_checkpoint, locate
from engine.prompt_fit import check_prompts_fit


def resolved_backend(config: EngineConfig, workload: Workload) -> str:
    """The backend to build: the configured one, or what ``auto`` picks for this workload."""
    if config.backend != "auto":
        return config.backend
    if config.base_urls:
        return "openai"
    gpu = config.device == "cuda" or (config.device == "auto" and cuda_available())
    return choose_backend(config, workload, gpu=gpu)


def create_engine(config: EngineConfig, workload: Workload, prompts: Sequence[Sequence[ChatMessage]] = ()) -> Engine:
    """Construct the backend; errors about the model or install come out as ProofsmithError.

    ``prompts``, when the caller knows them all before the first call, are checked against
    the model's context with its tokenizer alone, before any weights load (``engine.prompt_fit``).
    """
    backend = resolved_backend(config, workload)
    if backend == "openai":
        from engine.openai_backend import OpenAIEngine

        return OpenAIEngine(config)
    if config.base_urls:
        raise InputError(f"--base-url is only used by the openai engine, not {backend}")
    locate(config.model)  # a missing path fails here, before torch or vLLM load
    if prompts:
        check_prompts_fit(config, backend, ensure_checkpoint(config.model), prompts)
    if backend == "vllm":
        from engine.vllm_backend import VLLMEngine

        return VLLMEngine(config)
    from engine.transformers_backend import TransformersEngine

    return TransformersEngine(config)

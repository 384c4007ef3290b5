"""The default backend: Hugging Face transformers ``generate`` on CPU or GPU.

Batched with left padding and the model's chat template. Each request's ``n`` samples are
separate rows, so requests with different ``n`` share a batch; rows are grouped by
sampling settings (one ``generate`` call takes one config) and sorted by prompt length to
limit padding. Deliberate simplification: a seed applies to a whole micro-batch (derived
from the seeds of the rows in it), so a call is reproducible for the same requests, but a
row's sample depends on its batch-mates; vLLM seeds each request on its own.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data.errors import ModelNotFoundError
from engine.base import Completion, GenerationRequest, GenerationResult, raise_if_too_long
from engine.config import EngineConfig
from engine.devices import pick_device, pick_dtype
from engine.model_store import ModelSource, ensure_checkpoint
from engine.progress import GenerationProgress
from engine.prompt_fit import chat_token_ids, transformers_context

logger = logging.getLogger(__name__)


def load_model(source: ModelSource, device: str, dtype: Any) -> tuple[Any, Any]:
    """Load (model, tokenizer) from a checkpoint directory, a GGUF file or a Hub id."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    location, extra = source.path, {}
    if source.kind == "gguf":
        location, extra = str(Path(source.path).parent), {"gguf_file": Path(source.path).name}
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, **extra)
        model = AutoModelForCausalLM.from_pretrained(location, dtype=dtype, **extra)
    except OSError as error:
        if source.kind == "hub":
            raise ModelNotFoundError(
                f"cannot load model {source.name!r}: not a local path, and the Hub has no such model or is unreachable"
            ) from error
        raise ModelNotFoundError(f"cannot load model from {source.path}: {error}") from error
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model.to(device).eval(), tokenizer


def end_of_sequence_ids(model: Any, tokenizer: Any) -> set[int]:
    """Every token that ends a turn: the generation config may list several (e.g. Qwen's two)."""
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = set(configured if isinstance(configured, list) else [configured] if configured is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids


def token_counter(progress: GenerationProgress, end_ids: set[int]) -> Any:
    """A stopping criterion that never stops: it counts each decoding step's new tokens into ``progress``.

    ``generate`` calls it after every step with the sequences so far; a row whose last
    token ends its turn is done and stops counting (its later pad tokens are not work).
    """
    import torch
    from transformers import StoppingCriteria

    class CountTokens(StoppingCriteria):
        def __init__(self) -> None:
            self.finished: Any = None
            self.end_ids = torch.tensor(sorted(end_ids))

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            # input_ids: [rows, prompt + generated so far]
            running = ~self.finished if self.finished is not None else torch.ones(len(input_ids), dtype=torch.bool)
            progress.add(tokens=int(running.sum()))
            ended = torch.isin(input_ids[:, -1], self.end_ids.to(input_ids.device)).cpu()
            self.finished = ended if self.finished is None else self.finished | ended
            return torch.zeros(len(input_ids), dtype=torch.bool, device=input_ids.device)

    return CountTokens()


class TransformersEngine:
    name = "transformers"

    def __init__(self, config: EngineConfig) -> None:
        started = time.perf_counter()
        source = ensure_checkpoint(config.model)
        self.model_path = source.path
        self.model = source.name
        self.device = pick_device(config.device)
        self.batch_size = config.batch_size
        self._model, self._tokenizer = load_model(source, self.device, pick_dtype(config.dtype, self.device))
        self.context_length = transformers_context(self._model.config)
        self.eos_ids = end_of_sequence_ids(self._model, self._tokenizer)
        self.load_time_s = time.perf_counter() - started
        logger.info("loaded %s on %s in %.1f s", source.path, self.device, self.load_time_s)

    @classmethod
    def around(cls, model: Any, tokenizer: Any, name: str, batch_size: int = 32) -> TransformersEngine:
        """An engine on a model that is already loaded, e.g. the policy being trained (which stays shared)."""
        import copy

        engine = cls.__new__(cls)
        engine.model_path, engine.model, engine.batch_size = "", name, batch_size
        engine.device = str(next(model.parameters()).device)
        engine._model = model
        engine._tokenizer = copy.copy(tokenizer)  # our left padding must not change the trainer's tokenizer
        engine._tokenizer.padding_side = "left"
        if engine._tokenizer.pad_token_id is None:
            engine._tokenizer.pad_token = engine._tokenizer.eos_token
        engine.context_length = transformers_context(model.config)
        engine.eos_ids = end_of_sequence_ids(model, engine._tokenizer)
        engine.load_time_s = 0.0
        return engine

    def prompt_ids(self, request: GenerationRequest) -> list[int]:
        return chat_token_ids(self._tokenizer, request.message_dicts(), self.model)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        started = time.perf_counter()
        prompts = [self.prompt_ids(request) for request in requests]
        raise_if_too_long([len(ids) for ids in prompts], self.context_length)
        groups: dict[tuple[Any, ...], list[tuple[int, int]]] = defaultdict(list)
        for index, request in enumerate(requests):
            key = (request.temperature, request.top_p, request.max_tokens, request.stop)
            groups[key].extend((index, sample) for sample in range(request.n))
        completions: dict[tuple[int, int], Completion] = {}
        finished_at = [0.0] * len(requests)
        samples_left = [request.n for request in requests]
        with GenerationProgress(self.name, len(requests)) as progress:
            for key, rows in groups.items():
                rows.sort(key=lambda row: len(prompts[row[0]]))
                for start in range(0, len(rows), self.batch_size):
                    chunk = rows[start: start + self.batch_size]
                    seeds = [(requests[index].seed, sample) for index, sample in chunk if requests[index].seed is not None]
                    outputs = self._generate_chunk(
                        [prompts[index] for index, _ in chunk], requests[chunk[0][0]], seeds, progress
                    )
                    now = time.perf_counter() - started
                    for row, completion in zip(chunk, outputs):
                        completions[row] = completion
                        finished_at[row[0]] = max(finished_at[row[0]], now)
                        samples_left[row[0]] -= 1
                    progress.add(requests=sum(1 for index in {index for index, _ in chunk} if samples_left[index] == 0))
        results = []
        for index, request in enumerate(requests):
            samples = tuple(completions[(index, sample)] for sample in range(request.n))
            results.append(
                GenerationResult(
                    samples,
                    prompt_tokens=len(prompts[index]),
                    completion_tokens=sum(sample.completion_tokens or 0 for sample in samples),
                    latency_s=finished_at[index],
                )
            )
        return results

    def _generate_chunk(
        self, prompts: list[list[int]], settings: GenerationRequest, seeds: list[tuple[int, int]],
        progress: GenerationProgress,
    ) -> list[Completion]:
        import torch

        batch = self._tokenizer.pad({"input_ids": prompts}, padding=True, return_tensors="pt").to(self.device)
        prompt_length = batch["input_ids"].shape[1]  # batch: [rows, prompt_length], left padded
        max_new = min(settings.max_tokens, self.context_length - max(len(ids) for ids in prompts))
        if seeds:
            # (seed, sample index) pairs: the chunks of one request with n > batch_size differ.
            torch.manual_seed(hash(tuple(seeds)) & 0x7FFFFFFF)
        sampling: dict[str, Any] = {"do_sample": settings.temperature > 0}
        if settings.temperature > 0:
            sampling.update(temperature=settings.temperature, top_p=settings.top_p, top_k=0)
        if settings.stop:
            sampling.update(stop_strings=list(settings.stop), tokenizer=self._tokenizer)
        if progress.active:
            sampling["stopping_criteria"] = [token_counter(progress, self.eos_ids | {self._tokenizer.pad_token_id})]
        with torch.inference_mode():
            output = self._model.generate(
                **batch,
                max_new_tokens=max_new,
                pad_token_id=self._tokenizer.pad_token_id,
                eos_token_id=sorted(self.eos_ids),
                **sampling,
            )
        generated = output[:, prompt_length:].tolist()  # [rows, new_tokens]
        return [self._to_completion(ids, settings.stop, max_new) for ids in generated]

    def _to_completion(self, ids: list[int], stop: tuple[str, ...], max_new: int) -> Completion:
        stop_ids = self.eos_ids | {self._tokenizer.pad_token_id}
        length = next((position for position, token in enumerate(ids) if token in stop_ids), len(ids))
        text = self._tokenizer.decode(ids[:length], skip_special_tokens=True, clean_up_tokenization_spaces=False)
        hits = [position for position in (text.find(string) for string in stop) if position >= 0]
        if hits:
            return Completion(text[: min(hits)], "stop", length)
        if length < len(ids) or length < max_new:
            return Completion(text, "stop", length)
        return Completion(text, "length", length)

    def close(self) -> None:
        self._model = None

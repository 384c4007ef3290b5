"""Async off-policy GRPO for any GRPO role: TRL's ``AsyncGRPOTrainer`` fed by our rollout pool.

TRL supplies the loss (PPO-clipped ratio against the servers' sampling logprobs, so one
clip covers both staleness and trainer/server mismatch), the optimizer, checkpoints and
logging. We supply the rollout worker (``training.async_rl.orchestrator``: a pool of vLLM
servers, the role's reward, version tags, the staleness bound) and the weight transfer
(``PoolWeightTransfer``: a safetensors folder each server reloads in place, see
``engine.weight_push``).

TRL's async trainer is written for GPUs; three things are adapted here so it runs on CPU,
all from outside TRL: its packed "tree" attention calls a FlashAttention-3 kernel fetched
from the Hub, replaced by ``segment_attention`` (the same arithmetic with torch's SDPA, one
segment at a time); it looks up the GPU's peak FLOPs for an MFU metric, which raises
without CUDA (the metric is off on CPU); and it defaults to bf16, set off on CPU.

One change applies everywhere: accelerate's data loaders read one batch ahead of the one
they hand over, so a batch would leave the rollout queue one optimizer step (and so one
weight push) before it is trained. The staleness gate would pass rollouts that are a
version older than the bound by the time they train, and lockstep (which generates a
step's groups only after the previous push) would wait forever for that extra batch. The
trainer iterates the plain loader instead (``QueueReadingTrainer``), so a batch leaves the
queue when its step starts. That needs one trainer process, and so does one rollout worker
feeding one weight push per step: a launch with several processes is refused before
anything loads (the synchronous trainer takes several; async scales through its servers).

The run directory is ``training.trainers.setup``'s plus ``rollouts.jsonl`` (every scored rollout)
and ``trained.jsonl`` (every sample the trainer took, with its version and the trainer's).
"""

from __future__ import annotations

import logging
import os
import queue
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from engine.weight_push import WeightFolders
from training.role_data.rows import TrainingRow
from training.async_rl.server_pool import ServerPool, served_model
from training.config import TrainConfig
from training.trainers.setup import common_arguments

logger = logging.getLogger(__name__)
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # we use TRL's experimental async trainer knowingly


def segment_attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, *, tree_kv_index: Any,
                      tree_cu_seqlens_q: Any, tree_cu_seqlens_k: Any, tree_max_seqlen_q: int, tree_max_seqlen_k: int,
                      scaling: float | None = None, sliding_window: int | None = None, softcap: float | None = None,
                      **_: Any) -> tuple[Any, None]:
    """TRL's tree attention on CPU: each segment's queries attend causally to its own key path.

    Inputs are (1, heads, tokens, dim). ``tree_kv_index`` gathers each segment's keys (a shared
    prompt prefix, then its own tokens); the causal mask is aligned to the end of the keys, as
    FlashAttention's varlen kernel aligns it when a segment has fewer queries than keys.
    """
    import torch
    import torch.nn.functional as functional

    if softcap:
        raise NotImplementedError("segment_attention has no logit softcapping")
    queries, keys, values = (tensor.transpose(1, 2)[0] for tensor in (query, key, value))  # (tokens, heads, dim)
    keys, values = keys.index_select(0, tree_kv_index), values.index_select(0, tree_kv_index)
    output = torch.empty_like(queries)
    query_bounds, key_bounds = tree_cu_seqlens_q.tolist(), tree_cu_seqlens_k.tolist()
    for segment in range(len(query_bounds) - 1):
        q_start, q_end = query_bounds[segment], query_bounds[segment + 1]
        k_start, k_end = key_bounds[segment], key_bounds[segment + 1]
        if q_end == q_start:
            continue
        query_positions = torch.arange(q_end - q_start)[:, None] + (k_end - k_start) - (q_end - q_start)
        key_positions = torch.arange(k_end - k_start)[None, :]
        allowed = key_positions <= query_positions
        if sliding_window:
            allowed &= key_positions > query_positions - sliding_window
        attended = functional.scaled_dot_product_attention(
            queries[q_start:q_end].transpose(0, 1), keys[k_start:k_end].transpose(0, 1), values[k_start:k_end].transpose(0, 1),
            attn_mask=allowed, scale=scaling, enable_gqa=True,
        )
        output[q_start:q_end] = attended.transpose(0, 1)
    return output.unsqueeze(0), None


def queue_reading_trainer() -> type:
    """TRL's ``AsyncGRPOTrainer`` that takes a batch from the rollout queue only when its step starts (one process)."""
    from trl.experimental.async_grpo import AsyncGRPOTrainer

    class QueueReadingTrainer(AsyncGRPOTrainer):
        def get_train_dataloader(self) -> Any:
            loader = super().get_train_dataloader()
            # The base loader reads nothing ahead; TRL forces ignore_data_skip, so no resume replay needs the wrapper.
            return loader.base_dataloader

    return QueueReadingTrainer


def adapt_to_cpu() -> None:
    """Point TRL's async trainer at ``segment_attention`` and switch off its GPU-only MFU lookup."""
    from trl.experimental.async_grpo import async_grpo_trainer, packing

    packing.tree_attention = segment_attention  # read when the trainer registers its attention
    async_grpo_trainer.get_peak_flops_per_device = lambda *args, **kwargs: None


class PoolWeightTransfer:
    """TRL's ``WeightTransferProtocol`` over the pool: write the weights once, every live server reloads them."""

    def __init__(self, pool: ServerPool, folders: WeightFolders, metrics: queue.Queue, startup_timeout_s: float = 300.0) -> None:
        self.pool, self.folders, self.metrics, self.startup_timeout_s = pool, folders, metrics, startup_timeout_s
        self.seconds_since_read = 0.0

    def init_weight_transfer(self) -> None:
        self.pool.wait_all_healthy(self.startup_timeout_s)

    def pause(self) -> None:
        """Nothing here: each server is paused around its own reload (``push_to_server``)."""

    def send_weights(self, iterator: Any) -> None:
        started = time.perf_counter()
        version = self.pool.version + 1
        folder = self.folders.write(iterator, version)
        written = time.perf_counter() - started
        timings = self.pool.push(folder, version)
        if not timings:
            logger.warning("no live server took weights version %d; servers that come back get it", version)
        elapsed = time.perf_counter() - started
        self.seconds_since_read += elapsed
        self.metrics.put({"time/weight_sync_s": elapsed, "weight_sync/write_s": written,
                          **({"weight_sync/reload_s": sum(timings.values()) / len(timings)} if timings else {})})

    def resume(self) -> None:
        """Nothing here: see ``pause``."""

    def destroy(self) -> None:
        self.folders.remove()


def start_local_servers(config: TrainConfig, model_path: str, run_dir: Path) -> list[Any]:
    """The pool's servers, launched side by side (a start is mostly one core importing vLLM) and then waited for;
    if one fails to start, all are stopped."""
    from engine.vllm_server import START_TIMEOUT_S, VLLMServer, free_ports

    settings = config.async_rl
    # processed logprobs: after temperature, as the trainer computes them for the importance ratio.
    servers = [VLLMServer(model=model_path, weight_reload=True, dtype="float32", kv_cache_gb=settings.server_kv_cache_gb,
                          max_model_len=settings.server_max_model_len, log_path=run_dir / f"server{number}.log", port=port,
                          extra_args=("--logprobs-mode", "processed_logprobs"), stop_with_parent=True)
               for number, port in enumerate(free_ports(settings.local_servers))]
    try:
        for server in servers:
            server.launch()
        for server in servers:
            server.wait_ready(START_TIMEOUT_S)
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


def first_new_group(rollouts: Path) -> int:
    """The group number after every group an earlier run of this directory rolled out (0 for a new run).

    A resumed run starts past them, so no rollout of the killed run is trained again and group
    numbers stay unique across the run's logs; prompts continue from there in the seeded epoch
    order (``RolloutOrchestrator.row_order``). A line cut short by a kill is skipped (``data.jsonl``).
    """
    from data.jsonl import read_jsonl

    return max((int(record["group"]) for record in read_jsonl(rollouts)), default=-1) + 1


def pool_reward(role: str, config: TrainConfig, urls: list[str], model_name: str,
                with_meta_tasks: bool = False) -> tuple[Any, dict[str, Any]]:
    """The role's reward, scoring through the pool (policy), [scorer] (engine) or a frozen copy of
    the starting model (reference: the pool's weights move); and the separate engines it opened.
    ``with_meta_tasks``: a verifier's data holds meta-verification prompts too (the enhanced verifier)."""
    from engine.config import EngineConfig
    from engine.openai_backend import OpenAIEngine
    from training.rewards.scoring_engines import open_scoring_engines, scoring_sources, stage_clients
    from training.trainers.grpo import role_reward

    # 8 retries with backoff 1, 2, 4, ... 30 s wait ~2 min: a restarting server took 50-117 s on this CPU.
    pool_engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=urls, model=model_name, max_retries=8,
                                            retry_backoff_s=1.0, max_concurrency=64))
    sources = scoring_sources(role, config)
    engines = open_scoring_engines(config, set(sources.values()), config.grpo.group_size, reference_in_trainer=False)
    clients = stage_clients(sources, {"policy": pool_engine, **engines}, config.rewards.retries)
    return role_reward(role, config, clients, with_meta_tasks), engines


def trainer_args(config: TrainConfig, first_server: str) -> Any:
    from trl.experimental.async_grpo import AsyncGRPOConfig

    grpo, settings, rollouts = config.grpo, config.async_rl, config.rollouts
    return AsyncGRPOConfig(
        **common_arguments(config, grpo.save_steps),
        per_device_train_batch_size=grpo.group_size * grpo.prompts_per_step,
        gradient_accumulation_steps=grpo.gradient_accumulation_steps, num_generations=grpo.group_size,
        max_completion_length=rollouts.max_tokens, temperature=rollouts.temperature, learning_rate=grpo.learning_rate,
        max_steps=grpo.max_steps, epsilon=grpo.epsilon, max_staleness=settings.max_off_policy_steps,
        weight_sync_steps=settings.weight_sync_steps,
        token_budget=0,  # fixed batches of per_device_train_batch_size samples (a budget would ask the server its length)
        vllm_server_base_url=first_server,  # only TRL's NCCL transfer talks to it
        heartbeat_stale_after_s=max(600.0, settings.request_timeout_s),
    )


def run_async_grpo(role: str, config: TrainConfig, rows: list[TrainingRow]) -> Path:
    """Train ``role`` off-policy from the pool (resuming from the last checkpoint); returns the final model."""
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer

    from training.async_rl.orchestrator import RolloutOrchestrator
    from training.rewards.scoring_engines import close_all
    from training.processes import refuse_async_on_several_processes
    from training.trainers.setup import (
        finish,
        grpo_dataset_records,
        lora_config,
        metrics_callback,
        model_location,
        resume,
        save_final,
    )

    run_dir, settings = Path(config.run_dir), config.async_rl
    refuse_async_on_several_processes()
    location = model_location(config.model.name)
    tokenizer = AutoTokenizer.from_pretrained(location)
    records = grpo_dataset_records(role, config, rows, tokenizer)
    if not torch.cuda.is_available():
        adapt_to_cpu()
    servers = [] if settings.servers else start_local_servers(config, location, run_dir)
    scoring_engines: dict[str, Any] = {}
    try:
        urls = settings.servers or [server.base_url for server in servers]
        pool = ServerPool(urls, push_timeout_s=settings.request_timeout_s)
        pool.wait_all_healthy(300.0)
        model_name = served_model(urls[0])
        reward, scoring_engines = pool_reward(role, config, urls, model_name, any(record["task"] != role for record in records))
        worker = RolloutOrchestrator(records, tokenizer, pool, reward, config, model_name=model_name,
                                     first_group=first_new_group(run_dir / "rollouts.jsonl"))
        transfer = None if settings.weight_transfer == "nccl" else PoolWeightTransfer(
            pool, WeightFolders(Path(settings.push_dir) / run_dir.name if settings.push_dir else None), worker.metrics_queue)
        trainer_class = queue_reading_trainer()
        trainer = trainer_class(
            model=location, args=trainer_args(config, urls[0]), train_dataset=Dataset.from_list(records),
            processing_class=tokenizer, peft_config=lora_config(config), rollout_worker=worker, weight_transfer=transfer,
            callbacks=[StepTimer(worker.rollout_buffer, transfer, worker.metrics_queue), metrics_callback(config)],
        )
        resume(trainer, config, f"train {role} (async)")
        save_final(trainer, tokenizer, run_dir / "final", config.prompts_dir)
    finally:
        close_all(scoring_engines)
        for server in servers:
            server.stop()
    return finish(config, f"async GRPO {role}")


class StepTimer(TrainerCallback):
    """Splits each optimizer step's wall time into waiting for rollouts, weight sync and training.

    The interval between two step ends holds the previous step's weight sync, the time the
    trainer sat waiting on the rollout queue, and the rest (forward, backward, optimizer).
    """

    def __init__(self, rollouts: Any, transfer: PoolWeightTransfer | None, metrics: queue.Queue) -> None:
        self.rollouts, self.transfer, self.metrics = rollouts, transfer, metrics
        self.last_end: float | None = None

    def on_train_begin(self, *_: Any, **__: Any) -> None:
        self.last_end = time.perf_counter()
        self.rollouts.wait_s = 0.0
        if self.transfer is not None:
            self.transfer.seconds_since_read = 0.0

    def on_step_end(self, *_: Any, **__: Any) -> None:
        now = time.perf_counter()
        step = now - (self.last_end if self.last_end is not None else now)
        waited, synced = self.rollouts.wait_s, self.transfer.seconds_since_read if self.transfer is not None else 0.0
        self.rollouts.wait_s = 0.0
        if self.transfer is not None:
            self.transfer.seconds_since_read = 0.0
        self.metrics.put({"time/step_s": step, "time/wait_s": waited, "time/train_s": max(0.0, step - waited - synced)})
        self.last_end = now

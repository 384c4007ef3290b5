"""Streams scored rollouts of one role from the server pool to TRL's ``AsyncGRPOTrainer``.

It implements TRL's ``RolloutWorkerProtocol``: a background thread runs an asyncio loop
that keeps ``max_inflight_groups`` prompt groups in flight across the pool. For each group
it asks one server for ``group_size`` completions of the prompt's token ids (with their
sampling logprobs, the behaviour policy of TRL's importance ratio), scores them with the
role's reward (handed the record's columns, as TRL's synchronous trainer hands them; a
scoring stage whose source is ``policy`` calls the same pool, so the policy plays every
role), turns the rewards into group-normalised advantages, and queues one sample per
scored completion, tagged with the policy version the server held when the request left.

Contracts:
- Staleness: ``VersionedQueue.get`` hands the trainer only samples at most
  ``max_off_policy_steps`` versions behind the trainer's; older ones are dropped there and
  counted (``off_policy/dropped``). A version is one weight push.
- Nothing lost or trained twice: a group whose generation fails (server died) is retried
  whole on another server or once one comes back; a group is queued only once, all its
  samples together, contiguously. A rollout whose scoring call still fails after retries
  (or whose verification prompt does not fit) is never scored 0: it stays in its group
  with no reward and advantage 0, so it trains nothing and is left out of the group's
  mean and spread. Groups stay whole so every step's batch is whole groups; lockstep
  counts on that.
- Order: group ``g`` rolls out row ``row_order(g)``: each pass over the records (an epoch)
  visits every row once, in an order shuffled with ``grpo.seed`` and the epoch number, as
  TRL's sampler does. It is a function of the group number alone, so a resumed run (whose
  groups continue from the checkpoint's) rolls out exactly the rows an uninterrupted one would.
- Every queued sample is appended to ``rollouts.jsonl`` and every sample handed to the
  trainer to ``trained.jsonl`` (flushed), so a run can be audited afterwards.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import queue
import random
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from data.errors import EngineUnavailableError
from data.jsonl import JsonlWriter
from training.async_rl.server_pool import ServerPool
from training.config import TrainConfig
from training.rewards.role_rewards import RoleReward

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=2)  # groups in flight may straddle two epochs
def epoch_order(rows: int, seed: int, epoch: int) -> tuple[int, ...]:
    """The rows of one epoch, shuffled: a permutation of ``range(rows)`` fixed by ``seed`` and ``epoch``."""
    order = list(range(rows))
    random.Random(f"{seed}/{epoch}").shuffle(order)
    return tuple(order)


def group_advantages(rewards: Sequence[float], scale: bool = True) -> list[float]:
    """GRPO advantages of one group: reward minus the group mean, divided by the group's std when ``scale``."""
    mean = statistics.fmean(rewards)
    spread = statistics.stdev(rewards) if scale and len(rewards) > 1 else 1.0
    return [(reward - mean) / (spread + 1e-4) if scale else reward - mean for reward in rewards]


class VersionedQueue(queue.Queue):
    """The rollout queue the trainer drains; drops samples older than the staleness bound as they are taken."""

    def __init__(self, maxsize: int, max_off_policy_steps: int, current_version: Callable[[], int],
                 metrics: queue.Queue, trained_log: JsonlWriter | None = None) -> None:
        super().__init__(maxsize)
        self.max_off_policy_steps = max_off_policy_steps
        self.current_version = current_version
        self.metrics = metrics
        self.trained_log = trained_log
        self.dropped = 0
        self.wait_s = 0.0
        """Seconds the trainer spent blocked here (reset by whoever reads it)."""
        self.index_of: dict[int, int] = {}
        """Completion index within its group of each queued sample (TRL's sample record has no field for it)."""

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        while True:
            started = time.perf_counter()
            try:
                sample = super().get(block, timeout)
            finally:
                self.wait_s += time.perf_counter() - started
            index = self.index_of.pop(id(sample), -1)
            version = self.current_version()
            staleness = version - sample.model_version
            if staleness > self.max_off_policy_steps:
                self.dropped += 1
                logger.info("dropped a rollout %d versions old (bound %d)", staleness, self.max_off_policy_steps)
                continue
            self.metrics.put({"off_policy/mean": float(staleness), "off_policy/max": float(staleness)})
            if self.trained_log is not None:
                self.trained_log.write({"group": sample.group_id, "index": index,
                                        "model_version": sample.model_version, "trainer_version": version})
            return sample


class RolloutOrchestrator:
    def __init__(self, records: Sequence[dict[str, Any]], tokenizer: Any, pool: ServerPool, reward: RoleReward,
                 config: TrainConfig, *, model_name: str, first_group: int = 0) -> None:
        """Roll out ``records`` on ``pool`` as ``config`` says: ``[grpo]`` (group size, advantage scaling,
        seed), ``[rollouts]`` (sampling), ``[async_rl]`` (in-flight groups, staleness bound, queue,
        probes, timeouts, lockstep); logs go to ``config.run_dir``. Group numbers start at ``first_group``."""
        if not records:
            raise ValueError("no prompts to roll out")
        grpo, settings, run_dir = config.grpo, config.async_rl, Path(config.run_dir)
        self.records, self.tokenizer, self.pool, self.reward = list(records), tokenizer, pool, reward
        self.group_size, self.sampling = grpo.group_size, config.rollouts
        self.max_inflight_groups, self.probe_s, self.request_timeout_s = (
            settings.max_inflight_groups, settings.server_probe_s, settings.request_timeout_s)
        self.scale_rewards, self.seed = grpo.scale_rewards == "group", grpo.seed
        self.lockstep_groups = (grpo.prompts_per_step * grpo.gradient_accumulation_steps * settings.weight_sync_steps
                                if settings.lockstep else 0)
        """When > 0: launch exactly this many groups per policy version, after its push (synchronous RL)."""
        self._launched: dict[int, int] = {}
        """Lockstep: groups launched at each version."""
        self.next_group = first_group
        self.version = 0
        self.metrics_queue: queue.Queue = queue.Queue()
        self.rollout_log, self.trained_log = JsonlWriter(run_dir / "rollouts.jsonl"), JsonlWriter(run_dir / "trained.jsonl")
        self.rollout_buffer = VersionedQueue(settings.queue_size, settings.max_off_policy_steps, lambda: self.version,
                                             self.metrics_queue, self.trained_log)
        self.model_name = model_name
        """The name the pool's servers serve the policy under."""
        self._prompt_ids = [self._encode(record["prompt"]) for record in self.records]
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._last_progress = time.monotonic()
        self._dropped_reported = 0

    def row_order(self, group: int) -> int:
        """The record row that group number ``group`` rolls out (see the module's "Order")."""
        epoch, position = divmod(group, len(self.records))
        return epoch_order(len(self.records), self.seed, epoch)[position]

    def _encode(self, messages: Any) -> list[int]:
        encoded = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        return list(encoded["input_ids"] if hasattr(encoded, "keys") else encoded)

    # TRL's RolloutWorkerProtocol

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="rollout-orchestrator", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
        self.rollout_log.close()
        self.trained_log.close()

    def update_model_version(self, model_version: int) -> None:
        self.version = model_version
        dropped = self.rollout_buffer.dropped
        self.metrics_queue.put({"off_policy/dropped": float(dropped - self._dropped_reported),
                                "weight_sync/version": float(model_version),
                                "pool/live_servers": float(len(self.pool.live()))})
        self._dropped_reported = dropped

    def check_health(self, stale_after_s: float) -> None:
        if self._failure is not None:
            raise EngineUnavailableError(f"rollouts stopped: {type(self._failure).__name__}: {self._failure}") from self._failure
        if self._thread is None or not self._thread.is_alive():
            raise EngineUnavailableError("the rollout orchestrator is not running")
        if time.monotonic() - self._last_progress > stale_after_s:
            raise EngineUnavailableError(f"no rollout finished in {stale_after_s:.0f} s (live servers: {len(self.pool.live())})")

    # the loop

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as error:  # surfaced to the trainer by check_health
            logger.error("rollout orchestrator failed: %s", error)
            self._failure = error

    async def _run(self) -> None:
        import httpx

        async with httpx.AsyncClient(timeout=self.request_timeout_s) as client:
            in_flight: set[asyncio.Task] = set()
            while not self._stop.is_set():
                while len(in_flight) < self.max_inflight_groups and self._may_launch(self.version):
                    group = self.next_group
                    self.next_group += 1
                    in_flight.add(asyncio.create_task(self._group(client, group)))
                if not in_flight:  # lockstep, between a step's last group and the next push
                    await asyncio.sleep(0.02)
                    continue
                done, in_flight = await asyncio.wait(in_flight, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()
            for task in in_flight:
                task.cancel()

    def _may_launch(self, version: int) -> bool:
        """Always, unless in lockstep: then until this version has launched one step's groups (each comes back whole)."""
        if not self.lockstep_groups:
            return True
        if self._launched.get(version, 0) >= self.lockstep_groups:
            return False
        self._launched[version] = self._launched.get(version, 0) + 1
        return True

    async def _group(self, client: Any, group: int) -> None:
        """Generate, score and queue one prompt group, whole."""
        row = self.row_order(group)
        record, prompt_ids = self.records[row], self._prompt_ids[row]
        started = time.perf_counter()
        generated = await self._generate(client, prompt_ids, group)
        if generated is None:
            return
        version, choices = generated
        generate_s = time.perf_counter() - started
        texts = [choice["text"] for choice in choices]
        collected: dict[str, float] = {}
        started = time.perf_counter()
        # The record's columns, one per rollout, as TRL hands a dataset's columns to a reward function.
        columns = {name: [value] * len(texts) for name, value in record.items() if name != "prompt"}
        rewards = await self.reward([record["prompt"]] * len(texts), texts, **columns,
                                    log_metric=lambda name, value: collected.__setitem__(name, value))
        reward_s = time.perf_counter() - started
        scored = [reward for reward in rewards if reward is not None]
        scored_advantages = iter(group_advantages(scored, self.scale_rewards) if scored else [])
        advantages = [next(scored_advantages) if reward is not None else 0.0 for reward in rewards]
        spread = statistics.pstdev(scored) if len(scored) > 1 else 0.0
        self.metrics_queue.put({**collected, "time/generate_s": generate_s, "time/reward_s": reward_s,
                                "frac_reward_zero_std": float(spread == 0.0)})
        samples = [self._sample(record, prompt_ids, choice, reward, advantage, version, group, spread)
                   for choice, reward, advantage in zip(choices, rewards, advantages)]
        for index, (reward, sample) in enumerate(zip(rewards, samples)):
            self.rollout_log.write({"group": group, "index": index, "problem_row": row,
                                    "model_version": version, "reward": reward, "advantage": sample.advantage})
        # The whole group goes in at once, so groups never interleave in the queue.
        while not self._stop.is_set() and self.rollout_buffer.maxsize - self.rollout_buffer.qsize() < len(samples):
            await asyncio.sleep(0.2)  # the trainer is behind: hold this group (and so new launches) back
        if self._stop.is_set():
            return
        for index, sample in enumerate(samples):
            self.rollout_buffer.index_of[id(sample)] = index
            self.rollout_buffer.put_nowait(sample)
        self._last_progress = time.monotonic()

    async def _generate(self, client: Any, prompt_ids: list[int], group: int) -> tuple[int, list[dict[str, Any]]] | None:
        """(version at launch, choices) from the first server that answers; retried until one does."""
        import httpx

        body = {"model": self.model_name, "prompt": prompt_ids, "n": self.group_size, "max_tokens": self.sampling.max_tokens,
                "temperature": self.sampling.temperature, "top_p": self.sampling.top_p, "logprobs": 0, "return_token_ids": True,
                "seed": self.seed * 1_000_003 + group}
        while not self._stop.is_set():
            url = self.pool.pick()
            if url is None:
                url = await asyncio.to_thread(self.pool.wait_for_server, self.probe_s, self._stop)
                if url is None:
                    return None
            version = self.version
            try:
                response = await client.post(f"{url}/completions", json=body)
            except httpx.TransportError as error:
                self.pool.drop(url, f"{type(error).__name__}: {error}")
                continue
            if response.status_code >= 500:
                self.pool.drop(url, f"HTTP {response.status_code}")
                continue
            if response.status_code >= 400:
                raise EngineUnavailableError(f"{url} refused a rollout request: HTTP {response.status_code}: {response.text[:300]}")
            return version, response.json()["choices"]
        return None

    def _sample(self, record: dict[str, Any], prompt_ids: list[int], choice: dict[str, Any], reward: float | None,
                advantage: float, version: int, group: int, spread: float) -> Any:
        import numpy as np
        from trl.experimental.async_grpo.async_rollout_worker import RolloutSample

        completion_ids = list(choice["token_ids"])
        logprobs = [float(value) for value in choice["logprobs"]["token_logprobs"]]
        if len(logprobs) != len(completion_ids):
            raise EngineUnavailableError(f"server returned {len(logprobs)} logprobs for {len(completion_ids)} tokens")
        return RolloutSample(
            prompt=record["prompt"],
            completion=[{"role": "assistant", "content": choice["text"]}],
            input_ids=np.asarray(prompt_ids + completion_ids, dtype=np.int64),
            completion_mask=np.asarray([0] * len(prompt_ids) + [1] * len(completion_ids), dtype=np.int64),
            old_log_probs=np.asarray([0.0] * len(prompt_ids) + logprobs, dtype=np.float32),
            advantage=float(advantage),
            model_version=version,
            group_id=group,
            metrics={"reward": float("nan") if reward is None else float(reward), "reward_std": float(spread), "completion_tokens": float(len(completion_ids))},
            enqueued_at=time.time(),
        )

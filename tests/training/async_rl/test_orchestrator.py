"""The orchestrator's arithmetic, staleness gate, whole groups and lockstep quota.

The real pool and trainer are in test_async_train.py.
"""

from __future__ import annotations

import asyncio
import json
import math
import queue
from pathlib import Path

import numpy as np
import pytest
from trl.experimental.async_grpo.async_rollout_worker import RolloutSample

from data.jsonl import JsonlWriter
from engine.vllm_server import free_port
from training.async_rl.orchestrator import RolloutOrchestrator, VersionedQueue, group_advantages
from training.async_rl.server_pool import ServerPool
from training.config import AsyncSettings, GRPOSettings, SamplingSettings, TrainConfig


def sample(version: int, group: int = 0) -> RolloutSample:
    ids = np.asarray([1, 2, 3], dtype=np.int64)
    return RolloutSample(prompt=[], completion=[], input_ids=ids, completion_mask=np.asarray([0, 1, 1]),
                         old_log_probs=np.zeros(3, dtype=np.float32), advantage=0.0, model_version=version,
                         group_id=group, metrics={"reward": 0.0})


def test_group_advantages_center_and_scale_by_the_group() -> None:
    assert group_advantages([1.0, 0.0, 1.0, 0.0]) == pytest.approx([0.866, -0.866, 0.866, -0.866], abs=1e-3)
    assert group_advantages([1.0, 0.0], scale=False) == [0.5, -0.5]
    assert group_advantages([0.5, 0.5, 0.5]) == [0.0, 0.0, 0.0]  # equal rewards teach nothing
    assert group_advantages([0.7]) == [0.0]


def test_the_queue_drops_samples_beyond_the_bound_and_logs_what_it_hands_over(tmp_path: Path) -> None:
    trainer_version = {"now": 3}
    metrics: queue.Queue = queue.Queue()
    log = JsonlWriter(tmp_path / "trained.jsonl")
    rollouts = VersionedQueue(8, 1, lambda: trainer_version["now"], metrics, log)
    for version, group in ((1, 10), (2, 11), (3, 12), (1, 13)):
        item = sample(version, group)
        rollouts.index_of[id(item)] = group - 10
        rollouts.put(item)
    taken = [rollouts.get(timeout=1).group_id, rollouts.get(timeout=1).group_id]
    assert taken == [11, 12] and rollouts.dropped == 1  # version 1 is 2 behind version 3: over the bound of 1
    with pytest.raises(queue.Empty):
        rollouts.get(timeout=0.05)  # the last one (version 1) is dropped too, and nothing is left
    assert rollouts.dropped == 2 and rollouts.wait_s > 0
    staleness = [metrics.get_nowait() for _ in range(metrics.qsize())]
    assert staleness == [{"off_policy/mean": 1.0, "off_policy/max": 1.0}, {"off_policy/mean": 0.0, "off_policy/max": 0.0}]
    log.close()
    records = [json.loads(line) for line in (tmp_path / "trained.jsonl").read_text().splitlines()]
    assert records == [{"group": 11, "index": 1, "model_version": 2, "trainer_version": 3},
                       {"group": 12, "index": 2, "model_version": 3, "trainer_version": 3}]


def test_an_on_policy_bound_keeps_only_the_current_version() -> None:
    rollouts = VersionedQueue(4, 0, lambda: 2, queue.Queue())
    rollouts.put(sample(1))
    rollouts.put(sample(2))
    assert rollouts.get(timeout=1).model_version == 2 and rollouts.dropped == 1


class ScriptedTokenizer:
    def apply_chat_template(self, messages, add_generation_prompt: bool, tokenize: bool) -> list[int]:
        return [7, 8, 9]


def scripted_orchestrator(tmp_path: Path, rewards: list[float | None], lockstep: bool = False,
                          prompts_per_step: int = 1, record: dict | None = None,
                          calls: list[dict] | None = None, records: list[dict] | None = None,
                          seed: int = 0) -> RolloutOrchestrator:
    """An orchestrator whose server and reward are scripted (the real ones: test_async_train.py and
    test_async_verifier.py); the reward's keyword arguments go to ``calls``."""

    async def reward(prompts, completions, **columns):
        if calls is not None:
            calls.append({"prompts": prompts, "completions": completions, **columns})
        return rewards

    config = TrainConfig(
        run_dir=str(tmp_path), rollouts=SamplingSettings(max_tokens=4),
        grpo=GRPOSettings(group_size=len(rewards), prompts_per_step=prompts_per_step, seed=seed),
        async_=True, async_rl=AsyncSettings(max_inflight_groups=2, max_off_policy_steps=1, queue_size=8, server_probe_s=0.1,
                                            request_timeout_s=5.0, lockstep=lockstep),
    )
    orchestrator = RolloutOrchestrator(
        records or [record or {"prompt": [{"role": "user", "content": "Prove it."}], "problem": "P"}], ScriptedTokenizer(),
        ServerPool([f"http://127.0.0.1:{free_port()}/v1"]), reward, config, model_name="m",
    )
    choices = [{"text": f"proof {index}", "token_ids": [1, 2], "logprobs": {"token_logprobs": [-0.5, -0.25]}}
               for index in range(len(rewards))]

    async def generate(client, prompt_ids, group):
        return orchestrator.version, choices

    orchestrator._generate = generate  # type: ignore[method-assign]
    return orchestrator


def test_an_unscored_rollout_stays_in_its_group_with_no_reward_and_no_advantage(tmp_path: Path) -> None:
    orchestrator = scripted_orchestrator(tmp_path, [1.0, None, 0.0, 1.0])
    asyncio.run(orchestrator._group(None, 0))
    queued = [orchestrator.rollout_buffer.get(timeout=1) for _ in range(4)]
    assert [sample.group_id for sample in queued] == [0, 0, 0, 0]  # the group stays whole: batches are whole groups
    assert queued[1].advantage == 0.0 and math.isnan(queued[1].metrics["reward"])  # trains nothing, never scored 0
    assert [queued[index].advantage for index in (0, 2, 3)] == pytest.approx(group_advantages([1.0, 0.0, 1.0]))
    orchestrator.stop()
    logged = [json.loads(line) for line in (tmp_path / "rollouts.jsonl").read_text().splitlines()]
    assert [record["reward"] for record in logged] == [1.0, None, 0.0, 1.0]


def test_lockstep_launches_one_step_of_groups_per_version(tmp_path: Path) -> None:
    orchestrator = scripted_orchestrator(tmp_path, [1.0, 0.0], lockstep=True, prompts_per_step=2)
    assert orchestrator.lockstep_groups == 2  # a step's groups: prompts_per_step x accumulation x pushes per sync
    assert [orchestrator._may_launch(0) for _ in range(3)] == [True, True, False]
    assert orchestrator._may_launch(1) and orchestrator._may_launch(1) and not orchestrator._may_launch(1)
    orchestrator.stop()


def test_the_reward_gets_every_column_of_the_record_once_per_rollout(tmp_path: Path) -> None:
    calls: list[dict] = []
    prompt = [{"role": "user", "content": "Grade this proof."}]
    record = {"prompt": prompt, "task": "verifier", "problem": "P", "proof": "Step 1: ...", "reference": 0.5,
              "first_bad_step": 1, "step_known": True}
    orchestrator = scripted_orchestrator(tmp_path, [1.0, 0.0], record=record, calls=calls)
    asyncio.run(orchestrator._group(None, 0))
    orchestrator.stop()
    [call] = calls
    assert call["prompts"] == [prompt, prompt] and call["completions"] == ["proof 0", "proof 1"]
    assert {name: call[name] for name in record if name != "prompt"} == {
        name: [value, value] for name, value in record.items() if name != "prompt"}  # as TRL hands a dataset's columns
    assert callable(call["log_metric"])


def test_each_epoch_visits_every_row_once_in_a_seeded_shuffle_that_a_resume_repeats(tmp_path: Path) -> None:
    records = [{"prompt": [{"role": "user", "content": f"Prove {row}."}], "problem": str(row)} for row in range(12)]
    orchestrator = scripted_orchestrator(tmp_path, [1.0, 0.0], records=records, seed=3)
    rows = [orchestrator.row_order(group) for group in range(36)]
    epochs = [rows[start:start + 12] for start in (0, 12, 24)]
    assert all(sorted(epoch) == list(range(12)) for epoch in epochs)  # every row once per epoch
    assert epochs[0] != list(range(12)) and len({tuple(epoch) for epoch in epochs}) == 3  # shuffled, anew each epoch
    resumed = scripted_orchestrator(tmp_path / "resumed", [1.0, 0.0], records=records, seed=3)
    assert [resumed.row_order(group) for group in range(20, 36)] == rows[20:]  # a function of the group number alone
    other_seed = scripted_orchestrator(tmp_path / "other", [1.0, 0.0], records=records, seed=4)
    assert [other_seed.row_order(group) for group in range(12)] != epochs[0]
    asyncio.run(orchestrator._group(None, 13))
    logged = [json.loads(line) for line in (tmp_path / "rollouts.jsonl").read_text().splitlines()]
    assert {record["problem_row"] for record in logged} == {rows[13]}
    for each in (orchestrator, resumed, other_seed):
        each.stop()

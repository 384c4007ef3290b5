"""The orchestrator's arithmetic and its staleness gate; the real pool and trainer are in test_async_train.py."""

from __future__ import annotations

import json
import queue
from pathlib import Path

import numpy as np
import pytest
from trl.experimental.async_grpo.async_rollout_worker import RolloutSample

from training.rollout_orchestrator import JsonlLog, VersionedQueue, group_advantages


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
    log = JsonlLog(tmp_path / "trained.jsonl")
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

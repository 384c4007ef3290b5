"""Training with several processes (``accelerate launch`` or ``torchrun``): who writes what,
and how the config's batch sizes split across processes.

Contract, for ``train sft``, ``train verifier``, ``train meta-verifier``, ``train generator``
(synchronous) and ``train loop``:

- every process reads and checks the data itself, the same way; before training they
  compare the run directory and what they read (``agree``), and stop if any differs;
- only the main process (rank 0) writes run files: ``config.toml``, the agreement files,
  ``final/``, ``rewards.png``, ``COMPLETE``, ``metrics.jsonl`` and TensorBoard (TRL's own
  writers are rank-0 only too), and the loop's samples, labels and fine-tuning sets; the
  others wait at a barrier (``wait_for_everyone``) until those files are there;
- batch sizes in the config are global (``per_process``): GRPO's ``group_size x
  prompts_per_step`` completions and SFT's ``batch_size`` examples are split evenly across
  the processes, so a run's optimizer step sees the same number of examples however many
  processes share it.

A rank is read from the launcher's environment (``RANK``, ``WORLD_SIZE``), so deciding who
writes needs no process group; the group (gloo on CPU, NCCL on GPU, as the trainers use) is
joined the first time processes must meet.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import timedelta
from typing import Any

from data.errors import InputError

BARRIER_TIMEOUT = timedelta(hours=6)
"""How long a process waits for the others (the main process may label or score alone meanwhile)."""


def process_count() -> int:
    """Processes in this launch (1 without a distributed launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def process_index() -> int:
    return int(os.environ.get("RANK", "0"))


def is_main_process() -> bool:
    return process_index() == 0


def distributed_state() -> Any:
    """accelerate's process state, set up as the trainers set it up (``use_cpu`` off a GPU).

    On CPU the device is plain ``cpu``: accelerate would name it ``cpu:0`` under several
    processes, and transformers then loads a checkpoint's optimizer state with that as
    ``map_location``, which torch cannot restore to (so a resumed run would fail)."""
    import torch
    from accelerate import PartialState

    on_cpu = not torch.cuda.is_available()
    if on_cpu:
        os.environ.setdefault("ACCELERATE_TORCH_DEVICE", "cpu")
    return PartialState(cpu=on_cpu, timeout=BARRIER_TIMEOUT)


def wait_for_everyone() -> None:
    """Barrier across the launch's processes; nothing with one process."""
    if process_count() > 1:
        distributed_state().wait_for_everyone()


def per_process(total: int, name: str) -> int:
    """A global batch size's share of one process; one that does not split evenly is an input error."""
    count = process_count()
    if total % count:
        raise InputError(f"{name} = {total} is the global batch; it must divide evenly across the {count} processes "
                         f"(make it a multiple of {count}, or launch {total} or a divisor of it)")
    return total // count


def fingerprint(ids: list[str]) -> str:
    """What a process read, in a few characters (the row ids in order, hashed), for ``agree``."""
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


def refuse_async_on_several_processes() -> None:
    """Async GRPO is one trainer process (``training.async_rl.trainer``): say so in one line under a multi-process launch."""
    if process_count() > 1:
        raise InputError(f"async GRPO trains in one process, not {process_count()}: launch it without accelerate/torchrun "
                         "(more rollout throughput comes from more servers in [async_rl] servers), "
                         "or set async = false to train on several processes")


def agree(**facts: Any) -> None:
    """Stop with one line unless every process holds the same ``facts`` (run directory, what it read)."""
    if process_count() == 1:
        return
    import torch.distributed

    distributed_state()
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()
    every: list[Any] = [None] * process_count()
    torch.distributed.all_gather_object(every, (digest, facts))
    mine = (digest, facts)
    for rank, theirs in enumerate(every):
        if theirs[0] != mine[0]:
            differing = sorted(key for key in facts if theirs[1].get(key) != facts.get(key))
            raise InputError(f"process {rank} and process {process_index()} disagree on {', '.join(differing)}: "
                             f"{ {key: theirs[1].get(key) for key in differing} } vs { {key: facts.get(key) for key in differing} }; "
                             "every process must see the same files and settings")

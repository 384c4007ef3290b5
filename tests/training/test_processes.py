"""``training.processes``: ranks from the launcher's environment and the global batch rule.
The real multi-process runs are in ``test_multi_process.py``."""

from __future__ import annotations

import pytest

from data.errors import InputError
from training.processes import agree, is_main_process, per_process, process_count, process_index


def test_without_a_launcher_there_is_one_main_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    assert (process_count(), process_index(), is_main_process()) == (1, 0, True)
    agree(run_dir="anything")  # nothing to compare with one process: no process group is needed


def test_the_launchers_rank_decides_who_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    assert (process_count(), process_index(), is_main_process()) == (4, 3, False)
    monkeypatch.setenv("RANK", "0")
    assert is_main_process()


def test_a_global_batch_splits_evenly_or_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert per_process(8, "sft.batch_size") == 4
    with pytest.raises(InputError) as refused:
        per_process(3, "sft.batch_size")
    message = str(refused.value)
    assert "sft.batch_size = 3 is the global batch" in message and "2 processes" in message and "\n" not in message
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert per_process(3, "sft.batch_size") == 3


def test_async_training_is_refused_on_several_processes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from training.processes import refuse_async_on_several_processes

    monkeypatch.setenv("WORLD_SIZE", "1")
    refuse_async_on_several_processes()
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(InputError, match="async GRPO trains in one process, not 2"):
        refuse_async_on_several_processes()

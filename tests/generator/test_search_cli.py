"""``proofsmith prove --search`` end to end on the embedded model and a real server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROBLEM = "Prove that the product of two odd integers is odd."
SMALL = ("--pool", "2", "--verify-samples", "2", "--top-k", "1", "--max-tokens", "32", "--seed", "0")
KILLED = ("--pool", "2", "--verify-samples", "2", "--top-k", "1", "--max-tokens", "16", "--seed", "0")  # resuming does not depend on proof length


def pool_records(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "pool.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_killed_search_resumes_and_writes_its_pool_and_result(cli, tmp_path: Path, embedded_checkpoint: str) -> None:
    out = tmp_path / "search"
    command = [sys.executable, "-m", "proofsmith", "prove", PROBLEM, "--search", "--engine", "transformers",
               "--rounds", "2", "--out", str(out), *KILLED]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    state = out / "state.json"
    while time.monotonic() < deadline and not state.exists() and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, "the search ended before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = [record["id"] for record in pool_records(out) if record["round"] < json.loads(state.read_text())["completed_rounds"]]
    assert kept
    result = cli("prove", PROBLEM, "--search", "--engine", "transformers", "--rounds", "2", "--out", str(out), "--json", *KILLED)
    assert result.returncode == 0, result.stderr
    records = pool_records(out)
    assert [record["id"] for record in records][: len(kept)] == kept
    assert len({record["id"] for record in records}) == len(records)
    # --rounds 2: the first pool and two refinement rounds, all run (no proof of this model passes every check)
    summary = json.loads(result.stdout)
    assert summary["stopped"] == "round limit"
    assert json.loads(state.read_text())["completed_rounds"] == 3
    # what the finished search wrote: its pool, the result of the best proof, its config
    assert summary["pool_size"] == len(records)
    written = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert written["best_id"] == summary["best_id"] and written["best"]["proof"] == written["proof"]
    assert written["completion_tokens"] == sum(record["completion_tokens"] for record in records)
    assert written["verifier_mean"] == written["best"]["mean_score"]  # the final proof's fields
    assert written["rounds"] == max(record["round"] for record in records) + 1 == 3
    assert "[search]" in (out / "config.toml").read_text(encoding="utf-8")
    for record in records:
        assert record["round"] in (0, 1, 2) and (len(record["analyses"]) == 2) is bool(record["proof"])


def test_search_through_a_real_server(cli, tmp_path: Path, vllm_server) -> None:
    out = tmp_path / "search"
    result = cli("prove", PROBLEM, "--search", "--base-url", vllm_server.base_url, "--rounds", "1", "--out", str(out), "--json", *SMALL)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["engine"] == "openai" and pool_records(out)

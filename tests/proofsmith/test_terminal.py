"""What a user sees on stderr: progress while work runs, no third-party chatter, the result or an error last."""

from __future__ import annotations

import logging

import pytest

from proofsmith.commands.common import OnlyOwnWarnings


def record(name: str, level: int) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, "message", None, None)


def test_third_party_warnings_are_held_back_and_errors_pass() -> None:
    only_own = OnlyOwnWarnings()
    assert not only_own.filter(record("vllm.triton_utils.importing", logging.WARNING))
    assert not only_own.filter(record("transformers.modeling_utils", logging.WARNING))
    assert only_own.filter(record("vllm.engine", logging.ERROR))
    assert only_own.filter(record("engine.openai_backend", logging.WARNING))
    assert only_own.filter(record("training.async_rl.orchestrator", logging.WARNING))


@pytest.mark.slow
def test_prove_reports_rounds_and_engine_calls_as_plain_lines_off_a_terminal(
    cli, monkeypatch: pytest.MonkeyPatch, embedded_checkpoint: str
) -> None:
    monkeypatch.setenv("PROOFSMITH_PROGRESS_INTERVAL", "0.2")
    result = cli("prove", "Prove that 2 + 2 = 4.", "--engine", "transformers", "--max-rounds", "1", "--max-tokens", "24",
                 "--seed", "0", "--json")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert all(line.startswith("proofsmith: ") for line in lines), result.stderr
    assert lines[0].startswith("proofsmith: prove: 0/1 rounds (0%)")
    assert lines[-1].startswith("proofsmith: prove: 1/1 rounds (100%)")
    calls = [line for line in lines if " | transformers generate: " in line]
    assert calls and "tokens=" in calls[-1] and "tok_s=" in calls[-1]
    assert result.stdout.count("\n") == 1  # the JSON summary alone

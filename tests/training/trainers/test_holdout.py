"""Agreement before and after a run: one model load and one engine call for all measured sets.

The engine is faked at its seam; the real transformers engine measures in the enhanced verifier's
GRPO step (tests/training/test_train_cli.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.base import Completion, GenerationRequest, GenerationResult
from training.role_data.records import verifier_answer
from training.role_data.rows import TrainingRow
from training.trainers import holdout


class ScriptedEngine:
    """Answers each verification with the next scripted verdict; counts loads and calls."""

    loads: list[str] = []
    calls: list[int] = []

    def __init__(self, config: object) -> None:
        ScriptedEngine.loads.append(config.model)  # type: ignore[attr-defined]
        self.verdicts = iter([verifier_answer(1.0), "no score", verifier_answer(0.5)])

    def generate(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        ScriptedEngine.calls.append(len(requests))
        return [GenerationResult((Completion(next(self.verdicts), "stop", 3),), 10, 3, 0.0) for _ in requests]

    def close(self) -> None:
        pass


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> type[ScriptedEngine]:
    import engine.transformers_backend

    monkeypatch.setattr(engine.transformers_backend, "TransformersEngine", ScriptedEngine)
    ScriptedEngine.loads, ScriptedEngine.calls = [], []
    return ScriptedEngine


def test_all_sets_are_scored_by_one_engine_in_one_call_and_split_back(tmp_path: Path, scripted: type[ScriptedEngine]) -> None:
    rows = [TrainingRow(f"r{index}", "P", f"proof {index}", score=score) for index, score in enumerate((1.0, 0.0, 0.5))]
    sets = {"holdout": rows[:1], "training_rows": rows[1:]}
    holdout.write_agreements(tmp_path, "after", "model-dir", "verifier", sets, 16, None)
    assert (scripted.loads, scripted.calls) == (["model-dir"], [3])
    held = json.loads((tmp_path / "holdout_after.json").read_text(encoding="utf-8"))
    trained = json.loads((tmp_path / "training_rows_after.json").read_text(encoding="utf-8"))
    assert held == {"model": "model-dir", "rows": 1, "exact": 1.0, "format_failure_rate": 0.0, "mean_abs_error": 0.0,
                    "predicted": {"1": 1}}
    assert trained == {"model": "model-dir", "rows": 2, "exact": 0.5, "format_failure_rate": 0.5, "mean_abs_error": 0.0,
                       "predicted": {"none": 1, "0.5": 1}}


def test_a_resumed_run_keeps_its_before_files_and_loads_no_model_for_them(tmp_path: Path, scripted: type[ScriptedEngine]) -> None:
    rows = [TrainingRow("r0", "P", "proof", score=1.0)]
    (tmp_path / "holdout_before.json").write_text("{}", encoding="utf-8")
    (tmp_path / "training_rows_before.json").write_text("{}", encoding="utf-8")
    holdout.write_agreements(tmp_path, "before", "start", "verifier", {"holdout": rows, "training_rows": rows}, 16, None)
    assert scripted.loads == [] and (tmp_path / "holdout_before.json").read_text(encoding="utf-8") == "{}"

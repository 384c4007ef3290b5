"""Training rows as TRL records: GRPO prompts with their reward columns, SFT targets that parse back."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.parse import parse_generation
from meta_verifier.meta_verify import META_FORMAT
from training.role_data.rows import COLD_START_ANALYSES, COLD_START_RATINGS, TrainingRow
from training.role_data.records import (
    as_dicts,
    generator_answer,
    grpo_records,
    meta_answer,
    prompt_for,
    sft_records,
    verifier_answer,
)
from verifier.parse import VERIFIER_FORMAT, parse_verdict

SCORES = (0.0, 0.5, 1.0)
ROW = TrainingRow("r1", "Prove PROBLEM-TEXT.", "PROOF-TEXT holds.", 0.5, "ANALYSIS-TEXT here.", 1.0)
OPENINGS = {
    "verifier": "You are grading a proof",
    "meta-verifier": "You are auditing a grader",
    "generator": "Solve the problem below",
}


@pytest.mark.parametrize(
    ("role", "reference", "shown"),
    [
        ("verifier", 0.5, ("PROBLEM-TEXT", "PROOF-TEXT")),
        ("meta-verifier", 1.0, ("PROBLEM-TEXT", "PROOF-TEXT", "ANALYSIS-TEXT")),
        ("generator", -1.0, ("PROBLEM-TEXT",)),
    ],
)
def test_grpo_records_per_role(role: str, reference: float, shown: tuple[str, ...]) -> None:
    [record] = grpo_records(role, [ROW])
    assert set(record) == {"prompt", "task", "row_id", "problem", "proof", "analysis", "reference", "goal", "first_bad_step",
                           "step_known"}
    assert (record["first_bad_step"], record["step_known"]) == (0, False)
    assert record["task"] == role
    prompt = record["prompt"]
    assert isinstance(prompt, list) and prompt
    assert all(isinstance(message, dict) and set(message) == {"role", "content"} for message in prompt)
    assert prompt[-1]["role"] == "user"
    assert prompt[-1]["content"].startswith(OPENINGS[role])
    for text in shown:
        assert text in prompt[-1]["content"]
    for text in {"PROOF-TEXT", "ANALYSIS-TEXT"} - set(shown):
        assert text not in prompt[-1]["content"]
    assert record["reference"] == reference and isinstance(record["reference"], float)
    assert (record["row_id"], record["problem"], record["proof"], record["analysis"]) == (
        "r1", ROW.problem, ROW.proof, ROW.analysis
    )
    assert prompt == as_dicts(prompt_for(role, ROW))


@pytest.mark.parametrize(("role", "row"), [
    ("verifier", TrainingRow("a", "P", "Q", None)),
    ("meta-verifier", TrainingRow("a", "P", "Q", None, "A", None)),
])
def test_a_missing_reference_becomes_minus_one(role: str, row: TrainingRow) -> None:
    assert grpo_records(role, [row])[0]["reference"] == -1.0


def test_grpo_records_keep_row_order_and_count() -> None:
    rows = [TrainingRow(f"r{i}", f"Problem {i}", f"Proof {i}", 1.0) for i in range(4)]
    records = grpo_records("verifier", rows)
    assert [record["row_id"] for record in records] == ["r0", "r1", "r2", "r3"]
    assert all(f"Proof {i}" in record["prompt"][-1]["content"] for i, record in enumerate(records))


def test_an_enhanced_verifier_run_mixes_verification_and_meta_verification_prompts() -> None:
    from dataclasses import replace

    graded, rated = TrainingRow("g", "P1", "Q1", 0.0), replace(ROW, task="meta-verifier")
    verify, rate = grpo_records("verifier", [graded, rated])
    assert (verify["task"], verify["reference"]) == ("verifier", 0.0)
    assert verify["prompt"][-1]["content"].startswith(OPENINGS["verifier"])
    assert (rate["task"], rate["reference"], rate["analysis"]) == ("meta-verifier", 1.0, ROW.analysis)
    assert rate["prompt"] == as_dicts(prompt_for("meta-verifier", ROW))


@pytest.mark.parametrize("role", ["sft", "loop", "judge"])
def test_roles_without_a_grpo_prompt_are_refused(role: str) -> None:
    with pytest.raises(ValueError, match="no GRPO prompt"):
        grpo_records(role, [ROW])


def test_grpo_prompts_use_the_prompts_dir(tmp_path: Path) -> None:
    (tmp_path / "verify.md").write_text("CUSTOM grade {{problem}} / {{proof}}", encoding="utf-8")
    (tmp_path / "verify.system.md").write_text("SYSTEM TEXT", encoding="utf-8")
    [record] = grpo_records("verifier", [ROW], str(tmp_path))
    assert [message["role"] for message in record["prompt"]] == ["system", "user"]
    assert record["prompt"][0]["content"] == "SYSTEM TEXT"
    assert record["prompt"][1]["content"].startswith("CUSTOM grade")
    # roles whose template is not in the folder keep the built-in one
    [generator] = grpo_records("generator", [ROW], str(tmp_path))
    assert generator["prompt"][-1]["content"].startswith(OPENINGS["generator"])


# --- answers in each format parse back to the score they were written with -------------------------


@pytest.mark.parametrize("score", SCORES)
def test_verifier_answer_parses_back(score: float) -> None:
    text = verifier_answer(score)
    verdict = parse_verdict(text, VERIFIER_FORMAT)
    assert verdict.score == score
    assert verdict.format_ok
    assert verdict.analysis == COLD_START_ANALYSES[score]
    assert text.startswith(VERIFIER_FORMAT.opener)


@pytest.mark.parametrize("rating", SCORES)
def test_meta_answer_parses_back(rating: float) -> None:
    verdict = parse_verdict(meta_answer(rating), META_FORMAT)
    assert verdict.score == rating and verdict.format_ok
    assert verdict.analysis == COLD_START_RATINGS[rating]
    # the verifier's parser does not take a meta answer for its own
    assert parse_verdict(meta_answer(rating), VERIFIER_FORMAT).score is None


@pytest.mark.parametrize("score", SCORES)
def test_generator_answer_parses_back(score: float) -> None:
    generated = parse_generation(generator_answer("  Write n = 2k.\nThen n^2 = 4k^2.  ", score))
    assert generated.format_ok
    assert generated.self_score == score
    assert generated.proof == "Write n = 2k.\nThen n^2 = 4k^2."
    assert generated.self_evaluation.analysis == COLD_START_ANALYSES[score]


@pytest.mark.parametrize("table", [COLD_START_ANALYSES, COLD_START_RATINGS])
def test_cold_start_texts_cover_every_score(table: dict[float, str]) -> None:
    assert set(table) == set(SCORES)
    assert len(set(table.values())) == 3


def test_answers_refuse_a_score_outside_the_scale() -> None:
    with pytest.raises(KeyError):
        verifier_answer(0.25)
    with pytest.raises(KeyError):
        meta_answer(0.75)


# --- SFT records ----------------------------------------------------------------------------------

SFT_ROWS = [
    TrainingRow("a", "Problem A.", "Proof A.", 1.0),
    TrainingRow("b", "Problem B.", "Proof B.", 0.0, "ANALYSIS-B", 0.5),
    TrainingRow("c", "Problem C.", "Proof C.", None, "ANALYSIS-C", 1.0),
]


@pytest.mark.parametrize(
    ("formats", "expected"),
    [
        (["verifier"], [("verifier", "a"), ("verifier", "b")]),
        (["generator"], [("generator", "a"), ("generator", "b")]),
        (["meta-verifier"], [("meta-verifier", "b"), ("meta-verifier", "c")]),
        (["verifier", "generator"], [("verifier", "a"), ("generator", "a"), ("verifier", "b"), ("generator", "b")]),
        (["generator", "verifier"], [("verifier", "a"), ("generator", "a"), ("verifier", "b"), ("generator", "b")]),
        (["verifier", "generator", "meta-verifier"],
         [("verifier", "a"), ("generator", "a"), ("verifier", "b"), ("generator", "b"), ("meta-verifier", "b"),
          ("meta-verifier", "c")]),
    ],
)
def test_sft_records_per_format(formats: list[str], expected: list[tuple[str, str]]) -> None:
    records = sft_records(SFT_ROWS, formats)
    assert len(records) == len(expected)
    rows = {row.id: row for row in SFT_ROWS}
    for record, (kind, row_id) in zip(records, expected):
        row = rows[row_id]
        assert set(record) == {"prompt", "completion"}
        prompt = record["prompt"][-1]["content"]
        assert record["prompt"][-1]["role"] == "user"
        assert prompt.startswith(OPENINGS[kind])
        assert row.problem in prompt
        [answer] = record["completion"]
        assert answer["role"] == "assistant"
        if kind == "verifier":
            assert row.proof in prompt
            verdict = parse_verdict(answer["content"], VERIFIER_FORMAT)
            assert verdict.score == row.score and verdict.format_ok
        elif kind == "generator":
            assert row.proof not in prompt
            generated = parse_generation(answer["content"])
            assert generated.format_ok and generated.self_score == row.score and generated.proof == row.proof
        else:
            assert row.proof in prompt and row.analysis in prompt
            verdict = parse_verdict(answer["content"], META_FORMAT)
            assert verdict.score == row.rating and verdict.format_ok


def test_sft_records_use_the_prompts_dir(tmp_path: Path) -> None:
    (tmp_path / "generate.md").write_text("MINE {{problem}}", encoding="utf-8")
    [verifier, generator] = sft_records(SFT_ROWS[:1], ["verifier", "generator"], str(tmp_path))
    assert generator["prompt"][-1]["content"].startswith("MINE")
    assert verifier["prompt"][-1]["content"].startswith(OPENINGS["verifier"])

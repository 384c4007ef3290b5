"""Training rows as TRL datasets: conversational prompts for GRPO, prompt + answer for SFT.

GRPO rows keep the fields the reward needs beside the prompt (TRL passes extra columns
to reward functions): the reference score or rating, and the problem, proof and analysis
the prompt put under review (the parser needs them to ignore verdicts quoted from them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.base import ChatMessage
from generator.prompt import generation_messages
from meta_verifier.meta_verify import MetaItem, meta_verification_messages
from training.role_data.answers import generator_answer, meta_answer, verifier_answer
from training.role_data.rows import TrainingRow
from verifier.prompt import verification_messages


def as_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [message.to_dict() for message in messages]


def prompt_for(role: str, row: TrainingRow, prompts_dir: str | None = None) -> tuple[ChatMessage, ...]:
    if role == "verifier":
        return verification_messages(row.problem, row.proof, prompts_dir)
    if role == "meta-verifier":
        return meta_verification_messages(MetaItem(row.problem, row.proof, row.analysis), prompts_dir)
    if role == "generator":
        return generation_messages(row.problem, prompts_dir)
    raise ValueError(f"no GRPO prompt for role {role!r}")


def grpo_records(role: str, rows: Sequence[TrainingRow], prompts_dir: str | None = None) -> list[dict[str, Any]]:
    """One record per row: ``prompt`` (chat messages) plus the reward's columns; ``task`` is the prompt's role
    (the row's own ``task`` when set, as for the meta-verification rows of an enhanced verifier run)."""
    records = []
    for row in rows:
        task = row.task or role
        reference = row.score if task == "verifier" else row.rating if task == "meta-verifier" else None
        records.append({
            "prompt": as_dicts(prompt_for(task, row, prompts_dir)),
            "task": task,
            "row_id": row.id,
            "problem": row.problem,
            "proof": row.proof,
            "analysis": row.analysis,
            "reference": -1.0 if reference is None else reference,  # Arrow columns need one type; -1 = none
            "goal": list(row.goal),
            # Arrow columns need one type: 0 = no bad step, or not known (``step_known`` says which)
            "first_bad_step": row.first_bad_step or 0,
            "step_known": row.step_known,
        })
    return records


def sft_records(rows: Sequence[TrainingRow], formats: Sequence[str], prompts_dir: str | None = None) -> list[dict[str, Any]]:
    """Prompt/completion conversations teaching the chosen output formats (TRL computes the loss on the completion).

    verifier: the graded proof under review -> an analysis ending in its score; generator:
    the problem -> the proof and an honest self-evaluation; meta-verifier: a rated analysis ->
    a rating. Rows must carry what their formats need (``training.role_data.rows.read_rows``).
    """
    records = []
    for row in rows:
        answers = []
        if "verifier" in formats and row.score is not None:
            answers.append((verification_messages(row.problem, row.proof, prompts_dir), verifier_answer(row.score, row.critique)))
        if "generator" in formats and row.score is not None:
            answers.append((generation_messages(row.problem, prompts_dir), generator_answer(row.proof, row.score, row.critique)))
        if "meta-verifier" in formats and row.rating is not None:
            item = MetaItem(row.problem, row.proof, row.analysis)
            answers.append((meta_verification_messages(item, prompts_dir), meta_answer(row.rating, row.assessment)))
        for prompt, answer in answers:
            records.append({"prompt": as_dicts(prompt), "completion": [{"role": "assistant", "content": answer}]})
    return records

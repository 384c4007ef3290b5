"""Small training inputs the train CLI tests share: JSONL rows, short prompt templates, a tiny loop config."""

from __future__ import annotations

import json
from pathlib import Path

from parity_sets import graded_rows, rated_rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


SHORT_PROMPTS = {
    "verify.md": "Grade this proof.\nProblem: {{problem}}\nProof: {{proof}}",
    "meta_verify.md": "Rate this grading.\nProblem: {{problem}}\nProof: {{proof}}\nGrading: {{analysis}}",
    "generate.md": "Prove it and grade your proof.\nProblem: {{problem}}",
}


def write_short_prompts(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in SHORT_PROMPTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def tiny_loop_config(tmp_path: Path, model: str = "embedded") -> Path:
    prompts = write_short_prompts(tmp_path / "prompts")
    graded = write_jsonl(tmp_path / "graded.jsonl", graded_rows(1)[:4])
    rated = write_jsonl(tmp_path / "rated.jsonl", rated_rows(1)[:4])
    config = tmp_path / "loop.toml"
    config.write_text(f"""
run_dir = "{tmp_path / 'loop'}"
prompts_dir = "{prompts}"
[model]
name = "{model}"
[loop]
iterations = 2
verifier_data = "{graded}"
meta_data = "{rated}"
generator_data = "{graded}"
sample_problems = 2
proofs_per_problem = 1
auto_label = true
[sft]
max_steps = 2
batch_size = 2
max_length = 256
[grpo]
group_size = 2
max_steps = 1
save_steps = 1
[rollouts]
max_tokens = 12
[scoring]
max_tokens = 12
[label]
n = 2
m = 1
k = 1
""", encoding="utf-8")
    return config

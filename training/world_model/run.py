"""One world-model run, resumable at every stage: examples, tokenizer, training, final model, summary.

    RUN/examples.jsonl   the teaching examples drawn from the world's train split (written once)
    RUN/tokenizer/       the BPE trained on them, or ``init_model``'s when the run continues one (written once)
    RUN/checkpoints/ ... the trainer's files (``training.world_model.trainer``)
    RUN/final/           the model, its tokenizer with the chat template, and prompts/
    RUN/summary.json     examples per role, cost (minutes, tokens, tokens/s, padding), sizes
    RUN/COMPLETE         written last

The world's splits themselves (``RUN/world/``) are written by the command before this runs.
A rerun of a complete run returns its summary without training.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data.atomic import write_text_atomic
from data.errors import InputError
from data.jsonl import read_jsonl, write_jsonl
from data.world.proofs import WorldProof
from training.config import is_complete, mark_complete
from training.world_model.architecture import init_checkpoint
from training.world_model.config import WorldModelConfig
from training.world_model.examples import WORLD_PROMPTS, example_text, world_examples

SUMMARY = "summary.json"


def examples_of(config: WorldModelConfig, run_dir: Path, train_proofs: Sequence[WorldProof] | None) -> list[dict[str, Any]]:
    """The run's examples: read back when already written, else drawn from ``train_proofs`` and written whole."""
    path = run_dir / "examples.jsonl"
    if path.exists():
        return read_jsonl(path)
    if train_proofs is None:
        raise ValueError("no examples written yet and no training proofs given")
    examples = world_examples(train_proofs, config.examples, config.world.seed, config.prompts_dir)
    if not examples:
        raise InputError("the world's train split holds no proof to teach: widen [world] (families, levels, problems_per_template)")
    write_jsonl(path, examples)
    return examples


def tokenizer_of(config: WorldModelConfig, run_dir: Path, examples: Sequence[dict[str, Any]], init: Path | None) -> Any:
    """The run's tokenizer: read back when written, else the continued checkpoint ``init``'s, else trained on ``examples``."""
    from training.world_model.tokenizer import load_tokenizer, train_tokenizer

    folder = run_dir / "tokenizer"
    if (folder / "tokenizer.json").exists():
        return load_tokenizer(folder)
    if init is not None:  # a continued model reads its own tokens: its tokenizer is kept, not retrained
        tokenizer = load_tokenizer(init)
        tokenizer.save_pretrained(str(folder))
        return tokenizer
    tokenizer = train_tokenizer((example_text(example) for example in examples), config.tokenizer.vocab_size,
                                config.tokenizer.min_frequency)
    tokenizer.save_pretrained(str(folder))
    return tokenizer


def decision_token_share(rows: Sequence[dict[str, Any]]) -> float | None:
    """Share of the answer tokens the loss weights as decisions (None: no weights, the plain loss)."""
    if not any("weights" in row for row in rows):
        return None
    answer = [weight for row in rows for weight, label in zip(row["weights"], row["labels"]) if label != -100]
    return round(sum(weight != 1.0 for weight in answer) / len(answer), 4)


def run_world_model(config: WorldModelConfig, train_proofs: Sequence[WorldProof] | None) -> dict[str, Any]:
    """Train (or resume) the run of ``config`` on ``train_proofs`` (None: the examples are already written);
    returns the run's summary."""
    run_dir = Path(config.run_dir)
    if is_complete(run_dir):
        return json.loads((run_dir / SUMMARY).read_text(encoding="utf-8"))
    from training.world_model.trainer import copy_prompts, cost, tokenized, train_world_model

    examples = examples_of(config, run_dir, train_proofs)
    init = init_checkpoint(config.architecture, config.init_model)
    tokenizer = tokenizer_of(config, run_dir, examples, init)
    rows, too_long = tokenized(examples, tokenizer, config.training.max_length, config.training.decision_weight,
                               config.training.decision_parts)
    if not rows:
        raise InputError(f"every example is longer than training.max_length={config.training.max_length} tokens")
    final = train_world_model(config, rows, tokenizer, run_dir, init)
    copy_prompts(Path(config.prompts_dir) if config.prompts_dir else WORLD_PROMPTS, final)
    summary = {
        "run_dir": str(run_dir), "init_model": config.init_model or None, "final_model": str(final), "prompts": str(final / "prompts"),
        "examples": dict(Counter(example["role"] for example in examples)), "too_long": too_long,
        "problems": len({example["problem_id"] for example in examples if "problem_id" in example}),  # drills have none
        "mean_example_tokens": round(sum(row["length"] for row in rows) / len(rows), 1),
        "vocabulary": len(tokenizer), "decision_weight": config.training.decision_weight,
        "decision_parts": config.training.decision_parts,
        "decision_token_share": decision_token_share(rows), **cost(run_dir),
    }
    write_text_atomic(run_dir / SUMMARY, json.dumps(summary, indent=2) + "\n")
    mark_complete(run_dir)
    return summary

"""Can a world-model checkpoint do the world's arithmetic? Teacher-forced accuracy on the digits of held-out proofs.

    python benchmarks/world_model_digits.py --run runs/world-lm-long \
        --checkpoint runs/world-lm/checkpoints/checkpoint-900 \
        --checkpoint runs/world-lm-long/checkpoints/checkpoint-1000 --out benchmarks/results/world_model_digits.json

Why: the levels 1-2 model wrote no correct proof (pass@1 0 of 600) at a training loss of 0.09,
and its proofs got single-digit products wrong (``7·4 + 3·7 = 60 + 3·7``). The loss is a mean
over all answer tokens, most of them the proofs' fixed wording, so it hides whether the numbers
are learned. This measures that directly and cheaply (a forward pass, no sampling): on the
correct proofs of the run's test_in split (problems never trained on), the generator's prompt
and ``## Solution`` followed by the proof, the share of the proof's digit tokens that are the
model's top prediction, per family and level, beside the share for the other tokens. A model
that does the arithmetic predicts nearly every digit after ``=``; one that does not still
predicts digits it can copy from the statement, so the figure has a floor above 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from data.jsonl import read_jsonl  # noqa: E402  (the repository root is on the path only from here)


def held_out_correct(run: Path, per_group: int) -> list[dict[str, Any]]:
    """Up to ``per_group`` correct test_in proofs per (family, level), in file order."""
    taken: dict[tuple[str, int], int] = defaultdict(int)
    rows = []
    for row in read_jsonl(run / "world" / "test_in.jsonl"):
        group = (row["family"], int(row.get("difficulty", 1)))
        if row["score"] == 1.0 and taken[group] < per_group:
            taken[group] += 1
            rows.append(row)
    return rows


def measure(checkpoint: Path, tokenizer: Any, prompts: Path, rows: list[dict[str, Any]], trained: set[str]) -> dict[str, Any]:
    """Digit and other-token accuracy overall, per family and level, and split by whether the proof's template was
    trained on (test_in holds each training family's held-out template too: ``world.held_out_templates``)."""
    import torch
    from transformers import AutoModelForCausalLM

    from generator.prompt import generation_messages
    from training.world_model.tokenizer import prompt_ids

    model = AutoModelForCausalLM.from_pretrained(str(checkpoint), dtype=torch.float32).eval()
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # name -> [right, all]
    for row in rows:
        messages = [{"role": message.role, "content": message.content}
                    for message in generation_messages(row["problem"], prompts)]
        prompt = prompt_ids(tokenizer, messages)
        answer = tokenizer(f"## Solution\n{row['proof'].strip()}", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prompt + answer])
        with torch.no_grad():
            predicted = model(ids).logits[0, len(prompt) - 1:-1].argmax(-1).tolist()
        group = f"{row['family']} {row.get('difficulty', 1)}"
        template = "seen template" if row.get("template") in trained else "held-out template"
        for token, guess in zip(answer, predicted):
            kind = "digits" if tokenizer.decode([token]).strip().isdigit() else "other"
            for name in (kind, f"{group} {kind}", f"{template} {kind}", f"{template} {row['family']} {kind}"):
                counts[name][0] += int(guess == token)
                counts[name][1] += 1
    return {name: {"accuracy": round(right / total, 4), "tokens": total} for name, (right, total) in sorted(counts.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a world-model run directory (world/, tokenizer/)")
    parser.add_argument("--prompts", type=Path, help="the prompts the model learned (default: the world prompts)")
    parser.add_argument("--checkpoint", type=Path, action="append", required=True, help="a checkpoint to measure (repeatable)")
    parser.add_argument("--per-group", type=int, default=20, help="correct held-out proofs per family and level")
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    from training.world_model.examples import WORLD_PROMPTS
    from training.world_model.tokenizer import load_tokenizer

    prompts = args.prompts or WORLD_PROMPTS
    for path, wanted in [(args.run / "world" / "test_in.jsonl", "a world-model run"), (args.run / "tokenizer", "a world-model run"),
                         *[(checkpoint / "config.json", "a checkpoint") for checkpoint in args.checkpoint]]:
        if not path.exists():
            raise SystemExit(f"world_model_digits.py: {path} not found: is {path.parent} {wanted}?")
    rows, tokenizer = held_out_correct(args.run, args.per_group), load_tokenizer(args.run / "tokenizer")
    trained = {row.get("template") for row in read_jsonl(args.run / "world" / "train.jsonl")}
    results = {"run": str(args.run), "proofs": len(rows), "checkpoints": {}}
    for checkpoint in args.checkpoint:
        figures = measure(checkpoint, tokenizer, prompts, rows, trained)
        results["checkpoints"][str(checkpoint)] = figures
        print(f"{checkpoint}: digits {figures['digits']['accuracy']:.3f} of {figures['digits']['tokens']}, "
              f"other tokens {figures['other']['accuracy']:.3f} of {figures['other']['tokens']}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

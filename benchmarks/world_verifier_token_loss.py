"""Where a world model's verifier training is under-fit: teacher-forced loss by part of its own training analyses.

The continued world model's analyses of flawed steps write the flawed side as a correct step would have it
(``shown_work`` in ``world_verifier_rl.py``: at the first bad step, both sides true 0.34 even when the claim
is copied). Is that under-fitting the training data, or failing on new proofs? Here the model reads its own
training verifier examples of score-0 proofs (``RUN/examples.jsonl``) teacher-forced, and each answer's tokens
are split by what they write: at the first bad step, the left and the right side's expansion and the verdict
word; at the true steps before it, the right side and the verdict; and the whole answer. Per part: the mean
loss a token, the share of tokens the model's top choice gets right, and (but for the whole answer) the share
of the part's spans whose every token it gets right: a side is copied or it is not, and a top-1 of 0.9 a token
can be a third of the sides whole. A part whose loss is many times the answer's mean is one the average loss
hides. Writes ``OUT/world_verifier_token_loss.json`` (an entry per model).

    python benchmarks/world_verifier_token_loss.py --model runs/world-lm-continued-3/final \\
        --examples runs/world-lm-continued-3/examples.jsonl --out benchmarks/results
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from statistics import fmean
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from data.jsonl import read_jsonl  # noqa: E402
from data.world.work import WORKED_STEP  # noqa: E402

PARTS = ("first bad step: left side", "first bad step: right side", "first bad step: verdict word",
         "true steps: right side", "true steps: verdict word", "whole answer")


def measure(model_dir: str, examples: list[dict[str, Any]], count: int) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.world_model.tokenizer import answer_ids, prompt_ids

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    losses: dict[str, list[float]] = {part: [] for part in PARTS}
    right: dict[str, list[bool]] = {part: [] for part in PARTS}
    whole: dict[str, list[bool]] = {part: [] for part in PARTS}
    used = 0
    for example in examples:
        if used == count:
            break
        answer, bad = example["answer"], example["first_bad_step"]
        spans = []
        for match in WORKED_STEP.finditer(answer):
            where = "first bad step" if int(match.group(1)) == bad else "true steps" if int(match.group(1)) < bad else None
            if where:
                spans += [(f"{where}: right side", match.span(4)), (f"{where}: verdict word", match.span(6))]
                if where == "first bad step":
                    spans.append(("first bad step: left side", match.span(3)))
        if not any(part.startswith("first bad step") for part, _ in spans):
            continue  # its flawed step is not an equality worked out
        prompt = prompt_ids(tokenizer, example["prompt"])
        ids = torch.tensor([prompt + answer_ids(tokenizer, answer)])
        with torch.no_grad():
            log_probs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
        targets = ids[0, 1:]
        token_loss = -log_probs.gather(1, targets[:, None])[:, 0]
        token_right = log_probs.argmax(dim=-1) == targets
        first = len(prompt) - 1  # the position that predicts the answer's first token

        def tokens_before(end: int) -> int:
            # the answer's tokens up to a character, the leading space with the text after it (BPE joins them)
            return len(answer_ids(tokenizer, answer[:end])) - 1

        for part, (start, end) in spans:
            low, high = first + tokens_before(start - 1), first + tokens_before(end)
            losses[part] += token_loss[low:high].tolist()
            right[part] += token_right[low:high].tolist()
            whole[part].append(bool(token_right[low:high].all()))
        losses["whole answer"] += token_loss[first:].tolist()
        right["whole answer"] += token_right[first:].tolist()
        used += 1
    return {"model": model_dir, "examples": used,
            "parts": {part: {"tokens": len(losses[part]), "loss": fmean(losses[part]), "top-1 right": fmean(right[part]),
                             **({"spans": len(whole[part]), "whole span right": fmean(whole[part])} if whole[part] else {})}
                      for part in PARTS if losses[part]}}


def flawed_analyses(examples_file: Path) -> list[dict[str, Any]]:
    """The verifier examples of score-0 proofs with a first bad step in a run's ``examples.jsonl``, in a fixed shuffled order."""
    examples = [row for row in read_jsonl(examples_file)
                if row["role"] == "verifier" and row["score"] == 0.0 and row.get("first_bad_step")]
    random.Random(0).shuffle(examples)
    return examples


def add_entry(path: Path, name: str, result: dict[str, Any]) -> None:
    """``result`` as the entry ``name`` of the JSON document at ``path`` (the other entries kept)."""
    document = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    document[name] = result
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


def print_parts(parts: dict[str, dict[str, Any]]) -> None:
    for part, figures in parts.items():
        spans = f"  whole span right {figures['whole span right']:.3f}" if "whole span right" in figures else ""
        print(f"{part:30} {figures['tokens']:6} tokens  loss {figures['loss']:.3f}  top-1 right {figures['top-1 right']:.3f}{spans}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a world-model checkpoint")
    parser.add_argument("--examples", required=True, help="the examples.jsonl of a world-model run (its training examples)")
    parser.add_argument("--count", type=int, default=150, help="verifier examples of score-0 proofs read")
    parser.add_argument("--name", default="", help="the entry's name (default: MODEL)")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    result = {"examples file": args.examples, **measure(args.model, flawed_analyses(Path(args.examples)), args.count)}
    add_entry(Path(args.out) / "world_verifier_token_loss.json", args.name or args.model, result)
    print_parts(result["parts"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

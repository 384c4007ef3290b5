"""Can the world model learn to compare the two sides it wrote? A drill on the verdict alone.

Every world-model stage so far writes "They differ" at a flawed step with about the base rate of its
training data (~0.1 of verdicts), whatever the sides say: teacher-forced on its own training analyses,
p("differ") is 0.06-0.22 at the first bad step and the same at true steps
(``world_verifier_token_loss.py``), and weighting those tokens 5x or 20x in the loss
(``training.decision_weight``) did not move it in 100-200 steps. Is the comparison beyond this
model, or is its signal too thin in the world's examples (one "differ" in ten verdicts, each one token
of a ~170-token answer)?

Here the model reads only ``Expanded, the left side is A and the right side is B. They`` and is trained
on the next word alone, half the pairs "agree" (A = B) and half "differ", with A and B the sides of real
worked steps of a run's training examples (a flawed step's sides differ by a digit, a sign, a term).
Problems are split: the drill's held-out pairs come from problems no drill step used. Measured every
``--every`` steps on those held-out pairs: accuracy and p("differ") when the sides differ / agree. Then,
with the drilled model, the verdict word of whole analyses teacher-forced (the parts of
``world_verifier_token_loss.py``), to see whether a comparison learned alone carries into context.
With ``--steps 0`` it measures a model as it is (a run's ``final/``: did training with drills teach the
comparison?). Writes ``OUT/world_verdict_drill.json``.

    python benchmarks/world_verdict_drill.py --examples runs/world-lm-plain200/examples.jsonl --out benchmarks/results
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from data.jsonl import read_jsonl  # noqa: E402
from data.world.work import WORKED_STEP, expanded_sides  # noqa: E402
from world_runs import MACHINE  # noqa: E402

VERDICTS = (" agree", " differ")


def side_pairs(examples_file: Path) -> dict[str, list[tuple[str, str, str]]]:
    """(left side, right side, verdict) of every worked step of the verifier examples, by problem."""
    pairs: dict[str, list[tuple[str, str, str]]] = {}
    for row in read_jsonl(examples_file):
        if row["role"] == "verifier":
            for match in WORKED_STEP.finditer(row["answer"]):
                pairs.setdefault(row["problem_id"], []).append((match.group(3), match.group(4), match.group(6)))
    return pairs


def balanced(pairs: list[tuple[str, str, str]], count: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """``count`` pairs, half of them "differ", drawn with replacement."""
    differ = [pair for pair in pairs if pair[2] == "differ"]
    agree = [pair for pair in pairs if pair[2] == "agree"]
    return [rng.choice(differ if index % 2 else agree) for index in range(count)]


def text(left: str, right: str) -> str:
    return f"{expanded_sides(left, right)}. They"


class Drill:
    """The model, its tokenizer and the ids of the two verdict words (one token each in the world tokenizer)."""

    def __init__(self, model_dir: str) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir)
        ids = [self.tokenizer(word, add_special_tokens=False)["input_ids"] for word in VERDICTS]
        if any(len(word_ids) != 1 for word_ids in ids):
            raise SystemExit(f"the verdict words are not one token each: {ids}")
        self.verdict_ids = torch.tensor([word_ids[0] for word_ids in ids])

    def verdict_logits(self, batch: list[tuple[str, str, str]]) -> tuple[Any, Any]:
        """(next-token logits after each pair's text, the right verdict: 1 for "differ", 0 for "agree")."""
        torch = self.torch
        encoded = [self.tokenizer(text(left, right), add_special_tokens=False)["input_ids"] for left, right, _ in batch]
        longest = max(len(ids) for ids in encoded)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([row + [pad] * (longest - len(row)) for row in encoded])
        mask = torch.tensor([[1] * len(row) + [0] * (longest - len(row)) for row in encoded])
        logits = self.model(input_ids=ids, attention_mask=mask).logits
        last = torch.tensor([len(row) - 1 for row in encoded])
        return logits[torch.arange(len(batch)), last].float(), torch.tensor([int(verdict == "differ") for _, _, verdict in batch])

    def measure(self, pairs: list[tuple[str, str, str]]) -> dict[str, float]:
        torch = self.torch
        self.model.eval()
        with torch.no_grad():
            logits, right = self.verdict_logits(pairs)
        self.model.train()
        # p("differ") among the two words: what the verdict would say if it had to choose
        p_differ = torch.softmax(logits[:, self.verdict_ids], dim=-1)[:, 1]
        return {"accuracy": float(((p_differ > 0.5).long() == right).float().mean()),
                "p(differ) when the sides differ": float(p_differ[right == 1].mean()),
                "p(differ) when the sides agree": float(p_differ[right == 0].mean())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", required=True, help="a world-model run's examples.jsonl (the sides drilled)")
    parser.add_argument("--model", default="data/bundled/world-model", help="the model drilled")
    parser.add_argument("--steps", type=int, default=300, help="drill steps (0: measure MODEL as it is, nothing saved)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--every", type=int, default=25, help="measure every this many steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default="runs/world-verdict-drill", help="where the drilled model is written")
    parser.add_argument("--name", default="", help="the entry's name (default: MODEL)")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()

    import torch

    from world_verifier_token_loss import add_entry, flawed_analyses, print_parts
    from world_verifier_token_loss import measure as parts_of_analyses

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    by_problem = side_pairs(Path(args.examples))
    problems = sorted(by_problem)
    rng.shuffle(problems)
    held_out = set(problems[: len(problems) // 10])
    train = [pair for problem in problems if problem not in held_out for pair in by_problem[problem]]
    test = balanced([pair for problem in sorted(held_out) for pair in by_problem[problem]], 400, random.Random(1))
    drill = Drill(args.model)
    optimizer = torch.optim.AdamW(drill.model.parameters(), lr=args.learning_rate, weight_decay=0.0)
    curve = [{"step": 0, **drill.measure(test)}]
    print(json.dumps(curve[-1]), file=sys.stderr)
    started = time.monotonic()
    drill.model.train()
    for step in range(1, args.steps + 1):
        logits, right = drill.verdict_logits(balanced(train, args.batch, rng))
        # the loss of the verdict token over the whole vocabulary, as the world model's training sees it
        loss = torch.nn.functional.cross_entropy(logits, drill.verdict_ids[right])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % args.every == 0 or step == args.steps:
            curve.append({"step": step, "loss": loss.item(), **drill.measure(test)})
            print(json.dumps(curve[-1]), file=sys.stderr)
    seconds = time.monotonic() - started
    measured = args.model
    if args.steps:
        Path(args.save).mkdir(parents=True, exist_ok=True)
        drill.model.save_pretrained(args.save)
        drill.tokenizer.save_pretrained(args.save)
        measured = args.save
    analyses = flawed_analyses(Path(args.examples))
    result = {"machine": MACHINE, "examples file": args.examples, "model": args.model, "steps": args.steps, "batch": args.batch,
              "learning rate": args.learning_rate, "seconds": round(seconds, 1), "drill pairs": len(train),
              "held-out pairs": len(test), "curve": curve,
              "whole analyses after the drill": parts_of_analyses(measured, analyses, 150)["parts"]}
    add_entry(Path(args.out) / "world_verdict_drill.json", args.name or args.model, result)
    print_parts(result["whole analyses after the drill"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

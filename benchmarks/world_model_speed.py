"""Training speed of the world model beside SmolLM2-135M: the same examples, batches and steps, in one run.

Both models train on the same teaching examples (``training.world_model.examples.world_examples`` of a
small world, or ``--examples RUN/examples.jsonl``) with the same batch size and seed, in ABBA order
(world model, 135M, 135M, world model) so that a change in the machine's load falls on both alike:

  world model   the default ``[architecture]`` of ``training/world_model/config.py`` from scratch, its own
                BPE trained on the examples, ``training.world_model.trainer``'s Trainer and collator
  135M          the embedded SmolLM2-135M-Instruct as ``train sft`` trains it with ``configs/sft_cpu.toml``
                (full weights: that config sets ``lora = false``; the GPU configs train LoRA), through
                ``training.trainers.sft.sft_trainer``, the examples as prompt/completion chats

Each side: bf16 autocast where the CPU has native bf16 matmuls (else fp32, and the reason is
recorded), batches grouped by length with ``training.trainers.batching`` (both sides see exactly the
same examples in every window of 4 steps; ``proofsmith world model`` itself groups with transformers'
mega-batches), ``--warmup`` untimed steps, then ``--steps`` timed steps (from the start of the first
to the end of the last, data loading between them included; checkpoints off). Reported per side:
trained tokens/s (non-padding: prompt and answer; each model counts its own tokenizer's tokens),
examples/s, padding fraction and the per-step losses; and world/135M ratios. Examples/s is the
like-for-like figure; tokens/s differs also by how finely each tokenizer cuts the same text.

    python benchmarks/world_model_speed.py --steps 4 --warmup 1 --out benchmarks/results/world_model_speed.json
    python benchmarks/world_model_speed.py --examples runs/world-lm/examples.jsonl --steps 16 --out /tmp/speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SFT_CPU = REPO / "configs" / "sft_cpu.toml"


def machine(note: str) -> dict[str, Any]:
    """The CPU, its cores, whether it multiplies bf16 natively, and how loaded it was."""
    import torch

    from engine.devices import cpu_has_native_bf16, cuda_available

    info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")),
                 platform.processor())
    flags = set(info.split())
    return {"cpu": model, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(), "gpu": cuda_available(),
            "amx_bf16": "amx_bf16" in flags, "avx512_bf16": "avx512_bf16" in flags, "native_bf16": cpu_has_native_bf16(),
            "torch": torch.__version__, "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
            "note": note}


class CountingCollator:
    """A trainer's collator, counting each batch's non-padding tokens, positions and examples, in order."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.batches: list[dict[str, Any]] = []

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        batch = self.inner(features)
        mask = batch["attention_mask"]
        taught = int((batch["labels"] != -100).sum()) if "labels" in batch else None
        self.batches.append({"tokens": int(mask.sum()), "positions": int(mask.numel()), "examples": int(mask.shape[0]),
                             "answer_tokens": taught, "ids": sorted(hash(tuple(feature["input_ids"])) for feature in features)})
        return batch


def step_clock() -> Any:
    """A callback that stamps the start and end of every optimizer step and keeps every logged loss."""
    from transformers import TrainerCallback

    class StepClock(TrainerCallback):
        def __init__(self) -> None:
            self.begins: list[float] = []
            self.ends: list[float] = []
            self.losses: dict[int, float] = {}

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.begins.append(time.perf_counter())

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.ends.append(time.perf_counter())

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
            if logs and "loss" in logs:
                self.losses[state.global_step] = float(logs["loss"])

    return StepClock()


def measure(trainer: Any, counting: CountingCollator, clock: Any, warmup: int, steps: int) -> dict[str, Any]:
    """Train ``warmup + steps`` steps; the figures of the last ``steps``, from the start of the first to the end of
    the last (each batch is one step: no accumulation)."""
    trainer.train()
    timed = counting.batches[warmup:warmup + steps]
    seconds = clock.ends[warmup + steps - 1] - clock.begins[warmup]
    tokens, positions = sum(batch["tokens"] for batch in timed), sum(batch["positions"] for batch in timed)
    examples = sum(batch["examples"] for batch in timed)
    return {"timed_steps": steps, "seconds": round(seconds, 2), "tokens": tokens, "positions": positions,
            "examples": examples, "tokens_per_second": round(tokens / seconds, 1),
            "examples_per_second": round(examples / seconds, 3), "padding_fraction": round(1 - tokens / positions, 4),
            "losses": [round(clock.losses[step], 4) for step in sorted(clock.losses)],
            "answer_tokens": [batch["answer_tokens"] for batch in counting.batches[:warmup + steps]],
            "batches": [batch["ids"] for batch in counting.batches[:warmup + steps]]}


def pooled(legs: list[dict[str, Any]]) -> dict[str, Any]:
    """One side's figures over its legs: totals divided by total time."""
    seconds = sum(leg["seconds"] for leg in legs)
    tokens, positions = sum(leg["tokens"] for leg in legs), sum(leg["positions"] for leg in legs)
    examples = sum(leg["examples"] for leg in legs)
    return {"tokens_per_second": round(tokens / seconds, 1), "examples_per_second": round(examples / seconds, 3),
            "padding_fraction": round(1 - tokens / positions, 4), "seconds": round(seconds, 2),
            "per_leg_tokens_per_second": [leg["tokens_per_second"] for leg in legs]}


def drawn_examples(problems_per_template: int, seed: int) -> list[dict[str, Any]]:
    """The world model's teaching examples of a small world's train split (the defaults of ``[examples]``)."""
    from data.world.config import WorldConfig
    from data.world.splits import make_splits
    from training.world_model.config import ExampleSettings
    from training.world_model.examples import world_examples

    world = WorldConfig(seed=seed, problems_per_template=problems_per_template, test_problems_per_template=1)
    return world_examples(make_splits(world)["train"].proofs, ExampleSettings(seed=seed), world.seed)


def world_leg(examples: list[dict[str, Any]], tokenizer: Any, batch: int, warmup: int, steps: int, seed: int,
              run_dir: Path) -> dict[str, Any]:
    from datasets import Dataset

    from training.trainers.batching import length_grouped
    from training.world_model.architecture import new_model, parameter_count
    from training.world_model.config import WorldModelConfig, WorldTrainingSettings
    from training.world_model.trainer import PaddedBatch, make_trainer_class, precision_choice, tokenized, training_arguments

    config = WorldModelConfig(run_dir=str(run_dir), training=WorldTrainingSettings(
        max_steps=warmup + steps, batch_size=batch, logging_steps=1, save_steps=warmup + steps, seed=seed))
    rows, too_long = tokenized(examples, tokenizer, config.training.max_length)
    if too_long:
        raise SystemExit(f"world_model_speed.py: {too_long} examples exceed the world model's max_length; the sides would differ")
    bf16, reason = precision_choice(config.training.precision)
    arguments = replace(training_arguments(config, run_dir, bf16), save_strategy="no", report_to=[])
    counting, clock = CountingCollator(PaddedBatch(tokenizer.pad_token_id, config.training.pad_to_multiple_of)), step_clock()
    model = new_model(config.architecture, tokenizer, seed)
    trainer = length_grouped(make_trainer_class())(model=model, args=arguments, train_dataset=Dataset.from_list(rows),
                                                   data_collator=counting, callbacks=[clock])
    return {"model": "world model", "parameters": parameter_count(model), "precision": reason,
            **measure(trainer, counting, clock, warmup, steps)}


def smol_config(run_dir: Path, batch: int, max_steps: int, precision: str, group_by_length: bool) -> Any:
    """``configs/sft_cpu.toml`` (the shipped CPU cold start) with the benchmark's batch, steps, precision and order."""
    from proofsmith.config import resolve_config
    from training.config import TrainConfig

    return resolve_config(SFT_CPU, None, [f"run_dir={run_dir}", f"sft.batch_size={batch}", f"sft.max_steps={max_steps}",
                                          f"sft.precision={precision}", f"sft.group_by_length={str(group_by_length).lower()}"],
                          root=TrainConfig)


def smol_leg(config: Any, records: list[dict[str, Any]], warmup: int, steps: int) -> dict[str, Any]:
    """One ``train sft`` leg of ``config`` on ``records``, checkpoints off."""
    from transformers import AutoTokenizer

    from training.trainers.setup import model_location
    from training.trainers.sft import sft_precision, sft_trainer

    location = model_location(config.model.name)
    tokenizer = AutoTokenizer.from_pretrained(location)
    clock = step_clock()
    trainer = sft_trainer(config, records, tokenizer, location, save_strategy="no")
    if len(trainer.train_dataset) != len(records):
        raise SystemExit(f"sft kept {len(trainer.train_dataset)} of {len(records)} records; the sides would differ")
    trainer.add_callback(clock)
    counting = CountingCollator(trainer.data_collator)
    trainer.data_collator = counting
    return {"model": f"{config.model.name} (SmolLM2-135M-Instruct)", "lora": config.model.lora,
            "parameters": sum(parameter.numel() for parameter in trainer.model.parameters()),
            "trainable_parameters": sum(parameter.numel() for parameter in trainer.model.parameters() if parameter.requires_grad),
            "precision": sft_precision(config)[1], "sampling": trainer.args.train_sampling_strategy,
            **measure(trainer, counting, clock, warmup, steps)}


def as_records(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The world model's examples as ``train sft`` records (prompt chat, assistant completion)."""
    return [{"prompt": example["prompt"], "completion": [{"role": "assistant", "content": example["answer"]}]}
            for example in examples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=Path, help="an examples.jsonl of a world-model run (default: draw from a small world)")
    parser.add_argument("--problems-per-template", type=int, default=3, help="size of the small world drawn without --examples")
    parser.add_argument("--batch-size", type=int, default=8, help="examples per step, both models (configs/sft_cpu.toml: 8)")
    parser.add_argument("--steps", type=int, default=8, help="timed steps per leg, after --warmup steps")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps first in every leg")
    parser.add_argument("--seed", type=int, default=0, help="seed of the world, the examples, the weights and the order")
    parser.add_argument("--note", default="", help="a word on the machine's state, kept in the results")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "world_model_speed.json")
    args = parser.parse_args()
    if args.warmup < 0 or args.steps < 1:
        parser.error("--warmup must be >= 0 and --steps >= 1")
    from data.jsonl import read_jsonl
    from training.world_model.examples import example_text
    from training.world_model.tokenizer import train_tokenizer

    started = time.time()
    examples = read_jsonl(args.examples) if args.examples else drawn_examples(args.problems_per_template, args.seed)
    if len(examples) < args.batch_size * (args.warmup + args.steps):
        sys.exit(f"world_model_speed.py: {len(examples)} examples is fewer than one pass of the legs needs")
    tokenizer = train_tokenizer((example_text(example) for example in examples), 1024, 2)  # [tokenizer] defaults
    records = as_records(examples)
    about = machine(args.note)
    legs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for index, side in enumerate(("world", "135m", "135m", "world")):  # ABBA
            run_dir = Path(scratch) / f"{index}-{side}"
            if side == "world":
                leg = world_leg(examples, tokenizer, args.batch_size, args.warmup, args.steps, args.seed, run_dir)
            else:
                config = smol_config(run_dir, args.batch_size, args.warmup + args.steps, "auto", True)
                leg = smol_leg(config, records, args.warmup, args.steps)
            legs.append({"leg": index + 1, "side": side, **leg})
            print(f"leg {index + 1} {side}: {leg['tokens_per_second']} tokens/s, {leg['examples_per_second']} examples/s, "
                  f"padding {leg['padding_fraction']:.1%}, {leg['precision']}", file=sys.stderr)
    world = pooled([leg for leg in legs if leg["side"] == "world"])
    smol = pooled([leg for leg in legs if leg["side"] == "135m"])
    for leg in legs:
        del leg["batches"]  # the same seeded order over the same rows on both sides: the same examples per window
    about["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    summary = {
        "machine": about,
        "settings": {"examples": len(examples), "source": str(args.examples) if args.examples else
                     f"world_examples of a world with problems_per_template={args.problems_per_template}, seed {args.seed}",
                     "batch_size": args.batch_size, "warmup_steps": args.warmup, "timed_steps": args.steps,
                     "order": "ABBA: world, 135M, 135M, world", "grouping": "training.trainers.batching (windows of 4 batches)",
                     "135m_configuration": "configs/sft_cpu.toml: full weights (lora = false)"},
        "world_model": world, "smollm2_135m": smol,
        "ratio_world_over_135m": {"examples_per_second": round(world["examples_per_second"] / smol["examples_per_second"], 1),
                                  "tokens_per_second": round(world["tokens_per_second"] / smol["tokens_per_second"], 1),
                                  "examples_per_second_neighbouring_legs": [  # legs 1/2 and 4/3
                                      round(legs[0]["examples_per_second"] / legs[1]["examples_per_second"], 1),
                                      round(legs[3]["examples_per_second"] / legs[2]["examples_per_second"], 1)]},
        "legs": legs, "wall_minutes": round((time.time() - started) / 60, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print("| model | precision | tokens/s | examples/s | padding |")
    print("|---|---|---|---|---|")
    for name, figures, leg in (("world model", world, legs[0]), ("SmolLM2-135M (full)", smol, legs[1])):
        print(f"| {name} | {leg['precision']} | {figures['tokens_per_second']} | {figures['examples_per_second']} | "
              f"{figures['padding_fraction']:.1%} |")
    ratio = summary["ratio_world_over_135m"]
    print(f"\nworld / 135M: {ratio['examples_per_second']}x examples/s, {ratio['tokens_per_second']}x tokens/s -> {args.out}")


if __name__ == "__main__":
    main()

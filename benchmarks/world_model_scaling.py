"""How the world model's truth metrics grow with size and training compute: is it the compute, or the data?

Three steps, so that the training can run on a machine that has only torch and transformers (a
lent GPU), and the judging stays with the checker on this one:

    python benchmarks/world_model_scaling.py prepare --run runs/world-lm --out runs/scaling
    python benchmarks/world_model_scaling.py train --input runs/scaling --out runs/scaling/outputs \
        --variant small:600 --variant small:3000 --variant wide:3000
    python benchmarks/world_model_scaling.py score --input runs/scaling --outputs runs/scaling/outputs

``prepare`` tokenizes a world-model run's teaching examples (``RUN/examples.jsonl``, its
``tokenizer/``) and the prompts of its held-out world (``RUN/world/test_{in,out}``: every proof's
verification prompt, every problem's generation prompt) into ``rows.json.gz`` and ``prompts.json``.
``train`` trains each variant (``NAME:STEPS``; sizes in ``SIZES``) from scratch on those rows,
seed 0, batch 32, AdamW at 1e-3 with warm-up and cosine decay, bf16 autocast on a GPU, then
decodes: one greedy analysis per proof, ``--samples`` sampled proofs per problem (temperature
1), and writes the token ids (``VARIANT.json``); the weights are saved first (``VARIANT/``, bfloat16),
and ``--no-decode`` stops there (``VARIANT.losses.json``). ``score`` decodes them with the run's
tokenizer and judges them with the checker: the verifier's recall per true score, balanced
accuracy and localisation beside the majority-class and random-step baselines, the
generator's pass@1 and pass@k (``eval.calibration``). Training here is the product's model
(``transformers``' Llama) with a plain loop, so that it runs where TRL and datasets are absent.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

SIZES = {
    "small": {"hidden_size": 256, "layers": 6, "heads": 4, "intermediate_size": 768},
    "wide": {"hidden_size": 384, "layers": 8, "heads": 6, "intermediate_size": 1152},
    "deep": {"hidden_size": 256, "layers": 12, "heads": 4, "intermediate_size": 768},
}
BATCH = 32
LEARNING_RATE = 1e-3
WARMUP = 100


def prepare(run: Path, out: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from data.jsonl import read_jsonl
    from generator.prompt import generation_messages
    from training.world_model.examples import WORLD_PROMPTS
    from training.world_model.tokenizer import load_tokenizer, prompt_ids
    from training.world_model.trainer import IGNORED, tokenized
    from training.role_data.records import as_dicts
    from verifier.prompt import verification_messages

    tokenizer = load_tokenizer(run / "tokenizer")
    examples = read_jsonl(run / "examples.jsonl")
    rows, too_long = tokenized(examples, tokenizer, 768)
    prompts: dict[str, Any] = {"pad": tokenizer.pad_token_id, "end": tokenizer.eos_token_id, "vocab": len(tokenizer),
                               "verify": [], "generate": []}
    for split in ("test_in", "test_out"):
        for proof in read_jsonl(run / "world" / f"{split}.jsonl"):
            messages = as_dicts(verification_messages(proof["problem"], proof["proof"], str(WORLD_PROMPTS)))
            prompts["verify"].append({"id": proof["id"], "split": split, "ids": prompt_ids(tokenizer, messages)})
        for problem in read_jsonl(run / "world" / f"{split}_problems.jsonl"):
            messages = as_dicts(generation_messages(problem["problem"], str(WORLD_PROMPTS)))
            prompts["generate"].append({"id": problem["id"], "split": split, "ids": prompt_ids(tokenizer, messages)})
    out.mkdir(parents=True, exist_ok=True)
    # Compact (a lent GPU takes 64 MiB a call): each row is its ids and where its answer starts (labels follow).
    with gzip.open(out / "rows.json.gz", "wt") as handle:
        json.dump([[row["input_ids"], row["labels"].count(IGNORED)] for row in rows], handle)
    (out / "prompts.json").write_text(json.dumps(prompts))
    (out / "source.json").write_text(json.dumps({"run": str(run), "rows": len(rows), "too_long": too_long}))
    print(f"{len(rows)} rows, {len(prompts['verify'])} verification and {len(prompts['generate'])} generation prompts in {out}")


def new_model(size: dict[str, int], prompts: dict[str, Any]) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    arguments = dict(vocab_size=prompts["vocab"], hidden_size=size["hidden_size"], intermediate_size=size["intermediate_size"],
                     num_hidden_layers=size["layers"], num_attention_heads=size["heads"], num_key_value_heads=size["heads"],
                     max_position_embeddings=1024, tie_word_embeddings=True, bos_token_id=None,
                     eos_token_id=prompts["end"], pad_token_id=prompts["pad"])
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(**arguments))


def batches(rows: list[dict[str, Any]], steps: int, rng: random.Random) -> Any:
    """Length-grouped batches, forever: shuffle, cut into chunks of 50 batches, sort each chunk by length."""
    while True:
        order = list(range(len(rows)))
        rng.shuffle(order)
        for start in range(0, len(order), 50 * BATCH):
            chunk = sorted(order[start: start + 50 * BATCH], key=lambda index: len(rows[index]["input_ids"]))
            groups = [chunk[at: at + BATCH] for at in range(0, len(chunk), BATCH)]
            rng.shuffle(groups)
            yield from groups


def collate(rows: list[dict[str, Any]], pad: int, device: str) -> dict[str, Any]:
    import torch

    longest = max(len(row["input_ids"]) for row in rows)
    ids = [row["input_ids"] + [pad] * (longest - len(row["input_ids"])) for row in rows]
    labels = [row["labels"] + [-100] * (longest - len(row["labels"])) for row in rows]
    mask = [[1] * len(row["input_ids"]) + [0] * (longest - len(row["input_ids"])) for row in rows]
    return {name: torch.tensor(value, device=device) for name, value in
            (("input_ids", ids), ("labels", labels), ("attention_mask", mask))}


def decode(model: Any, prompts: list[list[int]], pad: int, end: int, device: str, samples: int, greedy: bool,
           max_new: int) -> list[list[list[int]]]:
    import torch

    outputs: list[list[list[int]]] = []
    for start in range(0, len(prompts), 256):
        chunk = prompts[start: start + 256]
        longest = max(map(len, chunk))
        ids = torch.tensor([[pad] * (longest - len(p)) + p for p in chunk], device=device)
        mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in chunk], device=device)
        with torch.no_grad(), torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device.startswith("cuda")):
            made = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new, do_sample=not greedy,
                                  temperature=None if greedy else 1.0, top_p=None, top_k=None,
                                  num_return_sequences=samples, pad_token_id=pad, eos_token_id=end)
        made = made[:, longest:].tolist()
        for index in range(len(chunk)):
            outputs.append([[token for token in sequence if token != pad] for sequence in made[index * samples: (index + 1) * samples]])
    return outputs


def train(input_dir: Path, out: Path, variants: list[str], samples: int, decoding: bool = True) -> None:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    with gzip.open(input_dir / "rows.json.gz", "rt") as handle:
        rows = [{"input_ids": ids, "labels": [-100] * start + ids[start:]} for ids, start in json.load(handle)]
    prompts = json.loads((input_dir / "prompts.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    for variant in variants:
        name, steps_text = variant.split(":")
        steps = int(steps_text)
        model = new_model(SIZES[name], prompts).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.98), weight_decay=0.1)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / WARMUP) * (
            0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, step / steps)))))
        stream = batches(rows, steps, random.Random(0))
        started, tokens, losses = time.perf_counter(), 0, []
        model.train()
        for step in range(steps):
            batch = collate([rows[index] for index in next(stream)], prompts["pad"], device)
            with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device == "cuda"):
                loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            tokens += int(batch["attention_mask"].sum())
            if step % 50 == 0 or step == steps - 1:
                losses.append((step, round(float(loss), 4)))
        seconds = time.perf_counter() - started
        model.eval()
        # The weights first: a call cut short while decoding still brings the model back (judged here with
        # `proofsmith world calibrate` once the run's tokenizer and prompts are copied beside it).
        # In bfloat16: a lent GPU brings back files of at most 16 MiB (this model is 21 MB in float32).
        model.to(torch.bfloat16).save_pretrained(str(out / variant.replace(":", "_")), safe_serialization=True)
        model.float()
        print(f"{variant}: {seconds:.0f} s, {tokens} tokens, final loss {losses[-1][1]}", flush=True)
        if not decoding:
            (out / f"{variant.replace(':', '_')}.losses.json").write_text(json.dumps({
                "variant": variant, "steps": steps, "seconds": round(seconds, 1), "trained_tokens": tokens, "losses": losses}))
            continue
        # Worked analyses run to ~370 tokens and generated proofs with their self-evaluation to ~560.
        verify = decode(model, [item["ids"] for item in prompts["verify"]], prompts["pad"], prompts["end"], device, 1, True, 448)
        generate = decode(model, [item["ids"] for item in prompts["generate"]], prompts["pad"], prompts["end"], device,
                          samples, False, 640)
        (out / f"{variant.replace(':', '_')}.json").write_text(json.dumps({
            "variant": variant, "size": SIZES[name], "steps": steps, "parameters": sum(p.numel() for p in model.parameters()),
            "seconds": round(seconds, 1), "trained_tokens": tokens, "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
            "losses": losses, "verify": verify, "generate": generate}))


def score(input_dir: Path, outputs: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from eval.calibration import calibration_table
    from eval.calibration_run import generation_record, verification_record, read_split
    from engine.base import Completion, GenerationResult
    from training.world_model.tokenizer import load_tokenizer

    source = json.loads((input_dir / "source.json").read_text())
    run = Path(source["run"])
    tokenizer = load_tokenizer(run / "tokenizer")
    prompts = json.loads((input_dir / "prompts.json").read_text())
    problems, proofs = {}, {}
    for split in ("test_in", "test_out"):
        split_problems, split_proofs = read_split(run / "world", split)
        problems.update({row["id"]: row for row in split_problems})
        proofs.update({row["id"]: row for row in split_proofs})

    def result(sequences: list[list[int]]) -> GenerationResult:
        completions = tuple(Completion(tokenizer.decode(ids, skip_special_tokens=True),
                                       "stop" if ids and ids[-1] == prompts["end"] else "length", len(ids)) for ids in sequences)
        return GenerationResult(completions, 0, sum(len(ids) for ids in sequences), 0.0)

    summary = []
    for path in sorted(path for path in outputs.glob("*.json") if not path.name.endswith(".losses.json")
                       and path.name != "summary.json"):
        document = json.loads(path.read_text())
        verifications = [verification_record(proofs[item["id"]], result(made), None)
                         for item, made in zip(prompts["verify"], document["verify"])]
        generations = [generation_record(problems[item["id"]], result(made), None)
                       for item, made in zip(prompts["generate"], document["generate"])]
        table = calibration_table(generations, verifications)
        for row in table:
            if row["family"] != "all":
                continue
            verifier, generator = row["verifier"], row["generator"]
            summary.append({"variant": document["variant"], "split": row["split"], "parameters": document["parameters"],
                            "seconds": document["seconds"], "trained_tokens": document["trained_tokens"],
                            "final_loss": document["losses"][-1][1],
                            **{name: verifier.get(name) for name in ("recall_0", "recall_0.5", "recall_1", "balanced_accuracy",
                                                                     "localisation", "format_failure_rate")},
                            "majority_balanced": verifier["majority_class"].get("balanced_accuracy"),
                            "random_step_localisation": verifier["random_step"].get("localisation"),
                            "pass@1": generator["pass@1"], "pass@k": generator["pass@k"]})
    (outputs / "summary.json").write_text(json.dumps(summary, indent=2))
    for line in summary:
        print(json.dumps(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    step = commands.add_parser("prepare")
    step.add_argument("--run", required=True, type=Path)
    step.add_argument("--out", required=True, type=Path)
    step = commands.add_parser("train")
    step.add_argument("--input", required=True, type=Path)
    step.add_argument("--out", required=True, type=Path)
    step.add_argument("--variant", action="append", required=True)
    step.add_argument("--samples", type=int, default=4)
    step.add_argument("--no-decode", action="store_true", help="train and save the weights only")
    step = commands.add_parser("score")
    step.add_argument("--input", required=True, type=Path)
    step.add_argument("--outputs", required=True, type=Path)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.run, args.out)
    elif args.command == "train":
        train(args.input, args.out, args.variant, args.samples, not args.no_decode)
    else:
        score(args.input, args.outputs)


if __name__ == "__main__":
    main()

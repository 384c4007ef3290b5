"""The world model: a small decoder trained from scratch on the ground-truth world, in minutes on a CPU.

- ``config``: its settings (pure data).
- ``examples``: the three roles' prompts and answers drawn from world proofs; ``prompts/``: the short world prompt set.
- ``tokenizer``: a byte-level BPE trained on that text, with a chat template.
- ``architecture``: transformers' Llama decoder, sized and freshly initialised.
- ``trainer``: the training run (transformers' Trainer: length-grouped batches, bf16 autocast where native).
- ``run``: one resumable run, stage by stage.

The result is an ordinary checkpoint: nothing in the roles or engines special-cases it.
"""

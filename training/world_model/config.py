"""Settings of ``proofsmith world model``: the world it learns from, the examples, the tokenizer, the
architecture and the training run. Pure data, no torch (``tests/test_layers.py`` checks it).

One TOML file configures one run (``configs/world_model.toml``); ``--set section.key=value``
overrides a field, with the same precedence as every other command.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from data.world.config import WorldConfig

PRECISIONS: tuple[str, ...] = ("auto", "bf16", "fp32")
ANALYSIS_STYLES: tuple[str, ...] = ("worked", "difference", "varied")
DECISION_PARTS: tuple[str, ...] = ("right", "verdict")
"""The parts of each comparison ``training.decision_weight`` weights by default (``data.world.work.COMPARED_SIDES`` groups)."""
FLAWED_RIGHT = "flawed_right"
"""The right side of a worked step that says "They differ": the flawed value, expanded from the proof's right side."""
KNOWN_DECISION_PARTS: tuple[str, ...] = (*DECISION_PARTS, FLAWED_RIGHT)
PAIRS_PER_DRILL = 8
"""Comparisons in one comparison drill, alternately agreeing and differing (which comes first is drawn)."""


def training_world() -> WorldConfig:
    """The world the default run draws: many problems per template (a fresh, large training split)."""
    return WorldConfig(problems_per_template=400, test_problems_per_template=10)


@dataclass
class ExampleSettings:
    """What the model is taught per training problem: the three roles' prompts and answers."""

    verifier_per_problem: int = 4
    """Verifier examples (proof under review -> analysis naming the first bad step, and the score) per problem, drawn in turn from each true score the problem has (1, 0.5, 0), so no score dominates."""
    generator_per_problem: int = 1
    """Generator examples (problem -> numbered proof and its honest self-evaluation) per problem, from its correct proofs."""
    generator_flawed_share: float = 0.2
    """Share of generator examples that write a flawed proof and admit its flaw in the self-evaluation (honesty is taught, not only correct proofs)."""
    meta_per_problem: int = 1
    """Meta-verifier examples (a critique of a proof -> its rating: true, invented defect or wrong score) per problem."""
    refine_per_problem: int = 0
    """Refinement examples (the problem, a flawed proof and an evaluation naming its first bad step -> a correct proof and its self-evaluation, the refine prompt of `prove --max-rounds` > 1) per problem that has both; 0: the model is never taught to refine."""
    analysis: str = "worked"
    """How analyses are written: worked (each step restated, its work shown, the verdict last), difference (worked, an equality's left minus right written before its verdict, so the verdict reads whether it is 0) or varied (the world's varied wording, as `proofsmith world` writes critiques)."""
    comparison_drills: float = 0.0
    """Comparison drills per problem (a fraction is a share of problems): 8 worked-step verdicts of the training proofs' sides a drill (one example, or 8 / drill_lines), half "They differ" (training/world_model/drills.py), the verdict the analyses teach one token in ten times rarer."""
    drill_claims: bool = False
    """Each drill line restates the claim its sides came from first (`Step k: L = R. Expanded, ...`): the sides are computed from what is written, half the claims flawed; false: the sides alone."""
    drill_lines: int = 8
    """Lines of a drill example: each drill's 8 comparisons are written as 8 / this examples (1, 2, 4 or 8), the same pairs in the same order; 8 claim lines run past training.max_length one time in five (the long identity claims), and those are left out."""
    seed: int = 0
    """Seed of the draw of examples and of their order."""

    def __post_init__(self) -> None:
        if min(self.verifier_per_problem, self.generator_per_problem, self.meta_per_problem, self.refine_per_problem,
               self.comparison_drills) < 0:
            raise ValueError("examples per problem must be >= 0")
        if self.drill_lines < 1 or PAIRS_PER_DRILL % self.drill_lines:
            raise ValueError(f"examples.drill_lines must divide a drill's {PAIRS_PER_DRILL} comparisons, got {self.drill_lines}")
        if self.verifier_per_problem + self.generator_per_problem + self.meta_per_problem + self.refine_per_problem == 0:
            raise ValueError("at least one role needs examples")
        if not 0 <= self.generator_flawed_share <= 1:
            raise ValueError("generator_flawed_share must be in [0, 1]")
        if self.analysis not in ANALYSIS_STYLES:
            raise ValueError(f"unknown analysis style {self.analysis!r}; choose {', '.join(ANALYSIS_STYLES)}")


@dataclass
class TokenizerSettings:
    vocab_size: int = 1024
    """Size of the byte-level BPE vocabulary trained on the examples' text (special tokens included)."""
    min_frequency: int = 2
    """A pair of tokens is merged only if it occurs at least this often."""

    def __post_init__(self) -> None:
        if self.vocab_size < 300:
            raise ValueError("vocab_size must be >= 300 (256 bytes plus the special tokens and some merges)")
        if self.min_frequency < 1:
            raise ValueError("min_frequency must be >= 1")


@dataclass
class ArchitectureSettings:
    """A decoder of transformers' Llama architecture, trained from scratch."""

    hidden_size: int = 256
    """Width of the residual stream."""
    layers: int = 6
    """Decoder layers."""
    heads: int = 4
    """Attention heads (head size = hidden_size / heads; vLLM's CPU kernels take 32, 64, 80, 96, 112, 128)."""
    kv_heads: int = 4
    """Key/value heads (fewer than heads: grouped-query attention)."""
    intermediate_size: int = 768
    """Width of each MLP."""
    max_position_embeddings: int = 1024
    """Longest context the model is built for (prompts and answers longer than training.max_length are not taught)."""
    rope_theta: float = 10000.0
    """Base of the rotary position embedding."""
    tie_embeddings: bool = True
    """Share the input embedding and the output head."""

    def __post_init__(self) -> None:
        if min(self.hidden_size, self.layers, self.heads, self.kv_heads, self.intermediate_size) < 1:
            raise ValueError("sizes must be >= 1")
        if self.hidden_size % self.heads or self.heads % self.kv_heads:
            raise ValueError("hidden_size must divide by heads, and heads by kv_heads")


@dataclass
class WorldTrainingSettings:
    max_steps: int = 3000
    """Optimizer steps."""
    batch_size: int = 32
    """Examples per step."""
    learning_rate: float = 1e-3
    """Peak learning rate (AdamW), reached after the warm-up, then cosine decay to 10 % of it."""
    warmup_steps: int = 100
    """Linear warm-up steps."""
    weight_decay: float = 0.1
    """AdamW weight decay."""
    max_length: int = 768
    """Longest example in tokens (prompt and answer); longer ones are left out and counted."""
    group_by_length: bool = True
    """Batch examples of similar length together (less padding: the share is logged as padding_fraction)."""
    pad_to_multiple_of: int = 64
    """Pad each batch to a multiple of this many positions: a few shapes, not one per batch (1: to its longest example)."""
    precision: str = "auto"
    """auto (bf16 autocast on a GPU and on CPUs with native bf16 matmuls, else fp32, said in the log), bf16 or fp32."""
    save_steps: int = 250
    """Checkpoint every this many steps; a rerun resumes from the last whole one."""
    logging_steps: int = 10
    """Log loss, learning rate, tokens/s and padding every this many steps (TensorBoard and metrics.jsonl)."""
    decision_weight: float = 1.0
    """Weight of the decision's tokens in the loss, against 1 for every other answer token: each worked step's (and comparison drill line's) parts named in decision_parts, where a flawed step is caught (1: the plain mean over answer tokens)."""
    decision_parts: list[str] = field(default_factory=lambda: list(DECISION_PARTS))
    """Which tokens of a comparison decision_weight weights: right (the right side it writes), verdict (the word agree / differ), flawed_right (the right side of a worked step that differs: the flawed value; a drill line only with its claim)."""
    seed: int = 0
    """Seed of the initial weights and of the batch order."""

    def __post_init__(self) -> None:
        if self.decision_weight <= 0:
            raise ValueError("decision_weight must be > 0")
        if not self.decision_parts or set(self.decision_parts) - set(KNOWN_DECISION_PARTS):
            raise ValueError(f"decision_parts must name some of {', '.join(KNOWN_DECISION_PARTS)}, got {self.decision_parts}")
        if min(self.max_steps, self.batch_size, self.max_length, self.save_steps, self.logging_steps, self.pad_to_multiple_of) < 1:
            raise ValueError("max_steps, batch_size, max_length, save_steps, logging_steps and pad_to_multiple_of must be >= 1")
        if self.learning_rate <= 0 or self.warmup_steps < 0 or self.weight_decay < 0:
            raise ValueError("learning_rate must be > 0, warmup_steps and weight_decay >= 0")
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; choose {', '.join(PRECISIONS)}")


@dataclass
class WorldModelConfig:
    run_dir: str = "runs/world-lm"
    """Run directory: config.toml, world/, examples.jsonl, tokenizer/, checkpoints/, tensorboard/, metrics.jsonl, final/, summary.json."""
    world: WorldConfig = field(default_factory=training_world)
    """The world drawn fresh for this run: its train split is taught, its test splits (written under world/) are never seen."""
    examples: ExampleSettings = field(default_factory=ExampleSettings)
    """The mix of role examples per training problem."""
    tokenizer: TokenizerSettings = field(default_factory=TokenizerSettings)
    """The byte-level BPE trained on the examples."""
    architecture: ArchitectureSettings = field(default_factory=ArchitectureSettings)
    """The model's shape."""
    training: WorldTrainingSettings = field(default_factory=WorldTrainingSettings)
    """The optimisation."""
    init_model: str = ""
    """Continue this world model instead of starting from fresh weights: `world-model` (the bundled one) or a checkpoint directory such as runs/world-lm/final; its tokenizer is kept and [architecture] must describe it (empty: fresh weights and a new tokenizer)."""
    prompts_dir: str = ""
    """Prompt templates the examples are written with (empty: the short world prompts in training/world_model/prompts, copied to final/prompts for --prompts)."""

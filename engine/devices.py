"""Device and dtype choices shared by the local backends (torch is imported only when asked)."""

from __future__ import annotations

from typing import Any


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pick_device(requested: str) -> str:
    """``auto`` means CUDA when a GPU is visible, else CPU."""
    if requested == "auto":
        return "cuda" if cuda_available() else "cpu"
    return requested


def pick_dtype(requested: str, device: str) -> Any:
    """``auto`` means bfloat16 on GPU and float32 on CPU (bf16 matmuls are slow on most CPUs)."""
    import torch

    if requested == "auto":
        return torch.bfloat16 if device == "cuda" else torch.float32
    return getattr(torch, requested)

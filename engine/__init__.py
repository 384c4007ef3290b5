"""Inference backends behind one small interface (see ``engine.base``).

Importing this package is cheap: backends import torch, vLLM or httpx only when built.
"""

from engine.base import ChatMessage, Completion, Engine, GenerationRequest, GenerationResult

__all__ = ["ChatMessage", "Completion", "Engine", "GenerationRequest", "GenerationResult"]

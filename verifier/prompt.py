"""Build verification prompts from the ``verify`` template."""

from __future__ import annotations

from pathlib import Path

from engine.base import ChatMessage
from verifier.templates import fence, load_template

PROMPTS_DIR = Path(__file__).parent / "prompts"


def verification_messages(problem: str, proof: str, prompts_dir: str | Path | None = None) -> tuple[ChatMessage, ...]:
    """The chat messages asking the verifier to grade ``proof`` for ``problem``."""
    template = load_template("verify", PROMPTS_DIR, prompts_dir)
    return template.render({"problem": fence(problem, "problem"), "proof": fence(proof, "proof")})

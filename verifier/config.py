"""Settings of ``proofsmith verify``. Pure data, no torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class VerifyConfig:
    samples: int = 4
    """Verifier analyses per proof; the reported score is their mean."""

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError("samples must be >= 1")


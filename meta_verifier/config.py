"""Settings of ``proofsmith meta-verify``. Pure data, no torch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class MetaVerifyConfig:
    samples: int = 1
    """Meta-verifier ratings per analysis; the reported rating is their mean."""

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError("samples must be >= 1")

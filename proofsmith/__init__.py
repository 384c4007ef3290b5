"""proofsmith: self-verifiable math proofs. The front door: CLI, config, run files."""

__version__ = "0.1.0"

"""Evaluation: verifier agreement with human grades, final-answer checks, prover benchmarks."""

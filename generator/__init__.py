"""Proof generation with an honest self-evaluation; sequential refinement; (later) search."""

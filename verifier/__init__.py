"""Verification: prompt, score/format parser (shared by every role), n-sample scoring."""

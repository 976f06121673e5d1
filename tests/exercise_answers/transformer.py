"""Answers for the graded exercises of the transformer chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "decoder_mask": [
        # causal only: padded keys still visible
        """
def decoder_mask(lengths, L):
    return torch.ones(L, L, dtype=torch.bool).tril().expand(len(lengths), L, L)
""",
        # strictly earlier keys (j < i): a token cannot see itself
        """
def decoder_mask(lengths, L):
    real = torch.arange(L) < lengths.unsqueeze(1)
    return torch.ones(L, L, dtype=torch.bool).tril(-1).unsqueeze(0) & real.unsqueeze(1)
""",
    ],
    "transformer_lr": [
        # the warm-up exponent -0.5 instead of -1.5
        """
def transformer_lr(step, d_model, warmup):
    return d_model**-0.5 * min(step**-0.5, step * warmup**-0.5)
""",
        # max instead of min
        """
def transformer_lr(step, d_model, warmup):
    return d_model**-0.5 * max(step**-0.5, step * warmup**-1.5)
""",
    ],
    "smoothed_loss": [
        # eps spread over the V - 1 wrong classes (another convention, not the one asked)
        """
def smoothed_loss(logits, target, eps):
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, eps / (logits.shape[-1] - 1))
    q[torch.arange(len(target)), target] = 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
        # log(softmax): overflows to inf for large logits
        """
def smoothed_loss(logits, target, eps):
    log_p = torch.log(logits.softmax(dim=-1))
    q = torch.full_like(log_p, eps / logits.shape[-1])
    q[torch.arange(len(target)), target] += 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
        # smoothing ignored
        """
def smoothed_loss(logits, target, eps):
    return torch.nn.functional.cross_entropy(logits, target)
""",
    ],
    "encoder_layer_parameters": [
        # heads counted as if each had full-width projections
        """
def encoder_layer_parameters(E, d_ff, H):
    return H * 4 * (E * E + E) + 2 * E * d_ff + d_ff + E + 4 * E
""",
        # biases forgotten
        """
def encoder_layer_parameters(E, d_ff, H):
    return 4 * E * E + 2 * E * d_ff + 4 * E
""",
        # the LayerNorms forgotten
        """
def encoder_layer_parameters(E, d_ff, H):
    return 4 * (E * E + E) + 2 * E * d_ff + d_ff + E
""",
        # the output projection W_O forgotten
        """
def encoder_layer_parameters(E, d_ff, H):
    return 3 * (E * E + E) + 2 * E * d_ff + d_ff + E + 4 * E
""",
    ],
    "decoding_step_macs": [
        # t tokens in the prefix instead of t + 1
        """
def decoding_step_macs(t, E, cache):
    return 3 * E * E + 2 * t * E if cache else 3 * t * E * E + 2 * t * t * E
""",
        # the attention itself forgotten: projections only
        """
def decoding_step_macs(t, E, cache):
    return 3 * E * E if cache else 3 * (t + 1) * E * E
""",
        # with the cache, the queries of every position still recomputed
        """
def decoding_step_macs(t, E, cache):
    n = t + 1
    return (n * E * E + 2 * E * E + 2 * n * E) if cache else 3 * n * E * E + 2 * n * n * E
""",
    ],
}

DELEGATING = {
    "decoder_mask": """
from seqlab.masks import causal_mask, padding_mask
def decoder_mask(lengths, L):
    return causal_mask(L).unsqueeze(0) & padding_mask(lengths, L).unsqueeze(1)
""",
    "transformer_lr": """
from seqlab.train import warmup_inverse_sqrt as transformer_lr
""",
    "smoothed_loss": """
def smoothed_loss(logits, target, eps):
    return torch.nn.functional.cross_entropy(logits, target, label_smoothing=eps)
""",
    "encoder_layer_parameters": """
from seqlab.transformer import EncoderLayer
from seqlab.utils import count_parameters
def encoder_layer_parameters(E, d_ff, H):
    return count_parameters(EncoderLayer(E, H, d_ff))
""",
}

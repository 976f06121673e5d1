"""Answers for the graded exercises of the self_attention chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

WRONG = {
    "masked_attention": [
        # no 1 / sqrt(D) scaling
        """
def masked_attention(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1)).masked_fill(~mask, float("-inf"))
    seen = mask.any(dim=-1, keepdim=True)
    return scores.masked_fill(~seen, 0.0).softmax(dim=-1).masked_fill(~seen, 0.0) @ v
""",
        # the mask read the other way round
        """
def masked_attention(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(mask, float("-inf"))
    return scores.softmax(dim=-1) @ v
""",
        # the softmax without subtracting the row's largest score: overflows to inf / inf = NaN
        """
def masked_attention(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    e = torch.exp(scores).masked_fill(~mask, 0.0)
    total = e.sum(dim=-1, keepdim=True)
    return (e / torch.where(total > 0, total, 1.0)) @ v
""",
        # right, except that a fully masked row gives NaN
        """
def masked_attention(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1) @ v
""",
    ],
    "to_heads_from_heads": [
        # a reshape without the transpose mixes tokens into heads
        """
def to_heads(x, H):
    N, T, E = x.shape
    return x.reshape(N, H, T, E // H)


def from_heads(x):
    N, H, T, D = x.shape
    return x.reshape(N, T, H * D)
""",
    ],
    "causal": [
        # the future instead of the past
        """
def causal(T):
    return torch.ones(T, T, dtype=torch.bool).triu()
""",
        # j < i, as in the lecture notes: a token cannot see itself
        """
def causal(T):
    return torch.ones(T, T, dtype=torch.bool).tril(-1)
""",
    ],
    "mha_parameters": [
        # forgot the biases
        """
def mha_parameters(E, H):
    return 4 * E * E
""",
        # forgot the output projection W^O
        """
def mha_parameters(E, H):
    return 3 * E * E + 3 * E
""",
        # every head with full-width projections
        """
def mha_parameters(E, H):
    return H * (4 * E * E + 4 * E)
""",
        # right at H = 2 only: head width counted as E / H in W^O too
        """
def mha_parameters(E, H):
    return 3 * E * E + 3 * E + E * E * 2 // H + E
""",
    ],
    "max_path_length": [
        # the two layers swapped
        """
def max_path_length(layer, n):
    return 1 if layer == "recurrent" else n - 1
""",
        # counts positions, not steps
        """
def max_path_length(layer, n):
    return n if layer == "recurrent" else 1
""",
        # a logarithmic path for self-attention (that is a stack of dilated convolutions)
        """
def max_path_length(layer, n):
    import math
    return n - 1 if layer == "recurrent" else math.ceil(math.log2(n))
""",
    ],
    "wrong_entry": [
        # the diagonal: j < i, as some texts write it
        """
wrong_entry = "c"
""",
        # an entry below the diagonal, which is right
        """
wrong_entry = "d"
""",
        """
wrong_entry = "a"
""",
        # a position instead of a letter
        """
wrong_entry = (1, 2)
""",
    ],
}

DELEGATING = {
    "masked_attention": """
def masked_attention(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    seen = mask.any(dim=-1, keepdim=True)
    weights = scores.masked_fill(~mask, float("-inf")).masked_fill(~seen, 0.0).softmax(dim=-1)
    return weights.masked_fill(~seen, 0.0) @ v
""",
    "to_heads_from_heads": """
from seqlab.multihead import merge_heads, split_heads
def to_heads(x, H):
    return split_heads(x, H)
def from_heads(x):
    return merge_heads(x)
""",
    "causal": """
def causal(T):
    from seqlab.masks import causal_mask
    return causal_mask(T)
""",
    "mha_parameters": """
def mha_parameters(E, H):
    import torch
    return sum(p.numel() for p in torch.nn.MultiheadAttention(E, H).parameters())
""",
}

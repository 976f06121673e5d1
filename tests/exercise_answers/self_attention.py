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
        # right, except that a fully masked row gives NaN
        """
def masked_attention(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1) @ v
""",
    ],
    "heads": [
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
}

DELEGATING = {
    "masked_attention": """
def masked_attention(q, k, v, mask):
    from seqlab.attention import scaled_dot_product_attention
    return scaled_dot_product_attention(q, k, v, mask)
""",
    "heads": """
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
}

"""Answers for the graded exercises of the chapter on what the block became, used by
tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one, and every
wrong answer fails a public test case.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

FORMAT_ONLY: set[str] = set()

WRONG = {
    "grouped_attention": [
        # heads interleaved: query head h reads key/value head h % G
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    groups = q.reshape(N, H // G, G, L, D)
    scores = groups @ k.unsqueeze(1).transpose(-2, -1) / math.sqrt(D)
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
    return (weights @ v.unsqueeze(1)).reshape(N, H, L, D)
""",
        # the causal mask of a square matrix: the cached keys forgotten (query i sees keys <= i)
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    groups = q.reshape(N, G, H // G, L, D)
    scores = groups @ k.unsqueeze(2).transpose(-2, -1) / math.sqrt(D)
    allowed = torch.ones(L, S, dtype=torch.bool).tril()
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
    return (weights @ v.unsqueeze(2)).reshape(N, H, L, D)
""",
        # no 1 / sqrt(D)
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    groups = q.reshape(N, G, H // G, L, D)
    scores = groups @ k.unsqueeze(2).transpose(-2, -1)
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
    return (weights @ v.unsqueeze(2)).reshape(N, H, L, D)
""",
        # no mask at all: every query sees every key
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G = k.shape[1]
    groups = q.reshape(N, G, H // G, L, D)
    weights = (groups @ k.unsqueeze(2).transpose(-2, -1) / math.sqrt(D)).softmax(dim=-1)
    return (weights @ v.unsqueeze(2)).reshape(N, H, L, D)
""",
    ],
    "llama_parameters": [
        # keys and values as wide as the queries (multi-head attention's count)
        """
def llama_parameters(V, E, H, G, layers, F):
    return V * E + layers * (2 * E + 4 * E * E + 3 * E * F) + E
""",
        # the FFN counted as two matrices, as the GELU FFN
        """
def llama_parameters(V, E, H, G, layers, F):
    D = E // H
    return V * E + layers * (2 * E + 2 * E * E + 2 * E * G * D + 2 * E * F) + E
""",
        # the norms forgotten
        """
def llama_parameters(V, E, H, G, layers, F):
    D = E // H
    return V * E + layers * (2 * E * E + 2 * E * G * D + 3 * E * F)
""",
        # an output matrix of its own (not tied)
        """
def llama_parameters(V, E, H, G, layers, F):
    D = E // H
    return 2 * V * E + layers * (2 * E + 2 * E * E + 2 * E * G * D + 3 * E * F) + E
""",
    ],
    "max_batch": [
        # H heads cached, not G
        """
def max_batch(memory, T, layers, E, H, G, bytes_per_number):
    return memory // (2 * layers * E * bytes_per_number * T)
""",
        # keys only (no factor 2)
        """
def max_batch(memory, T, layers, E, H, G, bytes_per_number):
    return memory // (layers * G * (E // H) * bytes_per_number * T)
""",
        # rounded, not floored: a sequence that does not fit counted
        """
def max_batch(memory, T, layers, E, H, G, bytes_per_number):
    return round(memory / (2 * layers * G * (E // H) * bytes_per_number * T))
""",
        # a float, not an int
        """
def max_batch(memory, T, layers, E, H, G, bytes_per_number):
    return memory / (2 * layers * G * (E // H) * bytes_per_number * T)
""",
    ],
    "rope_complex": [
        # neighbouring features paired (2j, 2j + 1), not j and j + D/2
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    turn = torch.exp(1j * positions.to(torch.float64)[:, None] * omega)
    z = torch.complex(x[..., 0::2].double(), x[..., 1::2].double()) * turn
    return torch.stack([z.real, z.imag], dim=-1).flatten(-2).to(x.dtype)
""",
        # turned the wrong way: multiplied by e^{-i p w}
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    turn = torch.exp(-1j * positions.to(torch.float64)[:, None] * omega)
    z = torch.complex(*x.double().chunk(2, dim=-1)) * turn
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
""",
        # frequencies base^(-j / D): half the exponent
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D // 2, dtype=torch.float64) / D)
    turn = torch.exp(1j * positions.to(torch.float64)[:, None] * omega)
    z = torch.complex(*x.double().chunk(2, dim=-1)) * turn
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
""",
        # the complex tensor returned, not the real features
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    turn = torch.exp(1j * positions.to(torch.float64)[:, None] * omega)
    return torch.complex(*x.double().chunk(2, dim=-1)) * turn
""",
    ],
}

DELEGATING = {
    "grouped_attention": """
def grouped_attention(q, k, v):
    L, S = q.shape[2], k.shape[2]
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=True)
""",
    "rope_complex": """
from seqlab.rope import apply_rope
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    theta = positions.to(torch.float64)[:, None] * omega
    theta = torch.cat([theta, theta], dim=-1)
    return apply_rope(x, theta.cos(), theta.sin())
""",
}

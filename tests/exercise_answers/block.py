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
        # the window ignored: every block caches all T tokens (the page's bytes per token)
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    return memory // (2 * layers * G * (E // H) * bytes_per_number * T)
""",
        # the window applied to every block, the global ones too
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    return memory // (2 * layers * G * (E // H) * bytes_per_number * min(T, W))
""",
        # a windowed block counted at W tokens even when the text is shorter than the window
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * W
    return memory // (2 * G * (E // H) * bytes_per_number * cached)
""",
        # H heads cached, not G
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * min(T, W)
    return memory // (2 * E * bytes_per_number * cached)
""",
        # keys only (no factor 2)
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * min(T, W)
    return memory // (G * (E // H) * bytes_per_number * cached)
""",
        # rounded, not floored: a sequence that does not fit counted
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * min(T, W)
    return round(memory / (2 * G * (E // H) * bytes_per_number * cached))
""",
        # a float, not an int
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * min(T, W)
    return memory / (2 * G * (E // H) * bytes_per_number * cached)
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

# Wrong answers of the kinds that earned points before the checks tested the property the text
# states (issue 47): each fails a public test case.
WRONG_NEW = {
    "grouped_attention": [
        # the heads copied by indexing, a way the forbidden names do not cover
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    index = torch.arange(H) // (H // G)
    k, v = k[:, index], v[:, index]
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1) @ v
""",
        # the heads copied by torch.cat of each group's head, H / G times
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    k = torch.cat([k[:, g : g + 1] for g in range(G) for _ in range(H // G)], dim=1)
    v = torch.cat([v[:, g : g + 1] for g in range(G) for _ in range(H // G)], dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1) @ v
""",
        # the heads copied by adding zeros of the query heads' shape (broadcasting, materialised)
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    zeros = torch.zeros(N, G, H // G, S, D, dtype=q.dtype)
    k = (k.unsqueeze(2) + zeros).reshape(N, H, S, D)
    v = (v.unsqueeze(2) + zeros).reshape(N, H, S, D)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1) @ v
""",
        # the scores as a broadcast product summed over D: a tensor as large as the copies
        """
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    groups = q.reshape(N, G, H // G, L, 1, D)
    scores = (groups * k[:, :, None, None]).sum(-1) / math.sqrt(D)
    allowed = torch.ones(L, S, dtype=torch.bool).tril(S - L)
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
    return (weights @ v.unsqueeze(2)).reshape(N, H, L, D)
""",
        # a causal mask made once for 4,096 positions and sliced: wrong past the cache's size
        """
MASK = torch.ones(4096, 4096, dtype=torch.bool).tril()
def grouped_attention(q, k, v):
    N, H, L, D = q.shape
    G, S = k.shape[1], k.shape[2]
    groups = q.reshape(N, G, H // G, L, D)
    scores = groups @ k.unsqueeze(2).transpose(-2, -1) / math.sqrt(D)
    allowed = MASK[S - L : S, :S]
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
    return (weights @ v.unsqueeze(2)).reshape(N, H, L, D)
""",
    ],
    "llama_parameters": [
        # the head width by true division: a float count
        """
def llama_parameters(V, E, H, G, layers, F):
    D = E / H
    return V * E + layers * (2 * E + 2 * E * H * D + 2 * E * G * D + 3 * E * F) + E
""",
        # RMSNorm counted as LayerNorm, with a bias
        """
def llama_parameters(V, E, H, G, layers, F):
    D = E // H
    return V * E + layers * (4 * E + 2 * E * H * D + 2 * E * G * D + 3 * E * F) + 2 * E
""",
    ],
    "max_batch": [
        # a float division, floored: not exact past 2**53 bytes (one byte short counts one more)
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * min(T, W)
    return int(memory / (2 * G * (E // H) * bytes_per_number * cached))
""",
        # the same through math.floor
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * min(T, W)
    return math.floor(memory / (2 * G * (E // H) * bytes_per_number * cached))
""",
        # a window of W + 1 tokens: the query's own position counted twice
        """
def max_batch(memory, T, layers, local, W, E, H, G, bytes_per_number):
    cached = (layers - local) * T + local * min(T, W + 1)
    return memory // (2 * G * (E // H) * bytes_per_number * cached)
""",
    ],
    "rope_complex": [
        # the page's real rotation, cos and sin read off e^(i p w): no product of complex numbers
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    turn = torch.exp(1j * positions.to(torch.float64)[:, None] * omega)
    c, s = turn.real.to(x.dtype), turn.imag.to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)
""",
        # cos and sin from the math module, one angle at a time
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    angles = [[p * base ** (-2 * j / D) for j in range(D // 2)] for p in positions.tolist()]
    turn = torch.complex(torch.tensor([[math.cos(a) for a in row] for row in angles], dtype=torch.float64),
                         torch.tensor([[math.sin(a) for a in row] for row in angles], dtype=torch.float64))
    z = torch.complex(*x.double().chunk(2, dim=-1)) * turn
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
""",
        # the angles in x's dtype: float32 angles are off by 1e-5 at position 200
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=x.dtype) / D)
    turn = torch.exp(1j * positions.to(x.dtype)[:, None] * omega)
    z = torch.complex(*x.chunk(2, dim=-1)) * turn
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
""",
        # a cosine written as a shifted sine: sin is forbidden too
        """
def rope_complex(x, positions, base):
    D = x.shape[-1]
    omega = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    theta = positions.to(torch.float64)[:, None] * omega
    turn = torch.complex(torch.sin(theta + math.pi / 2), torch.sin(theta))
    z = torch.complex(*x.double().chunk(2, dim=-1)) * turn
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
""",
    ],
}

"""Answers for the graded exercises of the positional_encoding chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one, and every
wrong answer fails a public test case, except a wrong value for farthest_k (its public check
accepts the format only, and says so; the value is graded by a hidden test).
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

# Questions whose public check accepts the answer's format only (a letter, a whole number in a
# range) and says so; a wrong value in the right format passes it and fails a hidden test. Every
# other WRONG answer fails at least one public test case.
FORMAT_ONLY = {"farthest_k"}

WRONG = {
    "sinusoidal_table": [
        # sin and cos swapped
        """
def sinusoidal_table(T, E):
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = torch.cos(p * w), torch.sin(p * w)
    return table.float()
""",
        # exponent i / E instead of 2i / E
        """
def sinusoidal_table(T, E):
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    w = 10000 ** (-torch.arange(E // 2, dtype=torch.float64) / E)
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = torch.sin(p * w), torch.cos(p * w)
    return table.float()
""",
        # float64 where float32 is asked
        """
def sinusoidal_table(T, E):
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = torch.sin(p * w), torch.cos(p * w)
    return table
""",
        # sines in the first half, cosines in the second, instead of interleaved
        """
def sinusoidal_table(T, E):
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return torch.cat([torch.sin(p * w), torch.cos(p * w)], dim=1).float()
""",
        # the table of the public example, hard-coded
        """
def sinusoidal_table(T, E):
    return torch.tensor(
        [
            [0.0, 1.0, 0.0, 1.0],
            [0.841471, 0.540302, 0.0099998, 0.99995],
            [0.909297, -0.416147, 0.0199987, 0.9998],
        ]
    )
""",
    ],
    "offset_distance_sq": [
        # the formula of the lecture notes, without the square
        """
def offset_distance_sq(k, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return float((4 * torch.sin(k * w / 2)).sum())
""",
        # every pair treated as the fastest one
        """
def offset_distance_sq(k, E):
    return float(E / 2 * 4 * math.sin(k / 2) ** 2)
""",
        # summed over i < E instead of i < E/2 (the extra, slow terms matter at large k)
        """
def offset_distance_sq(k, E):
    w = 10000 ** (-2 * torch.arange(E, dtype=torch.float64) / E)
    return float((4 * torch.sin(k * w / 2) ** 2).sum())
""",
        # a one-element tensor, not a Python float
        """
def offset_distance_sq(k, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return (4 * torch.sin(k * w / 2) ** 2).sum()
""",
        # 2 - 2cos summed with the angle k w_i / 2 (half angle twice)
        """
def offset_distance_sq(k, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return float((2 - 2 * torch.cos(k * w / 2)).sum())
""",
    ],
    "pe_norm": [
        # the squared norm instead of the norm
        """
def pe_norm(E):
    return E / 2
""",
        # as if every feature were a unit vector
        """
def pe_norm(E):
    return math.sqrt(E)
""",
        # E / 4 (right at E = 8 only)
        """
def pe_norm(E):
    return E / 4
""",
        # rounded down to a whole number (right where E / 2 is a square)
        """
def pe_norm(E):
    return float(int(math.sqrt(E / 2)))
""",
        # log2 E - 1 (right at E = 8 only)
        """
def pe_norm(E):
    return math.log2(E) - 1
""",
        # the value at E = 8, hard-coded
        """
def pe_norm(E):
    return 2.0
""",
    ],
    "farthest_k": [
        # the largest offset is the farthest
        """
farthest_k = 10
""",
        # the angle where a pair is farthest, not an offset in 1..10
        """
farthest_k = math.pi
""",
        # the offset nearest 2 pi, where a pair comes back (graded by the hidden test)
        """
farthest_k = 6
""",
    ],
    "relative_scores": [
        # the offset taken as i - j: the biases of keys before and after the query swapped
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = torch.arange(L)[:, None] - torch.arange(S)[None, :]
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias[offset.clamp(-K, K) + K]
""",
        # no clipping: far offsets index past the table or wrap around with negative indices
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = torch.arange(S)[None, :] - torch.arange(L)[:, None]
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias[(offset + K) % (2 * K + 1)]
""",
        # the bias scaled by 1 / sqrt(D) along with the dot products
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = torch.arange(S)[None, :] - torch.arange(L)[:, None]
    return (q @ k.transpose(-2, -1) + bias[offset.clamp(-K, K) + K]) / math.sqrt(q.shape[-1])
""",
        # clipped after the shift, to 0 .. K instead of 0 .. 2K
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = torch.arange(S)[None, :] - torch.arange(L)[:, None]
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias[(offset + K).clamp(0, K)]
""",
        # the offsets built for a square L x L matrix (keys beyond L never get theirs)
        """
def relative_scores(q, k, bias, K):
    L = q.shape[1]
    offset = torch.arange(L)[None, :] - torch.arange(L)[:, None]
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias[offset.clamp(-K, K) + K]
""",
        # q scaled in place: the caller's queries change
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = torch.arange(S)[None, :] - torch.arange(L)[:, None]
    q /= math.sqrt(q.shape[-1])
    return q @ k.transpose(-2, -1) + bias[offset.clamp(-K, K) + K]
""",
    ],
}

DELEGATING = {
    "sinusoidal_table": """
def sinusoidal_table(T, E):
    import seqlab.positional
    return seqlab.positional.sinusoidal_encoding(T, E)
""",
    "offset_distance_sq": """
def offset_distance_sq(k, E):
    from seqlab.positional import sinusoidal_encoding
    table = sinusoidal_encoding(k + 1, E).double()
    return float(((table[k] - table[0]) ** 2).sum())
""",
}

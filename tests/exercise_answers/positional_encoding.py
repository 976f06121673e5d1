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
    table = sinusoidal_encoding(k + 1, E, dtype=torch.float64)
    return float(((table[k] - table[0]) ** 2).sum())
""",
}

# Plausible wrong answers of the kinds that got past the earlier tests (inputs changed in place,
# broken gradients, delegation, .squeeze() at size 1, the named edge cases, types, float64 from
# float32), written before the tests were strengthened: every one must fail a test case, and a
# public one unless it only delegates (tests/test_exercises.py).
WRONG_NEW = {
    "sinusoidal_table": [
        # .squeeze() of the angles: breaks at E = 2 (one pair)
        """
def sinusoidal_table(T, E):
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    angles = (p * 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)).squeeze()
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()
""",
        # the frequencies of the pairs' odd features too: w_i = 10000 ** (-i / E) for every feature
        """
def sinusoidal_table(T, E):
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    w = 10000 ** (-torch.arange(E, dtype=torch.float64) / E)
    table = torch.sin(p * w)
    table[:, 1::2] = torch.cos(p * w[1::2])
    return table.float()
""",
        # a float64 table when T = 1 (an early return for the first position only)
        """
def sinusoidal_table(T, E):
    if T == 1:
        return torch.tensor([[0.0, 1.0] * (E // 2)], dtype=torch.float64)
    p = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    table = torch.zeros(T, E, dtype=torch.float64)
    table[:, 0::2] = torch.sin(p * w)
    table[:, 1::2] = torch.cos(p * w)
    return table.float()
""",
    ],
    "offset_distance_sq": [
        # a one-element tensor, not a float
        """
def offset_distance_sq(k, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return (4 * torch.sin(k * w / 2) ** 2).sum()
""",
        # computed in float32: a relative error of about 1e-5 at large offsets
        """
def offset_distance_sq(k, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float32) / E)
    return float((4 * torch.sin(k * w / 2) ** 2).sum())
""",
        # builds the two encodings from a table of its own (what the question says not to do)
        """
def offset_distance_sq(k, E):
    p = torch.arange(k + 1, dtype=torch.float64).unsqueeze(1)
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    table = torch.cat([torch.sin(p * w), torch.cos(p * w)], dim=1)
    return float(((table[k] - table[0]) ** 2).sum())
""",
    ],
    "pe_norm": [
        # a one-element tensor, not a float
        """
def pe_norm(E):
    return torch.tensor(E / 2, dtype=torch.float64).sqrt()
""",
        # an int where the norm is a whole number
        """
def pe_norm(E):
    n = math.sqrt(E / 2)
    return int(n) if n == int(n) else n
""",
        # measured on a table of one position (builds the table the question rules out)
        """
def pe_norm(E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return float(torch.cat([torch.sin(w), torch.cos(w)]).norm())
""",
    ],
    "relative_scores": [
        # the bias entries read out as numbers: no gradient reaches the bias
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    B = torch.tensor([[bias[K + max(-K, min(K, j - i))].item() for j in range(S)] for i in range(L)])
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + B.to(q.dtype)
""",
        # no cast: float64 scores from float32 queries when the bias is float64
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = torch.arange(S)[None, :] - torch.arange(L)[:, None]
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + bias[offset.clamp(-K, K) + K]
""",
        # .squeeze() of the offsets: wrong shape at S = 1
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = (torch.arange(S)[None, :] - torch.arange(L)[:, None]).squeeze()
    B = bias[offset.clamp(-K, K) + K]
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + B.to(q.dtype)
""",
        # scales the caller's queries in place
        """
def relative_scores(q, k, bias, K):
    L, S = q.shape[1], k.shape[1]
    offset = torch.arange(S)[None, :] - torch.arange(L)[:, None]
    q.div_(math.sqrt(q.shape[-1]))
    out = q @ k.transpose(-2, -1) + bias[offset.clamp(-K, K) + K].to(q.dtype)
    q.mul_(math.sqrt(q.shape[-1]))
    return out
""",
    ],
}

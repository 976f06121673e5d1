"""Answers for the graded exercises of the positional_encoding chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

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
    ],
    "offset_distance": [
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
    ],
    "farthest_offset": [
        # the largest offset is the farthest
        """
farthest_k = 10
""",
        # the angle where a pair is farthest, not an offset in 1..10
        """
farthest_k = math.pi
""",
    ],
}

DELEGATING = {
    "sinusoidal_table": """
def sinusoidal_table(T, E):
    import seqlab.positional
    return seqlab.positional.sinusoidal_encoding(T, E)
""",
    "offset_distance": """
def offset_distance_sq(k, E):
    from seqlab.positional import sinusoidal_encoding
    table = sinusoidal_encoding(k + 1, E).double()
    return float(((table[k] - table[0]) ** 2).sum())
""",
}

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
    "rotate_pairs": [
        # the other sense of rotation (R(-phi)): sin with the wrong sign
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    angle = positions.to(torch.float64)[:, None] * w
    c, s = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2].double(), x[..., 1::2].double()
    return torch.stack([c * even - s * odd, c * odd + s * even], dim=-1).flatten(-2).to(x.dtype)
""",
        # rotated by the index t of the row, not by positions[t]
        """
def rotate_pairs(x, positions):
    E, T = x.shape[-1], x.shape[1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * w
    c, s = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2].double(), x[..., 1::2].double()
    return torch.stack([c * even + s * odd, c * odd - s * even], dim=-1).flatten(-2).to(x.dtype)
""",
        # pairs taken as the two halves (x_i, x_{i + E/2}), not neighbours
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    angle = positions.to(torch.float64)[:, None] * w
    c, s = torch.cos(angle), torch.sin(angle)
    first, second = x[..., : E // 2].double(), x[..., E // 2 :].double()
    return torch.cat([c * first + s * second, c * second - s * first], dim=-1).to(x.dtype)
""",
        # angles in float32: off by up to 1e-3 radians at position 20000
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float32) / E)
    angle = positions.to(torch.float32)[:, None] * w
    c, s = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([c * even + s * odd, c * odd - s * even], dim=-1).flatten(-2)
""",
        # the frequencies 10000 ** (-i / E), i counting pairs
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(E // 2, dtype=torch.float64) / E)
    angle = positions.to(torch.float64)[:, None] * w
    c, s = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2].double(), x[..., 1::2].double()
    return torch.stack([c * even + s * odd, c * odd - s * even], dim=-1).flatten(-2).to(x.dtype)
""",
        # the page's encoding added instead of a rotation
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    angle = positions.to(torch.float64)[:, None] * w
    pe = torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(-2)
    return (x.double() + pe).to(x.dtype)
""",
    ],
    "mean_distance_sq": [
        # divided by the T (T - 1) pairs of distinct positions (and T = 1 divides by zero)
        """
def mean_distance_sq(T, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    centre = (torch.sin(T * w / 2) / torch.sin(w / 2)) ** 2
    return float((E * T**2 - 2 * centre.sum()) / (T * (T - 1)))
""",
        # every offset k = 0 .. T - 1 counted as often (a mean over offsets, not over pairs)
        """
def mean_distance_sq(T, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    k = torch.arange(T, dtype=torch.float64)[:, None]
    return float((4 * torch.sin(k * w / 2) ** 2).sum(-1).mean())
""",
        # the T - k pairs at offset k counted once, not for (p, q) and (q, p)
        """
def mean_distance_sq(T, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    k = torch.arange(1, T, dtype=torch.float64)[:, None]
    d = (4 * torch.sin(k * w / 2) ** 2).sum(-1)
    return float(((T - k[:, 0]) * d).sum() / T**2)
""",
        # the mean vector's length without the 1 / T^2
        """
def mean_distance_sq(T, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    centre = (torch.sin(T * w / 2) / torch.sin(w / 2)) ** 2
    return float(E - 2 * centre.sum() / T)
""",
        # a one-element tensor, not a Python float
        """
def mean_distance_sq(T, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return E - 2 * ((torch.sin(T * w / 2) / (T * torch.sin(w / 2))) ** 2).sum()
""",
    ],
    "pe_speed": [
        # the norm of PE(p) itself, not of its velocity
        """
def pe_speed(E):
    return math.sqrt(E / 2)
""",
        # the frequencies summed, not their squares, and no square root
        """
def pe_speed(E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return float(w.sum())
""",
        # the square root of the sum of the frequencies
        """
def pe_speed(E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return math.sqrt(float(w.sum()))
""",
        # the fastest pair only
        """
def pe_speed(E):
    return 1.0
""",
        # the sine of each pair only: half the squares
        """
def pe_speed(E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return math.sqrt(float((w**2).sum()) / 2)
""",
        # every feature with its own frequency 10000 ** (-j / E), j = 0 .. E - 1
        """
def pe_speed(E):
    w = 10000 ** (-torch.arange(E, dtype=torch.float64) / E)
    return math.sqrt(float((w**2).sum()))
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
    "rotate_pairs": """
def rotate_pairs(x, positions):
    from seqlab.positional import sinusoidal_encoding
    table = sinusoidal_encoding(int(positions.max()) + 1, x.shape[-1], dtype=torch.float64)[positions]
    s, c = table[:, 0::2], table[:, 1::2]
    even, odd = x[..., 0::2].double(), x[..., 1::2].double()
    return torch.stack([c * even + s * odd, c * odd - s * even], dim=-1).flatten(-2).to(x.dtype)
""",
    "mean_distance_sq": """
def mean_distance_sq(T, E):
    from seqlab.positional import sinusoidal_encoding
    table = sinusoidal_encoding(T, E, dtype=torch.float64)
    return float(((table[:, None] - table[None]) ** 2).sum(-1).mean())
""",
}

# Plausible wrong answers of the kinds that got past the earlier tests (inputs changed in place,
# broken gradients, delegation, .squeeze() at size 1, the named edge cases, types, float64 from
# float32), written before the tests were strengthened: every one must fail a test case, and a
# public one unless it only delegates (tests/test_exercises.py).
WRONG_NEW = {
    "rotate_pairs": [
        # .squeeze() of the angles: breaks at T = 1 or E = 2 (one pair)
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    angle = (positions.to(torch.float64)[:, None] * w).squeeze()
    c, s = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2].double(), x[..., 1::2].double()
    return torch.stack([c * even + s * odd, c * odd - s * even], dim=-1).flatten(-2).to(x.dtype)
""",
        # float64 returned for float32 x
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    angle = positions.to(torch.float64)[:, None] * w
    c, s = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2].double(), x[..., 1::2].double()
    return torch.stack([c * even + s * odd, c * odd - s * even], dim=-1).flatten(-2)
""",
        # rotated in place: the caller's x changes
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    angle = positions.to(torch.float64)[:, None] * w
    c, s = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    even, odd = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2], x[..., 1::2] = c * even + s * odd, c * odd - s * even
    return x.clone()
""",
        # the page's M_k, built for every position (what the question rules out)
        """
def rotate_pairs(x, positions):
    E = x.shape[-1]
    rows = []
    for t, p in enumerate(positions.tolist()):
        blocks = []
        for i in range(E // 2):
            a = p * 10000.0 ** (-2 * i / E)
            c, s = math.cos(a), math.sin(a)
            blocks.append(torch.tensor([[c, s], [-s, c]], dtype=torch.float64))
        rows.append(x[:, t].double() @ torch.block_diag(*blocks).T)
    return torch.stack(rows, dim=1).to(x.dtype)
""",
    ],
    "mean_distance_sq": [
        # computed in float32
        """
def mean_distance_sq(T, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float32) / E)
    return float(E - 2 * ((torch.sin(T * w / 2) / (T * torch.sin(w / 2))) ** 2).sum())
""",
        # the page's closed form with cosines (forbidden here)
        """
def mean_distance_sq(T, E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    k = torch.arange(1, T, dtype=torch.float64)[:, None]
    d = (2 - 2 * torch.cos(k * w)).sum(-1)
    return float(2 * ((T - k[:, 0]) * d).sum() / T**2)
""",
    ],
    "pe_speed": [
        # a one-element tensor, not a float
        """
def pe_speed(E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    return (w**2).sum().sqrt()
""",
        # an int where the speed is a whole number (E = 2)
        """
def pe_speed(E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    v = math.sqrt(float((w**2).sum()))
    return int(v) if v == int(v) else v
""",
        # measured by a finite difference of a table it builds (what the question rules out)
        """
def pe_speed(E):
    w = 10000 ** (-torch.arange(0, E, 2, dtype=torch.float64) / E)
    h = 1e-6
    a = torch.cat([torch.sin(h * w), torch.cos(h * w)])
    b = torch.cat([torch.sin(-h * w), torch.cos(-h * w)])
    return float((a - b).norm() / (2 * h))
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

"""Answers for the graded exercises of the self_attention chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one, and every
wrong answer fails a public test case, except a wrong letter off the diagonal for wrong_entry (its
public check rules out the diagonal and says that the letter is graded by a hidden test).
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

# Questions whose public check accepts the answer's format only (a letter, a whole number in a
# range) and says so; a wrong value in the right format passes it and fails a hidden test. Every
# other WRONG answer fails at least one public test case.
FORMAT_ONLY = {"wrong_entry"}

WRONG = {
    "left_padded_attention": [
        # padding read on the right (the first lengths[n] positions real), as padding_mask does
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos < lengths[:, None])[:, None, :]
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(top > float("-inf"), top, 0.0)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v
""",
        # the causal mask alone: the padding keys are attended to
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    allowed = torch.ones(T, T, dtype=torch.bool).tril()
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - top).masked_fill(~allowed, 0.0)
    return e / e.sum(-1, keepdim=True) @ v
""",
        # j < i: a token may not see itself
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] > pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(top > float("-inf"), top, 0.0)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v
""",
        # no 1 / sqrt(D) scaling
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    scores = q @ k.transpose(1, 2)
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(top > float("-inf"), top, 0.0)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v
""",
        # right, except that a padding query (no allowed key) gives 0 / 0 = NaN
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    scores = (q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
    e = torch.exp(scores - scores.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True) @ v
""",
        # the largest score taken over all keys, masked ones included: with a masked key far
        # above the allowed ones, every allowed exp underflows to 0
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    e = torch.exp(scores - scores.amax(-1, keepdim=True)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v
""",
        # a finite fill of -1e4: above allowed scores of -9e4, and a padding query averages
        # every value instead of getting zeros
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    scores = (q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])).masked_fill(~allowed, -1e4)
    e = torch.exp(scores - scores.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True) @ v
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
        # head h takes every H-th feature (h, h + H, ...) instead of a block of D
        """
def to_heads(x, H):
    N, T, E = x.shape
    return x.reshape(N, T, E // H, H).permute(0, 3, 1, 2)


def from_heads(x):
    N, H, T, D = x.shape
    return x.permute(0, 2, 3, 1).reshape(N, T, H * D)
""",
        # to_heads right; from_heads without the transpose back
        """
def to_heads(x, H):
    N, T, E = x.shape
    return x.reshape(N, T, H, E // H).transpose(1, 2)


def from_heads(x):
    N, H, T, D = x.shape
    return x.reshape(N, T, H * D)
""",
        # heads moved in front of the batch, then reshaped: the batch and the heads mixed
        # (right at N = 1 only)
        """
def to_heads(x, H):
    N, T, E = x.shape
    return x.reshape(N, T, H, E // H).permute(2, 0, 1, 3).reshape(N, H, T, E // H)


def from_heads(x):
    N, H, T, D = x.shape
    return x.transpose(1, 2).reshape(N, T, H * D)
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
        # a float mask (ones and zeros), not a bool one
        """
def causal(T):
    return torch.ones(T, T).tril()
""",
        # the public example, hard-coded
        """
def causal(T):
    return torch.tensor([[True, False, False], [True, True, False], [True, True, True]])
""",
    ],
    "mha_parameters": [
        # the widths of the keys and values ignored: the count of self-attention
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return 4 * E * E + 4 * E
""",
        # W^K and W^V square in the key and value widths
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return 2 * E * E + E_k * E_k + E_v * E_v + (4 * E if bias else 0)
""",
        # the key and value biases of the input widths E_k and E_v
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return 2 * E * E + E * (E_k + E_v) + ((2 * E + E_k + E_v) if bias else 0)
""",
        # bias ignored: always counted
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return 2 * E * E + E * (E_k + E_v) + 4 * E
""",
        # the output projection W^O forgotten
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return E * E + E * (E_k + E_v) + (3 * E if bias else 0)
""",
        # every head with full-width projections
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return H * (2 * E * E + E * (E_k + E_v) + (4 * E if bias else 0))
""",
        # a count of the public example, hard-coded
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return 360
""",
    ],
    "max_path_length": [
        # rows and columns one after the other (a window that moves along one axis per layer)
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return -(-(h - 1) // r) - (-(w - 1) // r)
""",
        # the grid flattened into one sequence of h * w patches
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return -(-(h * w - 1) // r)
""",
        # rounded down: a last, shorter hop forgotten
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return (max(h, w) - 1) // r
""",
        # the shorter side instead of the longer
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return -(-(min(h, w) - 1) // r)
""",
        # patches counted instead of steps
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return -(-max(h, w) // r)
""",
        # r = 0 divides by zero: ZeroDivisionError, not the ValueError asked for
        """
def max_path_length(h, w, r):
    return math.ceil((max(h, w) - 1) / r)
""",
        # the window's width 2r + 1 taken as the step
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return -(-(max(h, w) - 1) // (2 * r + 1))
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
    "chunked_attention": [
        # the old sums never rescaled: each chunk's exponentials taken against its own maximum
        """
def chunked_attention(q, k, v, mask, chunk):
    total = q.new_zeros(*q.shape[:-1], 1)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        top = s.amax(dim=-1, keepdim=True)
        e = torch.exp(s - torch.where(torch.isfinite(top), top, 0.0))
        total = total + e.sum(dim=-1, keepdim=True)
        acc = acc + e @ v[:, start : start + chunk]
    return acc / torch.where(total > 0, total, 1.0)
""",
        # the last, shorter chunk left out when S is not a multiple of chunk
        """
def chunked_attention(q, k, v, mask, chunk):
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1] - chunk + 1, chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
        e = torch.exp(s - shift)
        total = total * torch.exp(top - shift) + e.sum(dim=-1, keepdim=True)
        acc = acc * torch.exp(top - shift) + e @ v[:, start : start + chunk]
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
        # no guard for a maximum of -inf: -inf - (-inf) is NaN where a query's chunk is all masked
        """
def chunked_attention(q, k, v, mask, chunk):
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
        e = torch.exp(s - new_top)
        total = total * torch.exp(top - new_top) + e.sum(dim=-1, keepdim=True)
        acc = acc * torch.exp(top - new_top) + e @ v[:, start : start + chunk]
        top = new_top
    return acc / total
""",
        # the scores not scaled by 1 / sqrt(D)
        """
def chunked_attention(q, k, v, mask, chunk):
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1)
        s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
        e = torch.exp(s - shift)
        total = total * torch.exp(top - shift) + e.sum(dim=-1, keepdim=True)
        acc = acc * torch.exp(top - shift) + e @ v[:, start : start + chunk]
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
    ],
}

DELEGATING = {
    "chunked_attention": """
def chunked_attention(q, k, v, mask, chunk):
    # the running sums over chunks, each chunk's weights from torch.softmax
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        allowed = mask[:, :, start : start + chunk]
        seen = allowed.any(dim=-1, keepdim=True)
        s = s.masked_fill(~allowed, float("-inf")).masked_fill(~seen, 0.0)
        part = torch.where(seen, torch.logsumexp(s, dim=-1, keepdim=True), float("-inf"))
        weights = torch.softmax(s, dim=-1) * seen
        new_top = torch.maximum(top, part)
        shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
        old, new = torch.exp(top - shift), torch.exp(part - shift)
        total = total * old + new
        acc = acc * old + new * (weights @ v[:, start : start + chunk])
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
    "left_padded_attention": """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    seen = allowed.any(dim=-1, keepdim=True)
    scores = (q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
    return scores.masked_fill(~seen, 0.0).softmax(dim=-1).masked_fill(~seen, 0.0) @ v
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
def mha_parameters(E, H, E_k, E_v, bias):
    import torch
    layer = torch.nn.MultiheadAttention(E, H, kdim=E_k, vdim=E_v, bias=bias)
    return sum(p.numel() for p in layer.parameters())
""",
}

# Plausible wrong answers of the kinds that got past the earlier tests (inputs changed in place,
# broken gradients, delegation, .squeeze() at size 1, finite fills, the named edge cases, types,
# float64 from float32), written before the tests were strengthened: every one must fail a test
# case, and a public one unless it only delegates (tests/test_exercises.py).
WRONG_NEW = {
    "left_padded_attention": [
        # scales the caller's queries in place
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    q /= math.sqrt(q.shape[-1])
    scores = q @ k.transpose(1, 2)
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(top > float("-inf"), top, 0.0)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v
""",
        # the weights in float64 for precision: a float64 output from float32 inputs
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    scores = (q @ k.transpose(1, 2)).double() / math.sqrt(q.shape[-1])
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(top > float("-inf"), top, 0.0)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v.double()
""",
        # the package's masks, combined: the question asks to build the mask
        """
from seqlab import masks
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    real = masks.padding_mask(lengths, T).flip(-1)  # the last lengths[n] positions
    allowed = masks.causal_mask(T) & real[:, None, :]
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(top > float("-inf"), top, 0.0)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v
""",
        # the softmax through log_softmax: a softmax function the question rules out
        """
def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    pos = torch.arange(T)
    allowed = (pos[:, None] >= pos) & (pos >= (T - lengths)[:, None])[:, None, :]
    seen = allowed.any(dim=-1, keepdim=True)
    s = (q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
    return (torch.log_softmax(s.masked_fill(~seen, 0.0), dim=-1).exp() * seen) @ v
""",
    ],
    "to_heads_from_heads": [
        # to_heads splits E into chunks of size H (right only when H = D)
        """
def to_heads(x, H):
    return torch.stack(x.split(H, dim=-1), dim=1)


def from_heads(x):
    N, H, T, D = x.shape
    return x.transpose(1, 2).reshape(N, T, H * D)
""",
        # from_heads with .squeeze(): a head dimension of 1 disappears
        """
def to_heads(x, H):
    N, T, E = x.shape
    return x.reshape(N, T, H, E // H).transpose(1, 2)


def from_heads(x):
    x = x.squeeze()
    return torch.cat(x.unbind(-3), dim=-1)
""",
        # to_heads with a float head width
        """
def to_heads(x, H):
    N, T, E = x.shape
    return x.reshape(N, T, H, E / H).transpose(1, 2)


def from_heads(x):
    N, H, T, D = x.shape
    return x.transpose(1, 2).reshape(N, T, H * D)
""",
    ],
    "causal": [
        # a float mask cast at the end: right, but through a float tensor of T * T
        """
def causal(T):
    return torch.tril(torch.ones(T, T)).to(torch.uint8)
""",
        # j < i: a token may not see itself
        """
def causal(T):
    return torch.ones(T, T, dtype=torch.bool).tril(-1)
""",
        # the size taken as T + 1 at T = 1 (a fence-post slip for the smallest decoder)
        """
def causal(T):
    n = max(T, 2) if T == 1 else T
    return torch.ones(n, n, dtype=torch.bool).tril()[:T, :n]
""",
        # a slice of a mask made once and kept: every call returns a view of the same tensor
        """
_MASK = torch.ones(512, 512, dtype=torch.bool).tril()


def causal(T):
    return _MASK[:T, :T]
""",
    ],
    "mha_parameters": [
        # a float
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return 2.0 * E * E + E * (E_k + E_v) + (4 * E if bias else 0)
""",
        # builds layers of the same sizes to count them (the question says not to)
        """
def mha_parameters(E, H, E_k, E_v, bias):
    layers = [torch.nn.Linear(n, E, bias=bias) for n in (E, E_k, E_v, E)]
    return sum(p.numel() for m in layers for p in m.parameters())
""",
        # the biases of the heads counted once per head
        """
def mha_parameters(E, H, E_k, E_v, bias):
    return 2 * E * E + E * (E_k + E_v) + ((3 * E * H + E) if bias else 0)
""",
    ],
    "max_path_length": [
        # a float
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return (max(h, w) - 1) / r
""",
        # one patch taken as one layer from itself
        """
def max_path_length(h, w, r):
    if r < 1:
        raise ValueError(r)
    return max(1, -(-(max(h, w) - 1) // r))
""",
        # r = 1 taken as a layer that moves nothing (a window of width r)
        """
def max_path_length(h, w, r):
    if r < 2:
        raise ValueError(r)
    return -(-(max(h, w) - 1) // r)
""",
    ],
    "chunked_attention": [
        # a finite fill of -1e4 for the masked keys: wrong where every allowed key scores below it
        """
def chunked_attention(q, k, v, mask, chunk):
    top = q.new_full((*q.shape[:-1], 1), -1e4)
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask[:, :, start : start + chunk], -1e4)
        new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
        e = torch.exp(s - new_top) * mask[:, :, start : start + chunk]
        total = total * torch.exp(top - new_top) + e.sum(dim=-1, keepdim=True)
        acc = acc * torch.exp(top - new_top) + e @ v[:, start : start + chunk]
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
        # the running sums written into their preallocated tensors in place: right values, but
        # the backward pass needs the values that were overwritten
        """
def chunked_attention(q, k, v, mask, chunk):
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
        rescale = torch.exp(top - shift)
        e = torch.exp(s - shift)
        total[...] = total * rescale + e.sum(dim=-1, keepdim=True)
        acc[...] = acc * rescale + e @ v[:, start : start + chunk]
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
        # the sums in float64 for precision: a float64 output from float32 inputs
        """
def chunked_attention(q, k, v, mask, chunk):
    q, k, v = q.double(), k.double(), v.double()
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
        e = torch.exp(s - shift)
        total = total * torch.exp(top - shift) + e.sum(dim=-1, keepdim=True)
        acc = acc * torch.exp(top - shift) + e @ v[:, start : start + chunk]
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
        # all the scores computed at once, then read a chunk at a time
        """
def chunked_attention(q, k, v, mask, chunk):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = scores[:, :, start : start + chunk].masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
        e = torch.exp(s - shift)
        total = total * torch.exp(top - shift) + e.sum(dim=-1, keepdim=True)
        acc = acc * torch.exp(top - shift) + e @ v[:, start : start + chunk]
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
        # the scores under torch.no_grad() (no graph kept, to save memory): no gradients
        """
def chunked_attention(q, k, v, mask, chunk):
    top = q.new_full((*q.shape[:-1], 1), float("-inf"))
    total = torch.zeros_like(top)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    with torch.no_grad():
        for start in range(0, k.shape[1], chunk):
            s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
            s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
            new_top = torch.maximum(top, s.amax(dim=-1, keepdim=True))
            shift = torch.where(torch.isfinite(new_top), new_top, 0.0)
            e = torch.exp(s - shift)
            total = total * torch.exp(top - shift) + e.sum(dim=-1, keepdim=True)
            acc = acc * torch.exp(top - shift) + e @ v[:, start : start + chunk]
            top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
        # the running maximum .squeeze()d to (N, L) and unsqueezed back: at N = 1 or L = 1 it
        # broadcasts against the wrong dimension
        """
def chunked_attention(q, k, v, mask, chunk):
    top = q.new_full(q.shape[:-1], float("-inf")).squeeze()
    total = q.new_zeros(*q.shape[:-1], 1)
    acc = q.new_zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[1], chunk):
        s = q @ k[:, start : start + chunk].transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask[:, :, start : start + chunk], float("-inf"))
        new_top = torch.maximum(top, s.amax(dim=-1).squeeze())
        shift = torch.where(torch.isfinite(new_top), new_top, 0.0).unsqueeze(-1)
        rescale = torch.exp(top.unsqueeze(-1) - shift)
        e = torch.exp(s - shift)
        total = total * rescale + e.sum(dim=-1, keepdim=True)
        acc = acc * rescale + e @ v[:, start : start + chunk]
        top = new_top
    return acc / torch.where(total > 0, total, 1.0)
""",
        # one query at a time against all S keys: no online softmax, chunk never read
        """
def chunked_attention(q, k, v, mask, chunk):
    N, L, D = q.shape
    outs = []
    for i in range(L):
        s = (q[:, i : i + 1] @ k.transpose(1, 2))[:, 0] / math.sqrt(D)
        s = s.masked_fill(~mask[:, i], float("-inf"))
        m = s.max(-1, keepdim=True).values.detach()
        m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        p = torch.exp(s - m)
        total = p.sum(-1, keepdim=True)
        outs.append((p[:, None] @ v)[:, 0] / torch.where(total > 0, total, torch.ones_like(total)))
    return torch.stack(outs, 1)
""",
    ],
}

# Wrong answers that only the hidden test can tell: right on every size the public cases use.
WRONG_HIDDEN = {
    "left_padded_attention": [
        # a causal mask made once for 512 positions and sliced: wrong past its size
        """
_CAUSAL = torch.ones(512, 512, dtype=torch.bool).tril()


def left_padded_attention(q, k, v, lengths):
    T = q.shape[1]
    real = torch.arange(T) >= (T - lengths)[:, None]
    allowed = _CAUSAL[:T, :T] & real[:, None, :]
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True)
    e = torch.exp(scores - torch.where(top > float("-inf"), top, 0.0)).masked_fill(~allowed, 0.0)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, 1.0) @ v
""",
    ],
    "causal": [
        # a copy of a slice of a mask made once for 512 positions: a new tensor, wrong past 512
        """
_MASK = torch.ones(512, 512, dtype=torch.bool).tril()


def causal(T):
    return _MASK[:T, :T].clone()
""",
    ],
}

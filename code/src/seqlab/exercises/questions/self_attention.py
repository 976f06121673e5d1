"""The graded questions of the chapter self_attention (chapters/self_attention.ipynb)."""

import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from seqlab.exercises import check_choice
from seqlab.exercises.harness import Draw, Question
from seqlab.exercises.questions._shared import fresh_each_call
from seqlab.masks import causal_mask  # the package's, shown on the page
from seqlab.multihead import merge_heads, split_heads  # the package's, shown on the page

SOFTMAXES = (
    "seqlab.attention.scaled_dot_product_attention",
    "seqlab.attention.masked_softmax",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.softmax",
    "torch.softmax",
    "torch.Tensor.softmax",
    "torch.nn.functional.log_softmax",
    "torch.log_softmax",
    "torch.Tensor.log_softmax",
    "torch.special.softmax",
    "torch.special.log_softmax",
    "torch.nn.MultiheadAttention",
)
MASKS = ("seqlab.masks.causal_mask", "seqlab.masks.padding_mask", "seqlab.masks.combine")
SCORE_MAX = 1e5  # the largest score magnitude left_padded_attention's text promises
CHUNKED_SCORE_MAX = 2e4  # the same for chunked_attention


def masked_oracle(q, k, v, mask):
    """F.scaled_dot_product_attention in float64, zeros for a query that may attend to nothing."""
    seen = mask.any(dim=-1, keepdim=True)
    out = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask | ~seen)
    return (out * seen).to(q.dtype)


def scores_of(q, k, *rest):
    """Every score q_i . k_j / sqrt(D) (N, L, S), masked ones included, in float64."""
    return q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])


# ---- Question 1: causal attention over left-padded sequences


def left_padded_mask(lengths, T):
    """(N, T, T) bool, True where query i may see key j: j <= i and j among the last lengths[n]."""
    keys = torch.arange(T)
    real = keys.unsqueeze(0) >= (T - lengths).unsqueeze(1)  # (N, T): the real tokens
    return (keys.unsqueeze(1) >= keys.unsqueeze(0)).unsqueeze(0) & real.unsqueeze(1)


def left_padded_oracle(q, k, v, lengths):
    return masked_oracle(q, k, v, left_padded_mask(lengths, q.shape[1]))


def left_padded_draw(d):
    N, T, D, D_v = d.sizes(4)  # distinct; each is 1 in one draw
    lengths = [d.integer(0, T) for _ in range(N)]
    lengths[d.index % N] = (0, T)[d.index % 2]  # a sequence of padding only, or of no padding
    return d.randn(N, T, D), d.randn(N, T, D), d.randn(N, T, D_v), torch.tensor(lengths)


def left_padded_large_scores(dtype=torch.float32):
    """Whole-number scores (exact in float32) from -1e5 to 1e5, T = 5: sequence 0 has 3 real
    tokens, sequence 1 two. In every row a masked key (padding or the future) scores above every
    allowed one; the allowed scores of query 4 are -1e4, -1.5e4 and -2e4 in sequence 0, -9e4 and
    -6e4 in sequence 1; queries 0-1 of sequence 0 and 0-2 of sequence 1 may see no key."""
    q = 100 * torch.tensor([
        [[2.0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2], [1, 1, 1, 1]],
        [[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1], [-2, 0, 2, 0]],
    ])  # fmt: skip
    k = 100 * torch.tensor([
        [[5.0, 5, 5, 5], [-6, 6, 6, 6], [6, -6, -3, 1], [-3, 4, -6, 2], [5, -5, 2, -6]],
        [[-5.0, 6, 5, 6], [6, 6, 6, -6], [6, 4, -4, 6], [6, -2, -3, 1], [3, 5, -3, 4]],
    ])  # fmt: skip
    v = torch.linspace(-1.0, 1.0, 30).reshape(2, 5, 3)
    return q.to(dtype), k.to(dtype), v.to(dtype), torch.tensor([3, 2])


def lengths_from_0_to_T(args_lengths) -> bool:
    """int64 lengths from 0 up"""
    return args_lengths.dtype == torch.int64 and bool((args_lengths >= 0).all())


LEFT_PADDED = Question(
    "left_padded_attention",
    oracle=left_padded_oracle,
    draw=left_padded_draw,
    arg_names=("q", "k", "v", "lengths"),
    edges={"scores to 1e5, the largest masked": left_padded_large_scores},
    forbidden=(*SOFTMAXES, *MASKS),
    bounds={
        "scores": (-SCORE_MAX, SCORE_MAX, scores_of),
        "lengths": lengths_from_0_to_T,
        "lengths - T": (None, 0, lambda q, k, v, lengths: lengths - q.shape[1]),
    },
)


# ---- Question 2: splitting and merging heads


def to_heads_draw(d):
    N, T, H, D = d.sizes(4)  # distinct; each is 1 in one draw
    return d.randn(N, T, H * D), H


def from_heads_draw(d):
    N, H, T, D = d.sizes(4)
    if d.index % 2:  # a view that is not contiguous
        return (d.randn(N, T, H, D).transpose(1, 2),)
    return (d.randn(N, H, T, D),)


HEADS = ("seqlab.multihead.split_heads", "seqlab.multihead.merge_heads")
TO_HEADS = Question(
    "to_heads",
    oracle=split_heads,
    draw=to_heads_draw,
    arg_names=("x", "H"),
    grad=(0,),
    forbidden=HEADS,
    bounds={"H": (1, None), "E mod H": (0, 0, lambda x, H: x.shape[-1] % H)},  # E divisible by H
)
FROM_HEADS = Question(
    "from_heads", oracle=merge_heads, draw=from_heads_draw, arg_names=("x",), grad=(0,), forbidden=HEADS
)


# ---- Question 3: the causal mask

CAUSAL = Question(
    "causal",
    oracle=causal_mask,
    draw=lambda d: (d.integer(2, 12),),
    arg_names=("T",),
    edges={"T = 1": lambda: (1,)},
    forbidden=("seqlab.masks.causal_mask", "torch.nn.Transformer.generate_square_subsequent_mask"),
    # "a new tensor": a slice of a mask cached between calls is a view of one tensor
    extra=fresh_each_call("causal", (3,)),
    bounds={"T": (1, None)},
)


# ---- Question 4: the parameters of cross-attention


def mha_count(E, H, E_k, E_v, bias):
    """The count of nn.MultiheadAttention(E, H, kdim=E_k, vdim=E_v, bias=bias)."""
    layer = torch.nn.MultiheadAttention(E, H, kdim=E_k, vdim=E_v, bias=bias)
    return sum(p.numel() for p in layer.parameters())


def mha_draw(d):
    H, D = d.integer(1, 5), d.integer(2, 7)
    E_k, E_v = d.sizes(2, high=12)  # distinct from each other; 1 in the first two draws
    return H * D, H, E_k, E_v, d.index % 2 == 0


MHA_COUNT = Question(
    "mha_parameters",
    oracle=mha_count,
    draw=mha_draw,
    arg_names=("E", "H", "E_k", "E_v", "bias"),
    edges={
        "H = E, no biases": lambda: (6, 6, 10, 3, False),
        "keys as wide as the queries": lambda: (12, 4, 12, 7, True),
    },
    forbidden=(
        "torch.nn.MultiheadAttention",
        "seqlab.multihead.MultiheadAttention",
        "torch.nn.Linear",
        "seqlab.utils.count_parameters",
    ),
    bounds={
        "E": (1, None),
        "H": (1, None),
        "E_k": (1, None),
        "E_v": (1, None),
        "E mod H": (0, 0, lambda E, H, E_k, E_v, bias: E % H),  # E divisible by H
    },
)


# ---- Question 5: the maximum path length of local attention over a grid


def grid_path_oracle(h, w, r):
    """Breadth-first search on the graph of the layers: the sets each patch reaches in 1, 2, ...
    layers, all patches at once, until every patch reaches every other; ValueError for r < 1."""
    if r < 1:
        raise ValueError(f"r must be at least 1, got {r}")
    rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    rows, cols = rows.flatten(), cols.flatten()
    # one layer: patch a attends to patch b at most r rows and r columns away
    edge = ((rows[:, None] - rows[None, :]).abs() <= r) & ((cols[:, None] - cols[None, :]).abs() <= r)
    reached, layers = torch.eye(h * w, dtype=torch.bool), 0
    while not reached.all():
        reached = (reached.double() @ edge.double()) > 0
        layers += 1
    return layers


def grid_draw(d):
    r = d.integer(2, 4)
    h, w = d.sizes(2, high=14)  # distinct; each is 1 in one early draw
    return h, w, r


def positive_int(value) -> bool:
    """a positive int"""
    return type(value) is int and value >= 1


PATH = Question(
    "max_path_length",
    oracle=grid_path_oracle,
    draw=grid_draw,
    arg_names=("h", "w", "r"),
    edges={
        "one patch": lambda: (1, 1, 2),
        "r = 1": lambda: (10, 13, 1),
        "r = 0": lambda: (4, 5, 0),
    },
    bounds={"h": positive_int, "w": positive_int, "r": (0, None)},
)


# ---- Question 6: which mask entry is wrong?


def wrong_entry_format(value, args, where):
    letter = check_choice(value, "abcd", "wrong_entry")  # format only: the hidden test grades the value
    if letter in "ac":
        raise AssertionError(
            f"wrong_entry = {letter!r} is on the diagonal (query i, key i): may a token attend to itself?"
        )


# a value, not a function: the harness calls a function of no arguments that returns it
WRONG_ENTRY = Question(
    "wrong_entry", oracle=None, judge=wrong_entry_format, draw=lambda d: (), arg_names=(), draws=(1, 1)
)


# ---- Question 7 (stretch): attention over the keys in chunks


def no_full_scores(answer):
    """``answer`` that fails when, with chunk < S, it makes a floating-point tensor with a
    dimension of size L and one of size S, or one with S entries in its last dimension that is
    not a view of k or v (the draws have no two sizes equal)."""

    def watched(q, k, v, mask, chunk):
        (N, L, D), (S, D_v) = q.shape, v.shape[1:]
        if chunk >= S or len({N, L, S, D, D_v}) < 5:
            return answer(q, k, v, mask, chunk)

        inputs = {k.untyped_storage().data_ptr(), v.untyped_storage().data_ptr()}

        class Watch(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                for t in out if isinstance(out, (tuple, list)) else (out,):
                    if not (isinstance(t, torch.Tensor) and t.is_floating_point()):
                        continue
                    of_inputs = t.untyped_storage().data_ptr() in inputs  # a view of k or v
                    if {L, S} <= set(t.shape) or (t.shape[-1:] == (S,) and not of_inputs):
                        raise AssertionError(
                            f"chunked_attention with L = {L}, S = {S} and chunk = {chunk} made a "
                            f"tensor of shape {tuple(t.shape)}: scores against all S keys at once"
                        )
                return out

        with Watch():
            return answer(q, k, v, mask, chunk)

    return watched


def chunked_oracle(q, k, v, mask, chunk):
    return masked_oracle(q, k, v, mask)


def chunked_draw(d):
    N, L, S, D, D_v = d.sizes(5)  # distinct; each is 1 in one draw
    mask = d.rand(N, L, S) > 0.3
    if d.index % 2:
        mask[0, 0] = False  # a query that may attend to nothing
    chunk = d.integer(1, S)
    mask[-1, -1, :chunk] = False  # a query whose first chunk is all masked
    return d.randn(N, L, D), d.randn(N, S, D), d.randn(N, S, D_v), mask, chunk


def chunked_large_scores(chunk, dtype=torch.float32):
    """Scores (q.k / 2) that are multiples of 5000 from -2e4 to 2e4, exact in float32: a masked
    key above the allowed ones, maxima that grow by up to 2.5e4 from chunk to chunk; in batch 1,
    query 0 may attend only to keys 3 and 4, which score -1.5e4 and -2e4, and query 1 to none."""
    q = 100 * torch.tensor([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 1.0]])
    q = q.repeat(2, 1, 1)
    k = 100 * torch.tensor([[[-2.0, 4, 0, 0], [4, -3, 1, 0], [1, 0, -2, -2], [3, -4, 2, 0],
                             [-4, 2, 1, 1]]]).repeat(2, 1, 1)  # fmt: skip
    k[1, :, 0] = 100 * torch.tensor([4.0, 3, 2, -3, -4])
    mask = torch.ones(2, 3, 5, dtype=torch.bool)
    mask[0, 0, 1] = mask[0, 1, 0] = False  # the highest score of the row
    mask[1, 0, :3] = False
    mask[1, 1] = False
    v = torch.linspace(-1.0, 1.0, 60).reshape(2, 5, 6)
    return q.to(dtype), k.to(dtype), v.to(dtype), mask, chunk


def never_all_scores(count: int):
    """``extra``: the answer, watched by :func:`no_full_scores`, on the first ``count`` draws and
    the large-score cases (their values are checked by the cases themselves)."""

    def extra(answer, public):
        watched = no_full_scores(answer)
        cases = [chunked_draw(Draw(i)) for i in range(count)]
        for args in cases + [chunked_large_scores(c) for c in (1, 2, 3)]:
            watched(*args)

    return extra


CHUNKED = Question(
    "chunked_attention",
    oracle=chunked_oracle,
    draw=chunked_draw,
    arg_names=("q", "k", "v", "mask", "chunk"),
    edges={
        "scores to 2e4, chunk = 2 of S = 5": lambda: chunked_large_scores(2),
        "scores to 2e4, chunk = 1": lambda: chunked_large_scores(1),
    },
    grad=(0, 1, 2),
    forbidden=SOFTMAXES,
    extra=never_all_scores(5),
    bounds={
        "scores": (-CHUNKED_SCORE_MAX, CHUNKED_SCORE_MAX, scores_of),
        "chunk": (1, None),
        "chunk - S": (None, 0, lambda q, k, v, mask, chunk: chunk - k.shape[1]),
    },
)


QUESTIONS = (LEFT_PADDED, TO_HEADS, FROM_HEADS, CAUSAL, MHA_COUNT, PATH, WRONG_ENTRY, CHUNKED)

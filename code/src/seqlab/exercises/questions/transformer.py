"""The graded questions of the chapter transformer (chapters/transformer.ipynb)."""

import torch

from seqlab.exercises.harness import Question
from seqlab.exercises.questions._shared import fresh_each_call
from seqlab.masks import causal_mask, padding_mask  # the package's masks, shown on the page
from seqlab.train import label_smoothed_cross_entropy, warmup_inverse_sqrt  # shown on the page


def decoder_mask_oracle(lengths, L):
    """The package's two masks, shown on the page, combined."""
    return causal_mask(L).unsqueeze(0) & padding_mask(lengths, L).unsqueeze(1)


def decoder_mask_draw(d):
    N, L = d.sizes(2)  # distinct; each is 1 in one draw
    return torch.tensor([d.integer(1, L) for _ in range(N)]), L


def lengths_within_1_and_L(lengths) -> bool:
    """int64 lengths each from 1 to L"""
    return lengths.dtype == torch.int64 and bool((lengths >= 1).all())


DECODER_MASK = Question(
    "decoder_mask",
    oracle=decoder_mask_oracle,
    draw=decoder_mask_draw,
    arg_names=("lengths", "L"),
    edges={
        "L = 1": lambda: (torch.tensor([1, 1, 1]), 1),
        "every sequence shorter than L": lambda: (torch.tensor([3, 1]), 5),
    },
    forbidden=(
        "seqlab.masks.causal_mask",
        "seqlab.masks.padding_mask",
        "seqlab.masks.combine",
        "torch.nn.Transformer.generate_square_subsequent_mask",
    ),
    new_tensors=True,
    # a new tensor from each call: a slice of a mask cached between calls is not one
    extra=fresh_each_call("decoder_mask", (torch.tensor([2, 3]), 3)),
    bounds={
        "lengths": lengths_within_1_and_L,
        "L": (1, None),
        "lengths - L": (None, 0, lambda lengths, L: lengths - L),  # lengths[n] <= L
    },
)


def lr_draw(d):
    warmup = d.integer(1, 5000)
    # a step during the warm-up, at its end, or after it
    step = (d.integer(1, warmup), warmup, d.integer(warmup, 20 * warmup))[d.index % 3]
    return step, d.integer(1, 1024), warmup


def positive_int(value) -> bool:
    """a positive int"""
    return type(value) is int and value >= 1


LR = Question(
    "transformer_lr",
    oracle=warmup_inverse_sqrt,
    draw=lr_draw,
    arg_names=("step", "d_model", "warmup"),
    edges={"step 1": lambda: (1, 512, 4000), "warmup = 1": lambda: (3, 64, 1)},
    forbidden=("seqlab.train.warmup_inverse_sqrt", "seqlab.train.warmup_scheduler"),
    # "nine significant digits": Python floats are compared to a relative 1e-9 (the harness's
    # default for a float, tolerance 1)
    tolerance=1.0,
    bounds={"step": positive_int, "d_model": positive_int, "warmup": positive_int},
)


def smoothed_oracle(logits, target, eps):
    """The package's loss (shown on the page), computed in float64."""
    return label_smoothed_cross_entropy(logits.double(), target, eps).to(logits.dtype)


def smoothed_draw(d):
    M, V = d.sizes(2)
    scale = 100.0 if d.index % 3 == 2 else 1.0
    target = torch.randint(0, V, (M,), generator=d.generator)
    return d.randn(M, V, scale=scale), target, d.uniform(0.0, 0.5)


def eps_in_0_1(eps) -> bool:
    """a float with 0 <= eps < 1"""
    return isinstance(eps, float) and 0.0 <= eps < 1.0


SMOOTHED = Question(
    "smoothed_loss",
    oracle=smoothed_oracle,
    draw=smoothed_draw,
    arg_names=("logits", "target", "eps"),
    edges={
        # log(softmax) is log(0) = -inf at the -1e4 logits, whose smoothed target is eps / V > 0
        "logits of the order of 1e4": lambda: (
            torch.tensor([[1e4, -1e4, 0.0], [0.0, 5e3, -1e4]]),
            torch.tensor([1, 2]),
            0.1,
        ),
        "the last class absent": lambda: (
            torch.linspace(-2.0, 2.0, 12).reshape(3, 4),
            torch.tensor([0, 1, 0]),
            0.2,
        ),
    },
    grad=(0,),
    forbidden=(
        "seqlab.train.label_smoothed_cross_entropy",
        "torch.nn.functional.cross_entropy",
        "torch._C._nn.cross_entropy_loss",  # what F.cross_entropy calls
        "torch.nn.CrossEntropyLoss",
    ),
    bounds={
        "logits": (-1e4, 1e4),
        "eps": eps_in_0_1,
        "target - V": (None, -1, lambda logits, target, eps: target - logits.shape[-1]),
        "target": (0, None),
    },
)


def encoder_params_oracle(E, d_ff, H):
    """The count of PyTorch's encoder layer, which has the same parts."""
    layer = torch.nn.TransformerEncoderLayer(E, H, d_ff)
    return sum(p.numel() for p in layer.parameters())


def encoder_params_draw(d):
    H, D = d.integer(1, 4), d.integer(1, 6)
    return H * D, d.integer(41, 300), H  # an FFN wider than the layer, as in practice


ENCODER_PARAMS = Question(
    "encoder_layer_parameters",
    oracle=encoder_params_oracle,
    draw=encoder_params_draw,
    arg_names=("E", "d_ff", "H"),
    edges={"one head per feature (H = E)": lambda: (5, 7, 5)},
    forbidden=(
        "seqlab.transformer.EncoderLayer",
        "torch.nn.TransformerEncoderLayer",
        "seqlab.utils.count_parameters",
        "torch.nn.MultiheadAttention",
        "torch.nn.Linear",
        "torch.nn.LayerNorm",
    ),
    bounds={
        "E": (1, None),
        "d_ff": (1, None),
        "H": (1, None),
        "E mod H": (0, 0, lambda E, d_ff, H: E % H),  # E divisible by H
    },
)

# (t, E, cache): the count, worked out by hand
MACS_KNOWN = {
    (3, 8, True): 256,
    (3, 8, False): 1024,
    (5, 12, True): 576,
    (5, 12, False): 3456,
    (0, 16, True): 800,
    (0, 16, False): 800,
    (1, 1, True): 7,
    (7, 3, False): 600,
}
MACS = Question(
    "decoding_step_macs",
    oracle=None,
    draw=lambda d: list(MACS_KNOWN.items())[d.index % len(MACS_KNOWN)],
    arg_names=("t", "E", "cache"),
    draws=(len(MACS_KNOWN), len(MACS_KNOWN)),
    bounds={"t": (0, None), "E": (1, None)},
)

# (layers, T, E, H): the count, worked out by hand
MQA_KNOWN = {
    (6, 100, 512, 8): 76800,
    (2, 10, 12, 3): 160,
    (1, 1, 4, 4): 2,
    (3, 10, 64, 1): 3840,
    (1, 7, 10, 2): 70,
}
MQA_NUMBERS = Question(
    "mqa_cache_numbers",
    oracle=None,
    draw=lambda d: list(MQA_KNOWN.items())[d.index % len(MQA_KNOWN)],
    arg_names=("layers", "T", "E", "H"),
    draws=(len(MQA_KNOWN), len(MQA_KNOWN)),
    bounds={
        "layers": (1, None),
        "T": (1, None),
        "E": (1, None),
        "H": (1, None),
        "E mod H": (0, 0, lambda layers, T, E, H: E % H),  # E divisible by H
    },
)


def shared_kv_reference(x, W_q, W_k, W_v, W_o, H):
    """nn.MultiheadAttention whose H key heads are copies of W_k and value heads of W_v."""
    E, T = x.shape[-1], x.shape[1]
    layer = torch.nn.MultiheadAttention(E, H, bias=False, batch_first=True, dtype=x.dtype)
    weights = {
        "in_proj_weight": torch.cat([W_q, W_k.repeat(H, 1), W_v.repeat(H, 1)]),
        "out_proj.weight": W_o,
    }
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # True = may not attend
    options = {"attn_mask": future, "need_weights": False}
    return torch.func.functional_call(layer, weights, (x, x, x), options)[0]


def mqa_draw(d):
    N, T, H, D = d.sizes(4)  # distinct; each is 1 in one draw
    E = H * D
    return (d.randn(N, T, E), d.randn(E, E, scale=0.5), d.randn(D, E, scale=0.5),
            d.randn(D, E, scale=0.5), d.randn(E, E, scale=0.5), H)  # fmt: skip


def mqa_huge_scores():
    """Scores of the order of 1e10 (float64)."""
    g = torch.Generator().manual_seed(5)
    x = 1e5 * torch.randn(2, 4, 6, generator=g, dtype=torch.float64)
    W = [torch.randn(*s, generator=g, dtype=torch.float64) for s in ((6, 6), (2, 6), (2, 6), (6, 6))]
    return (x, *W, 3)


def mqa_scores(x, W_q, W_k, W_v, W_o, H):
    """Every head's scores (N, H, T, T), masked ones included, in float64."""
    N, T, E = x.shape
    D = E // H
    q = (x.double() @ W_q.double().T).reshape(N, T, H, D).transpose(1, 2)
    k = (x.double() @ W_k.double().T).unsqueeze(1)
    return q @ k.transpose(-2, -1) / D**0.5


MQA = Question(
    "multi_query_attention",
    oracle=shared_kv_reference,
    draw=mqa_draw,
    edges={"scores of the order of 1e10": mqa_huge_scores},
    # a saturated softmax: the gradients there are rounding's (PyTorch versions differ), so
    # they are compared on the random draws only
    value_only=("scores of the order of 1e10",),
    grad=(0, 1, 2, 3, 4),
    forbidden=(
        "torch.nn.MultiheadAttention",
        "torch.nn.functional.multi_head_attention_forward",
        "torch.nn.functional.scaled_dot_product_attention",
        "seqlab.multihead.MultiheadAttention",
        "seqlab.attention.scaled_dot_product_attention",
        "seqlab.attention.masked_softmax",
    ),
    # "scores may reach 1e11 in magnitude"
    bounds={"scores": (-1e11, 1e11, mqa_scores)},
)

QUESTIONS = (DECODER_MASK, LR, SMOOTHED, ENCODER_PARAMS, MACS, MQA_NUMBERS, MQA)

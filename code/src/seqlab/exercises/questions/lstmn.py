"""The graded questions of the chapter lstmn (chapters/lstmn.ipynb)."""

import torch

from seqlab.exercises import check_choice
from seqlab.exercises.harness import Draw, Question
from seqlab.lstmn import LSTMN


def size(dim: int, argument: int = 0):
    """(1, None, the size of dimension ``dim`` of argument ``argument``): "any size may be 1",
    none 0."""
    return (1, None, lambda *args: args[argument].shape[dim])


class _Attend(torch.nn.Module):
    """The intra-attention step of an LSTMN: its ``_weights`` over a tape of hidden states."""

    def __init__(self, model: LSTMN):
        super().__init__()
        self.model = model

    def forward(self, tape_h, x_t, h_prev_summary):
        keys = [self.model.attn_h(tape_h[:, i]) for i in range(tape_h.shape[1])]  # W_h h_i
        return self.model._weights(self.model.attn_x(x_t), h_prev_summary, keys, "learned")


def intra_oracle(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    """The page's LSTMN._weights with these weights (W_x's bias zero): s^t (N, t)."""
    step = _Attend(LSTMN(W_x.shape[1], W_h.shape[1], W_h.shape[0]).to(tape_h.dtype))
    weights = {
        "model.attn_h.weight": W_h,
        "model.attn_x.weight": W_x,
        "model.attn_x.bias": torch.zeros_like(v),
        "model.attn_s.weight": W_s,
        "model.attn_v.weight": v[None],
    }
    return torch.func.functional_call(step, weights, (tape_h, x_t, h_prev_summary))


def intra_draw(d, scale=1.0):
    N, t, E_h, E_in, A = d.sizes(5)  # distinct; each is 1 in one of the first draws
    return (d.randn(N, t, E_h), d.randn(N, E_in), d.randn(N, E_h), d.randn(A, E_h, scale=scale),
            d.randn(A, E_in, scale=scale), d.randn(A, E_h, scale=scale), d.randn(A))  # fmt: skip


def intra_edge(N, t, E_h, E_in, A, scale=1.0):
    d = Draw(50)  # float32; the same tensors at every call
    return (d.randn(N, t, E_h), d.randn(N, E_in), d.randn(N, E_h), d.randn(A, E_h, scale=scale),
            d.randn(A, E_in, scale=scale), d.randn(A, E_h, scale=scale), d.randn(A))  # fmt: skip


INTRA = Question(
    "intra_attention",
    oracle=intra_oracle,
    draw=intra_draw,
    edges={
        "one tape entry (t = 1)": lambda: intra_edge(3, 1, 2, 4, 5),
        "a batch of one": lambda: intra_edge(1, 4, 3, 2, 5),
    },
    grad=(0, 1, 2, 3, 4, 5, 6),
    forbidden=("seqlab.lstmn.LSTMN",),
    # "any size may be 1 (a batch of one, a tape of one entry at t = 1, A = 1)"
    bounds={"N": size(0), "t": size(1), "E_h": size(2), "E_in": size(1, 1), "A": size(0, 3)},
)


def summary_oracle(weights, tape):
    """One sequence at a time: its weights (t,) times its tape (t, E)."""
    return torch.stack([weights[n] @ tape[n] for n in range(tape.shape[0])])


def summary_draw(d):
    N, t, E = d.sizes(3)  # distinct; each is 1 in one of the first draws
    return d.randn(N, t), d.randn(N, t, E)


SUMMARY = Question(
    "tape_summary",
    oracle=summary_oracle,
    draw=summary_draw,
    edges={"N = 1, t = 1, E = 1": lambda: (torch.tensor([[0.5]]), torch.tensor([[[3.0]]]))},
    grad=(0, 1),
    # "any of N, t, E may be 1"
    bounds={"N": size(0, 1), "t": size(1, 1), "E": size(2, 1)},
)


def count_oracle(T):
    """The scores a real LSTMN computes: one weight s_i^t for every entry i it attends to at t."""
    g = torch.Generator().manual_seed(T)
    net = LSTMN(2, 3)
    with torch.no_grad():
        _, _, weights = net(torch.randn(1, T, 2, generator=g))
    return int((weights > 0).sum())


SCORES = Question(
    "score_count",
    oracle=count_oracle,
    draw=lambda d: (d.integer(2, 12),),
    arg_names=("T",),
    edges={"T = 1": lambda: (1,)},
    forbidden=("seqlab.lstmn.LSTMN",),
    bounds={"T": (1, None)},  # "an int >= 1; T = 1 included"
)


def entry0_format(value, args, where):
    check_choice(value, "abcd", "entry0_case")  # format only: the hidden test grades the letter


# a value, not a function: the harness calls a function of no arguments that returns it
ENTRY0 = Question(
    "entry0_case", oracle=None, judge=entry0_format, draw=lambda d: (), arg_names=(), draws=(1, 1)
)


def read_oracle(tape_h, query, W_h, v, grad_read):
    """Autograd through the read of the question's equations."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (tape_h, query, W_h, v)]
    H, q, W, w = leaves
    with torch.enable_grad():
        s = (torch.tanh(H @ W.T + q[:, None]) @ w).softmax(dim=-1)  # (N, t)
        read = (s[:, :, None] * H).sum(dim=1)  # (N, E_h)
        return torch.autograd.grad(read, leaves, grad_read)


def read_draw(d, scale=1.0):
    N, t, E_h, A = d.sizes(4)  # distinct; each is 1 in one of the first draws
    return (d.randn(N, t, E_h), d.randn(N, A), d.randn(A, E_h, scale=scale), d.randn(A, scale=scale),
            d.randn(N, E_h))  # fmt: skip


def _refuse_saving(tensor):
    raise RuntimeError("a tensor saved for a backward pass")


def read_without_autograd(answer, public):
    """The property the text asks for, whatever the call: under torch.inference_mode() autograd
    records nothing, so an answer computed by autograd (by any name, reverse or forward mode)
    fails there, while tensor operations give the same four tensors."""
    args = read_draw(Draw(3 if public else 11))
    want = read_oracle(*args)
    try:
        # and no tensor saved for a backward pass: leaving inference mode inside does not help
        with torch.inference_mode(), torch.autograd.graph.saved_tensors_hooks(_refuse_saving, lambda t: t):
            got = answer(*args)
    except Exception as error:
        raise AssertionError(
            f"intra_read_backward fails where autograd records nothing (torch.inference_mode()): "
            f"{type(error).__name__}; compute the gradients with tensor operations, not with autograd"
        ) from None
    if (
        not isinstance(got, tuple)
        or len(got) != 4
        or not all(
            isinstance(g, torch.Tensor) and g.shape == w.shape and torch.allclose(g, w, rtol=1e-4, atol=1e-5)
            for g, w in zip(got, want)
        )
    ):
        raise AssertionError(
            "intra_read_backward gives other results where autograd records nothing "
            "(torch.inference_mode()): compute the gradients with tensor operations, not with autograd"
        )


READ = Question(
    "intra_read_backward",
    oracle=read_oracle,
    draw=read_draw,
    edges={
        "one tape entry (t = 1)": lambda: (
            torch.tensor([[[0.5, -1.0, 2.0]], [[1.5, 0.0, -0.5]]]),
            torch.tensor([[0.3], [-0.2]]),
            torch.tensor([[1.0, 2.0, -1.0]]),
            torch.tensor([0.7]),
            torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0]]),
        ),
        "a batch of one": lambda: (
            torch.tensor([[[0.5, -1.0], [2.0, 1.0], [-0.3, 0.2]]]),
            torch.tensor([[0.3, 0.1, -0.4]]),
            torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.2, 0.3]]),
            torch.tensor([0.7, -1.2, 2.0]),
            torch.tensor([[1.0, -2.0]]),
        ),
    },
    forbidden=(
        "torch.autograd.grad",
        "torch.autograd.backward",
        "torch.Tensor.backward",
        "torch.autograd.functional.vjp",
        "torch.autograd.functional.jacobian",
        "torch.func.vjp",
        "torch.func.grad",
        "torch.func.grad_and_value",
        "torch.func.jacrev",
        "torch.func.jacfwd",
        "torch.func.jvp",
        "torch.func.linearize",
        "torch.autograd.functional.jvp",
        "torch.autograd.forward_ad.make_dual",
        "seqlab.lstmn.LSTMN",
    ),
    extra=read_without_autograd,
    # "any size may be 1 (t = 1 included)"
    bounds={"N": size(0), "t": size(1), "E_h": size(2), "A": size(0, 2)},
)

QUESTIONS = (INTRA, SUMMARY, SCORES, ENTRY0, READ)

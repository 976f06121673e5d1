"""Answers for the graded exercises of the lstmn chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one, and every
wrong answer fails a public test case, except a wrong letter for a multiple-choice question (its
public check accepts the format only, and says so; the letter is graded by a hidden test).
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

# Questions whose public check accepts the answer's format only (a letter, a whole number in a
# range) and says so; a wrong value in the right format passes it and fails a hidden test. Every
# other WRONG answer fails at least one public test case.
FORMAT_ONLY = {"entry0_case"}

WRONG = {
    "intra_attention": [
        # softmax over the batch instead of over the tape
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    query = x_t @ W_x.T + h_prev_summary @ W_s.T
    return (torch.tanh(tape_h @ W_h.T + query.unsqueeze(1)) @ v).softmax(dim=0)
""",
        # the previous summary left out of the score
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    return (torch.tanh(tape_h @ W_h.T + (x_t @ W_x.T).unsqueeze(1)) @ v).softmax(dim=-1)
""",
        # W_h applied without the transpose (runs only where A = E_h, wrong there too)
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    query = x_t @ W_x.T + h_prev_summary @ W_s.T
    return (torch.tanh(tape_h @ W_h + query.unsqueeze(1)) @ v).softmax(dim=-1)
""",
    ],
    "tape_summary": [
        # the plain mean of the tape, ignoring the weights
        """
def tape_summary(weights, tape):
    return tape.mean(dim=1)
""",
        # summed over the feature axis instead of the tape
        """
def tape_summary(weights, tape):
    return (weights.unsqueeze(-1) * tape).sum(dim=2)
""",
        # a batched matmul that broadcasts the weights over the batch: (N, N, E)
        """
def tape_summary(weights, tape):
    return weights @ tape
""",
        # every sequence reads the first sequence's tape
        """
def tape_summary(weights, tape):
    return weights @ tape[0]
""",
    ],
    "score_count": [
        # the paper's tapes, entries 1..t-1, without the initial state
        """
def score_count(T):
    return T * (T - 1) // 2
""",
        # every step scores every position of the sequence
        """
def score_count(T):
    return T * T
""",
        # two scores per step (equal to the answer at T = 3 only)
        """
def score_count(T):
    return 2 * T
""",
        # T! (equal to the answer at T = 3 only)
        """
def score_count(T):
    import math

    return math.factorial(T)
""",
        # the value at T = 3, hard-coded
        """
def score_count(T):
    return 6
""",
    ],
    "entry0_case": [
        # thinks the fixed read is still an LSTM (graded by the hidden test)
        """
entry0_case = "a"
""",
        # thinks nothing reaches h_t (graded by the hidden test)
        """
entry0_case = "d"
""",
        # not a letter
        """
entry0_case = "b only"
""",
    ],
    "intra_read_backward": [
        # the gradient of the read only: g reaches each h_i with weight s_i, nothing else
        """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    s = (torch.tanh(tape_h @ W_h.T + query[:, None]) @ v).softmax(dim=-1)
    zero = torch.zeros_like
    return s[:, :, None] * grad_read[:, None], zero(query), zero(W_h), zero(v)
""",
        # the softmax's backward with the weights' sum taken over the batch, not over the tape
        """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    u = torch.tanh(tape_h @ W_h.T + query[:, None])
    s = (u @ v).softmax(dim=-1)
    grad_s = tape_h @ grad_read[:, :, None]
    grad_a = s[:, :, None] * (grad_s - (s[:, :, None] * grad_s).sum(dim=0, keepdim=True))
    grad_z = grad_a * v * (1 - u**2)
    grad_W_h = (grad_z.transpose(1, 2) @ tape_h).sum(dim=0)
    grad_tape = s[:, :, None] * grad_read[:, None] + grad_z @ W_h
    return grad_tape, grad_z.sum(dim=1), grad_W_h, (grad_a * u).sum(dim=(0, 1))
""",
    ],
}

DELEGATING = {
    "intra_read_backward": """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    leaves = [t.detach().requires_grad_(True) for t in (tape_h, query, W_h, v)]
    H, q, W, w = leaves
    with torch.enable_grad():
        s = (torch.tanh(H @ W.T + q[:, None]) @ w).softmax(dim=-1)
        ((s[:, :, None] * H).sum(dim=1) * grad_read).sum().backward()
    return tuple(t.grad for t in leaves)
""",
    "score_count": """
def score_count(T):
    from seqlab.lstmn import LSTMN

    with torch.no_grad():
        _, _, weights = LSTMN(1, 1)(torch.zeros(1, T, 1))
    return int((weights > 0).sum())
""",
}

# Plausible wrong answers written to measure the tests before they were strengthened (make
# mutation --wrong-new): the kinds students get past weak tests. The hidden tests reject every
# one, and the public ones every one that does not just delegate to a forbidden function.
WRONG_NEW = {
    "intra_attention": [
        # .squeeze() of the (N, t, 1) scores: a batch of one loses its batch axis, and t = 1 its
        # entry axis (the softmax then runs over the batch)
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    query = x_t @ W_x.T + h_prev_summary @ W_s.T
    scores = (torch.tanh(tape_h @ W_h.T + query.unsqueeze(1)) @ v.unsqueeze(-1)).squeeze()
    return scores.softmax(dim=-1)
""",
        # the scores in float64 for a stable softmax: a float64 result from float32 inputs
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    query = x_t.double() @ W_x.double().T + h_prev_summary.double() @ W_s.double().T
    scores = torch.tanh(tape_h.double() @ W_h.double().T + query.unsqueeze(1)) @ v.double()
    return scores.softmax(dim=-1)
""",
        # the query computed under no_grad: no gradient reaches x_t, h~_{t-1}, W_x and W_s
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    with torch.no_grad():
        query = x_t @ W_x.T + h_prev_summary @ W_s.T
    scores = torch.tanh(tape_h @ W_h.T + query.unsqueeze(1)) @ v
    return scores.softmax(dim=-1)
""",
        # the package's LSTMN scorer with the weights copied in: delegation
        """
def intra_attention(tape_h, x_t, h_prev_summary, W_h, W_x, W_s, v):
    from seqlab.lstmn import LSTMN
    net = LSTMN(W_x.shape[1], W_h.shape[1], W_h.shape[0]).to(tape_h.dtype)
    with torch.no_grad():
        net.attn_h.weight.copy_(W_h)
        net.attn_x.weight.copy_(W_x)
        net.attn_x.bias.zero_()
        net.attn_s.weight.copy_(W_s)
        net.attn_v.weight.copy_(v[None])
    keys = list((tape_h @ W_h.T).unbind(1))
    return net._weights(x_t @ W_x.T, h_prev_summary, keys, "learned")
""",
    ],
    "tape_summary": [
        # renormalises the caller's weights in place, to be safe
        """
def tape_summary(weights, tape):
    weights /= weights.sum(dim=-1, keepdim=True)
    return (weights.unsqueeze(-1) * tape).sum(dim=1)
""",
        # a batched product then .squeeze(): breaks at N = 1 or E = 1
        """
def tape_summary(weights, tape):
    return torch.bmm(weights.unsqueeze(1), tape).squeeze()
""",
        # the weights detached ("they only choose"): no gradient reaches the attention
        """
def tape_summary(weights, tape):
    return (weights.detach().unsqueeze(-1) * tape).sum(dim=1)
""",
        # in float64 for precision: a float64 result from float32 inputs
        """
def tape_summary(weights, tape):
    return torch.einsum("nt,nte->ne", weights.double(), tape.double())
""",
    ],
    "score_count": [
        # a float: T (T + 1) / 2
        """
def score_count(T):
    return T * (T + 1) / 2
""",
        # counted on a lower triangle of ones: a 0-dimensional float tensor
        """
def score_count(T):
    return torch.ones(T, T).tril().sum()
""",
        # entries 1 .. t-1 only, as if entry 0 (the initial state) were not read: one per step less
        """
def score_count(T):
    return T * (T - 1) // 2
""",
    ],
}

_READ_BACKWARD = """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    u = torch.tanh(tape_h @ W_h.T + query[:, None])
    s = (u @ v).softmax(dim=-1)
    grad_s = tape_h @ grad_read[:, :, None]
    grad_a = GRAD_A
    grad_v = GRAD_V
    grad_z = GRAD_Z
    grad_query = grad_z.sum(dim=1)
    grad_W_h = GRAD_W_H
    grad_tape = GRAD_TAPE
    return grad_tape, grad_query, grad_W_h, grad_v
"""
_RIGHT = {
    "GRAD_A": "s[:, :, None] * (grad_s - (s[:, :, None] * grad_s).sum(dim=1, keepdim=True))",
    "GRAD_V": "(grad_a * u).sum(dim=(0, 1))",
    "GRAD_Z": "grad_a * v * (1 - u**2)",
    "GRAD_W_H": "(grad_z.transpose(1, 2) @ tape_h).sum(dim=0)",
    "GRAD_TAPE": "s[:, :, None] * grad_read[:, None] + grad_z @ W_h",
}


def _read_backward(**changes):
    """The stretch question's answer with one piece changed."""
    source = _READ_BACKWARD
    for key, value in {**_RIGHT, **changes}.items():
        source = source.replace(key, value)
    return source


WRONG_NEW["intra_read_backward"] = [
    # h_i as a value only: the path through its own score forgotten
    _read_backward(GRAD_TAPE="s[:, :, None] * grad_read[:, None]"),
    # h_i as a key only: the value path forgotten
    _read_backward(GRAD_TAPE="grad_z @ W_h"),
    # the softmax's Jacobian taken as diagonal: the - sum_k s_k g.h_k term missing
    _read_backward(GRAD_A="s[:, :, None] * grad_s"),
    # tanh's derivative forgotten
    _read_backward(GRAD_Z="grad_a * v"),
    # the shared v's gradient averaged over the batch instead of summed
    _read_backward(GRAD_V="(grad_a * u).sum(dim=1).mean(dim=0)"),
    # W_h's gradient with the factors the other way round: (E_h, A)
    _read_backward(GRAD_W_H="(tape_h.transpose(1, 2) @ grad_z).sum(dim=0)"),
    # autograd through the read: what the question forbids
    """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    leaves = [t.detach().requires_grad_(True) for t in (tape_h, query, W_h, v)]
    H, q, W, w = leaves
    with torch.enable_grad():
        s = (torch.tanh(H @ W.T + q[:, None]) @ w).softmax(dim=-1)
        read = (s[:, :, None] * H).sum(dim=1)
        return torch.autograd.grad(read, leaves, grad_read)
""",
]

# Kinds of wrong answer that once earned full marks (issue 47): a forbidden computation written
# another way. The question forbids autograd in any form; its public check runs the answer under
# torch.inference_mode(), where autograd records nothing, besides refusing the names.
WRONG_NEW["intra_read_backward"] += [
    # reverse-mode autograd through the engine itself, a name no list holds
    """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    leaves = [t.detach().clone().requires_grad_(True) for t in (tape_h, query, W_h, v)]
    H, q, W, w = leaves
    with torch.enable_grad():
        s = (torch.tanh(H @ W.T + q[:, None]) @ w).softmax(dim=-1)
        read = (s[:, :, None] * H).sum(dim=1)
    engine = torch.autograd.Variable._execution_engine
    return engine.run_backward((read,), (grad_read,), False, False, tuple(leaves), False)
""",
    # forward-mode autograd (dual numbers), one input entry at a time
    """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    from torch.autograd import forward_ad

    inputs = (tape_h, query, W_h, v)
    grads = []
    for k, x in enumerate(inputs):
        g = torch.zeros(x.numel(), dtype=x.dtype)
        for j in range(x.numel()):
            tangent = torch.zeros(x.numel(), dtype=x.dtype)
            tangent[j] = 1.0
            with forward_ad.dual_level():
                args = list(inputs)
                args[k] = forward_ad.make_dual(x, tangent.reshape(x.shape))
                H, q, W, w = args
                s = (torch.tanh(H @ W.T + q[:, None]) @ w).softmax(dim=-1)
                read = (s[:, :, None] * H).sum(dim=1)
                g[j] = (forward_ad.unpack_dual(read).tangent * grad_read).sum()
        grads.append(g.reshape(x.shape))
    return tuple(grads)
""",
    # torch.func's forward-mode transform, one input entry at a time
    """
def intra_read_backward(tape_h, query, W_h, v, grad_read):
    def read(H, q, W, w):
        s = (torch.tanh(H @ W.T + q[:, None]) @ w).softmax(dim=-1)
        return ((s[:, :, None] * H).sum(dim=1) * grad_read).sum()

    inputs = (tape_h, query, W_h, v)
    grads = []
    for k, x in enumerate(inputs):
        columns = []
        for j in range(x.numel()):
            tangents = [torch.zeros_like(y) for y in inputs]
            tangent = torch.zeros(x.numel(), dtype=x.dtype)
            tangent[j] = 1.0
            tangents[k] = tangent.reshape(x.shape)
            columns.append(torch.func.jvp(read, inputs, tuple(tangents))[1])
        grads.append(torch.stack(columns).reshape(x.shape))
    return tuple(grads)
""",
]

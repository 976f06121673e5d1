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
    "lstmn_run": [
        # the score of step t reads h_{t-1} instead of the summary h~_{t-1}
        """
def lstmn_run(x, W_h, W_x, W_s, v, W_ih, W_hh, b):
    N, T, _ = x.shape
    E_h = W_hh.shape[1]
    h_tape, c_tape = [x.new_zeros(N, E_h)], [x.new_zeros(N, E_h)]
    rows = []
    for t in range(1, T + 1):
        x_t = x[:, t - 1]
        H, C = torch.stack(h_tape, 1), torch.stack(c_tape, 1)
        s = (torch.tanh(H @ W_h.T + (x_t @ W_x.T + h_tape[-1] @ W_s.T)[:, None]) @ v).softmax(-1)
        h_sum, c_sum = (s[:, :, None] * H).sum(1), (s[:, :, None] * C).sum(1)
        i, f, g, o = (x_t @ W_ih.T + h_sum @ W_hh.T + b).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_sum + torch.sigmoid(i) * torch.tanh(g)
        h_tape.append(torch.sigmoid(o) * torch.tanh(c))
        c_tape.append(c)
        rows.append(torch.cat([s, s.new_zeros(N, T - t)], 1))
    return torch.stack(h_tape[1:], 1), torch.stack(rows, 1)
""",
        # the forget gate multiplies c_{t-1}, not the summary c~_t
        """
def lstmn_run(x, W_h, W_x, W_s, v, W_ih, W_hh, b):
    N, T, _ = x.shape
    E_h = W_hh.shape[1]
    h_tape, c_tape = [x.new_zeros(N, E_h)], [x.new_zeros(N, E_h)]
    h_sum, rows = h_tape[0], []
    for t in range(1, T + 1):
        x_t = x[:, t - 1]
        H = torch.stack(h_tape, 1)
        s = (torch.tanh(H @ W_h.T + (x_t @ W_x.T + h_sum @ W_s.T)[:, None]) @ v).softmax(-1)
        h_sum = (s[:, :, None] * H).sum(1)
        i, f, g, o = (x_t @ W_ih.T + h_sum @ W_hh.T + b).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_tape[-1] + torch.sigmoid(i) * torch.tanh(g)
        h_tape.append(torch.sigmoid(o) * torch.tanh(c))
        c_tape.append(c)
        rows.append(torch.cat([s, s.new_zeros(N, T - t)], 1))
    return torch.stack(h_tape[1:], 1), torch.stack(rows, 1)
""",
        # the gates taken in the order i, f, o, g
        """
def lstmn_run(x, W_h, W_x, W_s, v, W_ih, W_hh, b):
    N, T, _ = x.shape
    E_h = W_hh.shape[1]
    h_tape, c_tape = [x.new_zeros(N, E_h)], [x.new_zeros(N, E_h)]
    h_sum, rows = h_tape[0], []
    for t in range(1, T + 1):
        x_t = x[:, t - 1]
        H, C = torch.stack(h_tape, 1), torch.stack(c_tape, 1)
        s = (torch.tanh(H @ W_h.T + (x_t @ W_x.T + h_sum @ W_s.T)[:, None]) @ v).softmax(-1)
        h_sum, c_sum = (s[:, :, None] * H).sum(1), (s[:, :, None] * C).sum(1)
        i, f, o, g = (x_t @ W_ih.T + h_sum @ W_hh.T + b).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_sum + torch.sigmoid(i) * torch.tanh(g)
        h_tape.append(torch.sigmoid(o) * torch.tanh(c))
        c_tape.append(c)
        rows.append(torch.cat([s, s.new_zeros(N, T - t)], 1))
    return torch.stack(h_tape[1:], 1), torch.stack(rows, 1)
""",
        # a preallocated tape of T + 1 zero entries, the softmax taken over all of them
        """
def lstmn_run(x, W_h, W_x, W_s, v, W_ih, W_hh, b):
    N, T, _ = x.shape
    E_h = W_hh.shape[1]
    H, C = x.new_zeros(N, T + 1, E_h), x.new_zeros(N, T + 1, E_h)
    h_sum, rows, outs = H[:, 0], [], []
    for t in range(1, T + 1):
        x_t = x[:, t - 1]
        s = (torch.tanh(H @ W_h.T + (x_t @ W_x.T + h_sum @ W_s.T)[:, None]) @ v).softmax(-1)
        h_sum, c_sum = (s[:, :, None] * H).sum(1), (s[:, :, None] * C).sum(1)
        i, f, g, o = (x_t @ W_ih.T + h_sum @ W_hh.T + b).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c_sum + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        H, C = H.clone(), C.clone()
        H[:, t], C[:, t] = h, c
        outs.append(h)
        rows.append(s[:, :T])
    return torch.stack(outs, 1), torch.stack(rows, 1)
""",
    ],
}

DELEGATING = {
    "lstmn_run": """
def lstmn_run(x, W_h, W_x, W_s, v, W_ih, W_hh, b):
    from seqlab.lstmn import LSTMN

    net = LSTMN(x.shape[-1], W_hh.shape[1], W_h.shape[0])
    with torch.no_grad():
        net.attn_h.weight.copy_(W_h)
        net.attn_x.weight.copy_(W_x)
        net.attn_x.bias.zero_()
        net.attn_s.weight.copy_(W_s)
        net.attn_v.weight.copy_(v[None])
        net.weight_ih.copy_(W_ih)
        net.weight_hh.copy_(W_hh)
        net.bias_ih.copy_(b)
        net.bias_hh.zero_()
    out, _, weights = net(x)
    return out, weights
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

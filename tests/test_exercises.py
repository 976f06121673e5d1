"""The graded exercises: built with otter, safe to hand out, and able to tell right from wrong.

For every chapter with exercises: `otter assign` builds it (and checks the reference solutions
pass), the student notebook holds no solution and no hidden test, every test case of every
question rejects at least one plausible wrong answer, and grading a correct, a partly wrong, an
untouched and a broken submission gives full, partial, zero and a clear rejection.
"""

import csv
import json
from pathlib import Path

import grade
import pytest
import torch
from course import chapters, has_exercises, questions
from course import fill as _fill
from course import solutions as _solutions
from otter.test_files import OKTestFile

EXERCISE_CHAPTERS = [nb for nb in chapters() if has_exercises(nb)]

# Plausible wrong answers, per chapter and question. Every test case (public and hidden) must
# fail at least one of them; the reference solution must pass every case.
WRONG = {
    "rnn_gradients": {
        "rnn_forward": [
            # forgot the nonlinearity
            """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, states = h0, []
    for t in range(x.shape[1]):
        h = x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh
        states.append(h)
    return torch.stack(states, dim=1), h
""",
            # stacked time-major: (T, N, E_h)
            """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, states = h0, []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states, dim=0), h
""",
            # W_hh not transposed
            """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h, states = h0, []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ W_ih.T + b_ih + h @ W_hh + b_hh)
        states.append(h)
    return torch.stack(states, dim=1), h
""",
        ],
        "grad_norms": [
            # norms of the states, not of the gradients
            """
def grad_norms(hs, loss):
    return torch.stack([h.norm() for h in hs])
""",
            # mean of per-example norms instead of the norm of the whole gradient
            """
def grad_norms(hs, loss):
    grads = torch.autograd.grad(loss, hs, allow_unused=True)
    return torch.stack([g.norm(dim=-1).mean() for g in grads])
""",
        ],
        "clip_by_global_norm": [
            # clips each tensor on its own
            """
def clip_by_global_norm(grads, max_norm):
    return [g * min(1.0, max_norm / float(g.norm())) if g.norm() > 0 else g.clone() for g in grads]
""",
            # always rescales to max_norm, even small (or zero) gradients
            """
def clip_by_global_norm(grads, max_norm):
    total = torch.sqrt(sum(g.square().sum() for g in grads))
    return [g * (max_norm / total) for g in grads]
""",
        ],
        "scale_to_spectral_radius": [
            # the spectral norm (largest singular value) instead of the spectral radius
            """
def scale_to_spectral_radius(W, rho):
    return W * (rho / torch.linalg.matrix_norm(W, 2))
""",
            # the largest real part instead of the largest absolute value
            """
def scale_to_spectral_radius(W, rho):
    return W * (rho / torch.linalg.eigvals(W).real.max())
""",
        ],
    },
    "lstm": {
        "lstm_cell_step": [
            # gates taken in the order i, f, o, g
            """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh):
    z = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh
    i, f, o, g = z.chunk(4, dim=-1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_new), c_new
""",
            # h from the cell without the tanh
            """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh):
    z = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh
    i, f, g, o = z.chunk(4, dim=-1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * c_new, c_new
""",
        ],
        "memory_bias": [
            # the usual forget-gate bias of 1: sigmoid(1) = 0.73 still forgets
            """
def memory_bias(E_h):
    bias = torch.zeros(4 * E_h)
    bias[E_h : 2 * E_h] = 1.0
    return bias
""",
            # forget gate open, but the input gate left at sigmoid(0) = 0.5
            """
def memory_bias(E_h):
    bias = torch.zeros(4 * E_h)
    bias[E_h : 2 * E_h] = 100.0
    return bias
""",
            # blocks swapped: input gate open, forget gate closed
            """
def memory_bias(E_h):
    bias = torch.zeros(4 * E_h)
    bias[:E_h] = 100.0
    bias[E_h : 2 * E_h] = -100.0
    return bias
""",
        ],
        "lstm_parameter_count": [
            # one bias vector instead of two
            """
def lstm_parameter_count(E_in, E_h):
    return 4 * (E_h * E_in + E_h * E_h + E_h)
""",
            # three gates' worth of weights
            """
def lstm_parameter_count(E_in, E_h):
    return 3 * (E_h * E_in + E_h * E_h + 2 * E_h)
""",
        ],
    },
    "self_attention": {
        "masked_attention": [
            # no 1 / sqrt(D) scaling
            """
def masked_attention(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1)).masked_fill(~mask, float("-inf"))
    seen = mask.any(dim=-1, keepdim=True)
    return scores.masked_fill(~seen, 0.0).softmax(dim=-1).masked_fill(~seen, 0.0) @ v
""",
            # the mask read the other way round
            """
def masked_attention(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(mask, float("-inf"))
    return scores.softmax(dim=-1) @ v
""",
            # right, except that a fully masked row gives NaN
            """
def masked_attention(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1) @ v
""",
        ],
        "heads": [
            # a reshape without the transpose mixes tokens into heads
            """
def to_heads(x, H):
    N, T, E = x.shape
    return x.reshape(N, H, T, E // H)


def from_heads(x):
    N, H, T, D = x.shape
    return x.reshape(N, T, H * D)
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
        ],
    },
    "lstmn": {
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
        ],
    },
    "seq2seq": {
        "beam_step": [
            # the k best tokens of each hypothesis, not the k best extensions overall
            """
def beam_step(scores, log_probs, k):
    best, token = log_probs.topk(1, dim=1)
    total = scores + best[:, 0]
    order = total.argsort(descending=True)[:k]
    return order, token[order, 0], total[order]
""",
            # the scores so far ignored
            """
def beam_step(scores, log_probs, k):
    best, index = log_probs.flatten().topk(k)
    return index // log_probs.shape[1], index % log_probs.shape[1], best
""",
        ],
        "normalised_score": [
            # multiplied instead of divided
            """
def normalised_score(log_prob, length, alpha):
    return log_prob * length**alpha
""",
            # alpha ignored: always the mean per token
            """
def normalised_score(log_prob, length, alpha):
    return log_prob / length
""",
        ],
        "brevity_penalty": [
            # the ratio upside down
            """
def brevity_penalty(c, r):
    return 1.0 if c > r else math.exp(1 - c / r)
""",
            # long outputs penalised too
            """
def brevity_penalty(c, r):
    return math.exp(1 - r / c)
""",
        ],
    },
    "bahdanau": {
        "additive_scores": [
            # the tanh forgotten
            """
def additive_scores(s, h, W, U, v):
    return ((s @ W.T).unsqueeze(1) + h @ U.T) @ v
""",
            # tanh applied after the projection by v
            """
def additive_scores(s, h, W, U, v):
    return torch.tanh(((s @ W.T).unsqueeze(1) + h @ U.T) @ v)
""",
        ],
        "context_vector": [
            # the mask ignored
            """
def context_vector(scores, h, mask):
    return (scores.softmax(dim=-1).unsqueeze(-1) * h).sum(dim=1)
""",
            # padding zeroed after the softmax, without renormalising
            """
def context_vector(scores, h, mask):
    alpha = scores.softmax(dim=-1) * mask
    return (alpha.unsqueeze(-1) * h).sum(dim=1)
""",
        ],
    },
    "luong": {
        "general_scores": [
            # W transposed (s^T W^T h): the shapes agree only when W is square
            """
def general_scores(s, h, W):
    return ((s @ W.T).unsqueeze(1) * h).sum(-1)
""",
            # the dot score, W forgotten
            """
def general_scores(s, h, W):
    return (s.unsqueeze(1) * h[..., : s.shape[1]]).sum(-1)
""",
        ],
        "local_p_weights": [
            # sigma = D instead of D / 2
            """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center.unsqueeze(1)
    alpha = scores.masked_fill(distance.abs() > D, float("-inf")).softmax(dim=-1)
    return alpha * torch.exp(-(distance**2) / (2 * D**2))
""",
            # the softmax taken over every position, then cut to the window
            """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center.unsqueeze(1)
    alpha = scores.softmax(dim=-1) * (distance.abs() <= D)
    return alpha * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
            # the Gaussian without the window: positions far away keep a tiny weight
            """
def local_p_weights(scores, center, D):
    distance = torch.arange(scores.shape[1]).float() - center.unsqueeze(1)
    return scores.softmax(dim=-1) * torch.exp(-(distance**2) / (2 * (D / 2) ** 2))
""",
        ],
    },
    "transformer": {
        "decoder_mask": [
            # causal only: padded keys still visible
            """
def decoder_mask(lengths, L):
    return torch.ones(L, L, dtype=torch.bool).tril().expand(len(lengths), L, L)
""",
            # strictly earlier keys (j < i): a token cannot see itself
            """
def decoder_mask(lengths, L):
    real = torch.arange(L) < lengths.unsqueeze(1)
    return torch.ones(L, L, dtype=torch.bool).tril(-1).unsqueeze(0) & real.unsqueeze(1)
""",
        ],
        "transformer_lr": [
            # the warm-up exponent -0.5 instead of -1.5
            """
def transformer_lr(step, d_model, warmup):
    return d_model**-0.5 * min(step**-0.5, step * warmup**-0.5)
""",
            # max instead of min
            """
def transformer_lr(step, d_model, warmup):
    return d_model**-0.5 * max(step**-0.5, step * warmup**-1.5)
""",
        ],
        "smoothed_loss": [
            # eps spread over the V - 1 wrong classes (another convention, not the one asked)
            """
def smoothed_loss(logits, target, eps):
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, eps / (logits.shape[-1] - 1))
    q[torch.arange(len(target)), target] = 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
            # log(softmax): overflows to inf for large logits
            """
def smoothed_loss(logits, target, eps):
    log_p = torch.log(logits.softmax(dim=-1))
    q = torch.full_like(log_p, eps / logits.shape[-1])
    q[torch.arange(len(target)), target] += 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
            # smoothing ignored
            """
def smoothed_loss(logits, target, eps):
    return torch.nn.functional.cross_entropy(logits, target)
""",
        ],
    },
    "positional_encoding": {
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
    },
}


# Answers that hand the work to the course's or PyTorch's implementation of the very thing the
# question asks for. Their public tests pass (the student sees green), and the hidden tests, which
# make those implementations unavailable while the answer runs, must fail them. Questions with no
# such implementation to call (grad_norms, memory_bias, normalised_score, brevity_penalty,
# tape_summary) are not listed; beam_step and intra_attention have one only inside a whole
# decoder / model, with nothing a one-step answer could call.
DELEGATING = {
    "rnn_gradients": {
        "rnn_forward": """
def rnn_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    import seqlab.rnn
    net = seqlab.rnn.RNN(W_ih.shape[1], W_ih.shape[0]).to(x.dtype)
    with torch.no_grad():
        net.cell.weight_ih.copy_(W_ih)
        net.cell.weight_hh.copy_(W_hh)
        net.cell.bias_ih.copy_(b_ih)
        net.cell.bias_hh.copy_(b_hh)
    return net(x, h0)
""",
        "clip_by_global_norm": """
def clip_by_global_norm(grads, max_norm):
    from seqlab.train import clip_grad_norm
    params = [torch.nn.Parameter(g.clone()) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    clip_grad_norm(params, max_norm)
    return [p.grad for p in params]
""",
        "scale_to_spectral_radius": """
from seqlab.rnn import set_spectral_radius
def scale_to_spectral_radius(W, rho):
    return set_spectral_radius(W, rho)
""",
    },
    "lstm": {
        "lstm_cell_step": """
def lstm_cell_step(x, h, c, W_ih, W_hh, b_ih, b_hh, _cell=nn.LSTMCell):
    cell = _cell(W_ih.shape[1], W_hh.shape[1]).to(x.dtype)
    with torch.no_grad():
        for p, w in zip(cell.parameters(), (W_ih, W_hh, b_ih, b_hh)):
            p.copy_(w)
    return cell(x, (h, c))
""",
        "lstm_parameter_count": """
def lstm_parameter_count(E_in, E_h):
    return sum(p.numel() for p in nn.LSTM(E_in, E_h).parameters())
""",
    },
    "bahdanau": {
        "additive_scores": """
def additive_scores(s, h, W, U, v):
    from seqlab.attention import AttentionScore
    score = AttentionScore("additive", W.shape[1], U.shape[1], W.shape[0])
    with torch.no_grad():
        score.W.weight.copy_(W)
        score.U.weight.copy_(U)
        score.U.bias.zero_()
        score.v.weight.copy_(v.unsqueeze(0))
    return score(s.unsqueeze(1), h)[:, 0]
""",
        "context_vector": """
import seqlab.attention as A
def context_vector(scores, h, mask):
    return (A.masked_softmax(scores, mask).unsqueeze(-1) * h).sum(dim=1)
""",
    },
    "luong": {
        "general_scores": """
def general_scores(s, h, W):
    from seqlab.attention import AttentionScore
    score = AttentionScore("general", W.shape[0], W.shape[1])
    with torch.no_grad():
        score.W.weight.copy_(W)
    return score(s.unsqueeze(1), h)[:, 0]
""",
        "local_p_weights": """
from seqlab.attention import gaussian_window, local_window
def local_p_weights(scores, center, D):
    inside = local_window(center.unsqueeze(1), scores.shape[1], D)[:, 0]
    alpha = scores.masked_fill(~inside, float("-inf")).softmax(dim=-1)
    return alpha * gaussian_window(center.unsqueeze(1), scores.shape[1], D)[:, 0]
""",
    },
    "self_attention": {
        "masked_attention": """
def masked_attention(q, k, v, mask):
    from seqlab.attention import scaled_dot_product_attention
    return scaled_dot_product_attention(q, k, v, mask)
""",
        "heads": """
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
    },
    "positional_encoding": {
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
    },
    "transformer": {
        "decoder_mask": """
from seqlab.masks import causal_mask, padding_mask
def decoder_mask(lengths, L):
    return causal_mask(L).unsqueeze(0) & padding_mask(lengths, L).unsqueeze(1)
""",
        "transformer_lr": """
from seqlab.train import warmup_inverse_sqrt as transformer_lr
""",
        "smoothed_loss": """
def smoothed_loss(logits, target, eps):
    return torch.nn.functional.cross_entropy(logits, target, label_smoothing=eps)
""",
    },
}


def _source(cell):
    return "".join(cell["source"])


def _cells(path):
    return json.loads(Path(path).read_text())["cells"]


def _setup_source(notebook):
    """The exercises' import cell: the last code cell before the first question."""
    cells = _cells(notebook)
    first = next(i for i, c in enumerate(cells) if _source(c).startswith("# BEGIN QUESTION"))
    return next(_source(c) for c in reversed(cells[:first]) if c["cell_type"] == "code")


def _test_file(dist, chapter, question, tmp_path):
    zip_path = next((dist / chapter / "autograder").glob("*.zip"))
    import zipfile

    with zipfile.ZipFile(zip_path) as archive:
        target = tmp_path / f"{question}.py"
        target.write_bytes(archive.read(f"tests/{question}.py"))
    return target


def _run_cases(test_path, setup, answer):
    env = {}
    exec(setup, env)
    exec(answer, env)
    test = OKTestFile.from_file(str(test_path))
    test.run(env)
    return [
        (case.name, case.hidden, result.passed)
        for case, result in zip(test.test_cases, test.test_case_results)
    ]


def test_every_chapter_with_exercises_has_wrong_answers():
    assert EXERCISE_CHAPTERS
    for notebook in EXERCISE_CHAPTERS:
        assert set(WRONG.get(notebook.stem, {})) == {q for q, _ in questions(notebook)}, notebook.stem


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_student_notebook_holds_no_solution_and_no_hidden_test(notebook, dist):
    files = sorted(p for p in (dist / notebook.stem / "student").rglob("*") if p.is_file())
    assert dist / notebook.stem / "student" / f"{notebook.stem}.ipynb" in files
    text = "\n".join(p.read_text(errors="replace") for p in files)  # every student-facing file
    assert "BEGIN SOLUTION" not in text and "hidden: true" not in text
    for reference in _solutions(notebook).values():
        body = [line.strip() for line in reference.splitlines()[1:] if line.strip()]
        assert not any(json.dumps(line)[1:-1] in text for line in body if len(line) > 20), "solution leaked"
    cells = [_source(c) for c in _cells(notebook) if c["cell_type"] == "code"]
    public = {line.strip() for c in cells if "hidden: true" not in c for line in c.splitlines()}
    for source in (c for c in cells if "hidden: true" in c):
        lines = [line.strip() for line in source.splitlines()[3:] if len(line.strip()) > 30]
        leaked = [
            line for line in lines if line not in public and (line in text or json.dumps(line)[1:-1] in text)
        ]
        assert not leaked, f"hidden test lines in a student-facing file: {leaked}"


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_each_test_case_passes_the_reference_and_rejects_a_wrong_answer(notebook, dist, tmp_path):
    setup, solutions = _setup_source(notebook), _solutions(notebook)
    for question, _ in questions(notebook):
        test_path = _test_file(dist, notebook.stem, question, tmp_path)
        reference = _run_cases(test_path, setup, solutions[question])
        assert reference and all(passed for *_, passed in reference), (question, reference)
        assert any(hidden for _, hidden, _ in reference) and not all(hidden for _, hidden, _ in reference), (
            f"{question} needs at least one public and one hidden test case"
        )
        rejected = {name: False for name, _, _ in reference}
        for wrong in WRONG[notebook.stem][question]:
            for name, _, passed in _run_cases(test_path, setup, wrong):
                rejected[name] = rejected[name] or not passed
        assert all(rejected.values()), f"{question}: cases that accept every wrong answer: {rejected}"


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_hidden_tests_reject_an_answer_that_delegates(notebook, dist, tmp_path):
    """A delegating answer passes the public tests and fails a hidden one, with the reason."""
    setup = _setup_source(notebook)
    for question, answer in DELEGATING.get(notebook.stem, {}).items():
        test_path = _test_file(dist, notebook.stem, question, tmp_path)
        results = _run_cases(test_path, setup, answer)
        assert all(passed for _, hidden, passed in results if not hidden), (question, results)
        assert not all(passed for _, hidden, passed in results if hidden), (
            f"{question}: delegation not caught"
        )
        test = OKTestFile.from_file(str(test_path))
        env = {}
        exec(setup, env)
        exec(answer, env)
        test.run(env)
        messages = [r.message for r in test.test_case_results if not r.passed]
        assert any("DelegationError" in m for m in messages), (question, messages)


def test_forbid_puts_everything_back():
    import seqlab.masks
    from seqlab.exercises import DelegationError, forbid

    original = seqlab.masks.causal_mask

    def make(mask=original):
        return lambda: mask(3)  # its closure holds the function

    closes_over = make()
    namespace = {"mine": original, "closes_over": closes_over}

    with forbid(namespace, "seqlab.masks.causal_mask", "torch.nn.LSTM"):
        assert seqlab.masks.causal_mask is not original and namespace["mine"] is not original
        with pytest.raises(DelegationError, match="seqlab.masks.causal_mask"):
            closes_over()
        with pytest.raises(DelegationError):
            torch.nn.LSTM(2, 3)
    assert seqlab.masks.causal_mask is original and namespace["mine"] is original
    assert closes_over().shape == (3, 3) and "forward" in vars(torch.nn.LSTM)
    assert torch.nn.LSTM(2, 3)(torch.zeros(1, 4, 2))[0].shape == (1, 4, 3)


@pytest.mark.parametrize("notebook", EXERCISE_CHAPTERS, ids=lambda p: p.stem)
def test_grading_gives_full_partial_and_zero_scores(notebook, dist, tmp_path):
    name = notebook.stem
    names = [q for q, _ in questions(notebook)]
    student_nb = dist / name / "student" / f"{name}.ipynb"
    solutions = _solutions(notebook)
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    correct = _fill(student_nb, solutions, names)
    partial = _fill(student_nb, {names[0]: solutions[names[0]], names[1]: WRONG[name][names[1]][0]}, names)
    (submissions / "correct.ipynb").write_text(json.dumps(correct))
    (submissions / "partial.ipynb").write_text(json.dumps(partial))
    (submissions / "untouched.ipynb").write_bytes(student_nb.read_bytes())
    (submissions / "broken.ipynb").write_text("{ this is not json")
    out = tmp_path / "grades.csv"
    assert grade.main([str(submissions), "--dist", str(dist), "--out", str(out), "--jobs", "2"]) == 0

    rows = {row["file"]: row for row in csv.DictReader(out.open())}
    assert set(rows) == {"correct.ipynb", "partial.ipynb", "untouched.ipynb", "broken.ipynb"}
    possible = float(rows["correct.ipynb"]["possible"])
    assert possible == sum(points for _, points in questions(notebook))
    assert float(rows["correct.ipynb"]["total"]) == possible, rows["correct.ipynb"]
    partial_row = rows["partial.ipynb"]
    assert (
        float(partial_row[names[0]]) > 0
        and float(partial_row[names[1]]) < dict(questions(notebook))[names[1]]
    )
    assert 0 < float(partial_row["total"]) < possible
    assert float(rows["untouched.ipynb"]["total"]) == 0
    assert rows["broken.ipynb"]["status"] == "rejected" and "not a notebook" in rows["broken.ipynb"]["error"]
    assert all(rows[f]["status"] == "graded" for f in ("correct.ipynb", "partial.ipynb", "untouched.ipynb"))

"""Answers for the graded exercises of the transformer chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one, and every
wrong answer fails a public test case.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

# Questions whose public check accepts the answer's format only (a letter, a whole number in a
# range) and says so; a wrong value in the right format passes it and fails a hidden test. Every
# other WRONG answer fails at least one public test case.
FORMAT_ONLY = set()

WRONG = {
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
        # the first sequence's length used for the whole batch (right at N = 1 only)
        """
def decoder_mask(lengths, L):
    real = torch.arange(L) < lengths[0]
    return (torch.ones(L, L, dtype=torch.bool).tril() & real).expand(len(lengths), L, L)
""",
        # padded queries masked instead of padded keys
        """
def decoder_mask(lengths, L):
    real = torch.arange(L) < lengths.unsqueeze(1)
    return torch.ones(L, L, dtype=torch.bool).tril().unsqueeze(0) & real.unsqueeze(2)
""",
        # ones and zeros, not a bool mask
        """
def decoder_mask(lengths, L):
    real = torch.arange(L) < lengths.unsqueeze(1)
    return (torch.ones(L, L, dtype=torch.bool).tril().unsqueeze(0) & real.unsqueeze(1)).long()
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
        # a one-element tensor, not a Python float
        """
def transformer_lr(step, d_model, warmup):
    step = torch.tensor(float(step))
    return d_model**-0.5 * torch.minimum(step**-0.5, step * warmup**-1.5)
""",
        # d_model and warmup of the public example, hard-coded
        """
def transformer_lr(step, d_model, warmup):
    return 512**-0.5 * min(step**-0.5, step * 4000**-1.5)
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
        # the mean over all M x V entries instead of a sum over V, then the mean over M
        """
def smoothed_loss(logits, target, eps):
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, eps / logits.shape[-1])
    q[torch.arange(len(target)), target] += 1 - eps
    return -(q * log_p).mean()
""",
    ],
    "encoder_layer_parameters": [
        # heads counted as if each had full-width projections
        """
def encoder_layer_parameters(E, d_ff, H):
    return H * 4 * (E * E + E) + 2 * E * d_ff + d_ff + E + 4 * E
""",
        # biases forgotten
        """
def encoder_layer_parameters(E, d_ff, H):
    return 4 * E * E + 2 * E * d_ff + 4 * E
""",
        # the LayerNorms forgotten
        """
def encoder_layer_parameters(E, d_ff, H):
    return 4 * (E * E + E) + 2 * E * d_ff + d_ff + E
""",
        # the output projection W_O forgotten
        """
def encoder_layer_parameters(E, d_ff, H):
    return 3 * (E * E + E) + 2 * E * d_ff + d_ff + E + 4 * E
""",
        # the count at (8, 16, 2), hard-coded
        """
def encoder_layer_parameters(E, d_ff, H):
    return 600
""",
        # the head width E / H in W_O: right at H = 1 only
        """
def encoder_layer_parameters(E, d_ff, H):
    return 3 * (E * E + E) + E * (E // H) + E + 2 * E * d_ff + d_ff + E + 4 * E
""",
        # a float
        """
def encoder_layer_parameters(E, d_ff, H):
    return 4.0 * E * E + 2 * E * d_ff + 9 * E + d_ff
""",
    ],
    "decoding_step_macs": [
        # t tokens in the prefix instead of t + 1
        """
def decoding_step_macs(t, E, cache):
    return 3 * E * E + 2 * t * E if cache else 3 * t * E * E + 2 * t * t * E
""",
        # the attention itself forgotten: projections only
        """
def decoding_step_macs(t, E, cache):
    return 3 * E * E if cache else 3 * (t + 1) * E * E
""",
        # with the cache, the queries of every position still recomputed
        """
def decoding_step_macs(t, E, cache):
    n = t + 1
    return (n * E * E + 2 * E * E + 2 * n * E) if cache else 3 * n * E * E + 2 * n * n * E
""",
        # the public values, hard-coded
        """
def decoding_step_macs(t, E, cache):
    return 256 if cache else 1024
""",
        # without the cache, only the causal half of the score matrix counted
        """
def decoding_step_macs(t, E, cache):
    n = t + 1
    return 3 * E * E + 2 * n * E if cache else 3 * n * E * E + n * (n + 1) * E
""",
    ],
    "mqa_cache_numbers": [
        # the cache of multi-head attention: keys and values of width E, not D
        """
def mqa_cache_numbers(layers, T, E, H):
    return 2 * layers * T * E
""",
        # keys only: the values are cached too
        """
def mqa_cache_numbers(layers, T, E, H):
    return layers * T * (E // H)
""",
        # one layer's cache, not the stack's
        """
def mqa_cache_numbers(layers, T, E, H):
    return 2 * T * (E // H)
""",
        # the public value, hard-coded
        """
def mqa_cache_numbers(layers, T, E, H):
    return 76800
""",
        # a float
        """
def mqa_cache_numbers(layers, T, E, H):
    return 2 * layers * T * E / H
""",
    ],
    "multi_query_attention": [
        # the scores scaled by 1 / sqrt(E) instead of 1 / sqrt(D)
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    q = (x @ W_q.T).reshape(N, T, H, E // H).transpose(1, 2)
    k, v = (x @ W_k.T).unsqueeze(1), (x @ W_v.T).unsqueeze(1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(E)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    out = scores.masked_fill(future, float("-inf")).softmax(-1) @ v
    return out.transpose(1, 2).reshape(N, T, E) @ W_o.T
""",
        # no causal mask: every query sees the future
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    q = (x @ W_q.T).reshape(N, T, H, E // H).transpose(1, 2)
    k, v = (x @ W_k.T).unsqueeze(1), (x @ W_v.T).unsqueeze(1)
    out = (q @ k.transpose(-2, -1) / math.sqrt(E // H)).softmax(-1) @ v
    return out.transpose(1, 2).reshape(N, T, E) @ W_o.T
""",
        # the heads merged with a reshape alone: tokens and heads mixed
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    q = (x @ W_q.T).reshape(N, T, H, E // H).transpose(1, 2)
    k, v = (x @ W_k.T).unsqueeze(1), (x @ W_v.T).unsqueeze(1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(E // H)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    out = scores.masked_fill(future, float("-inf")).softmax(-1) @ v
    return out.reshape(N, T, E) @ W_o.T
""",
        # the queries split into heads with a stride (head h: features h, h + H, ...)
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    q = (x @ W_q.T).reshape(N, T, E // H, H).permute(0, 3, 1, 2)
    k, v = (x @ W_k.T).unsqueeze(1), (x @ W_v.T).unsqueeze(1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(E // H)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    out = scores.masked_fill(future, float("-inf")).softmax(-1) @ v
    return out.permute(0, 2, 3, 1).reshape(N, T, E) @ W_o.T
""",
    ],
}

DELEGATING = {
    "multi_query_attention": """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    E, T = x.shape[-1], x.shape[1]
    layer = torch.nn.MultiheadAttention(E, H, bias=False, batch_first=True, dtype=x.dtype)
    weights = {"in_proj_weight": torch.cat([W_q, W_k.repeat(H, 1), W_v.repeat(H, 1)]), "out_proj.weight": W_o}
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    options = {"attn_mask": future, "need_weights": False}
    return torch.func.functional_call(layer, weights, (x, x, x), options)[0]
""",
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
    "encoder_layer_parameters": """
from seqlab.transformer import EncoderLayer
from seqlab.utils import count_parameters
def encoder_layer_parameters(E, d_ff, H):
    return count_parameters(EncoderLayer(E, H, d_ff))
""",
}

# Plausible wrong answers of the kinds that got past the earlier tests (inputs changed in place,
# broken gradients, delegation, .squeeze() at size 1, finite fills, the named edge cases, types,
# float64 from float32), written before the tests were strengthened: every one must fail a test
# case, and a public one unless it only delegates (tests/test_exercises.py).
WRONG_NEW = {
    "decoder_mask": [
        # .squeeze() of the (N, L) key mask: breaks at N = 1 or L = 1
        """
def decoder_mask(lengths, L):
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    real = (torch.arange(L)[None, :] < lengths[:, None]).squeeze()
    return causal[None] & real[:, None, :]
""",
        # lengths - 1 through a view: the caller's lengths lose one
        """
def decoder_mask(lengths, L):
    last = lengths.unsqueeze(1)
    last -= 1
    return torch.ones(L, L, dtype=torch.bool).tril()[None] & (torch.arange(L) <= last)[:, None]
""",
        # the size from the lengths, not L: (N, max, max) when every sequence is shorter than L
        """
def decoder_mask(lengths, L):
    L_real = int(lengths.max())
    causal = torch.ones(L_real, L_real, dtype=torch.bool).tril()
    real = torch.arange(L_real) < lengths.unsqueeze(1)
    out = torch.zeros(len(lengths), L, L, dtype=torch.bool)
    out[:, :L_real, :L_real] = causal & real[:, None]
    return out
""",
        # the masks remembered between calls: the same tensor returned again (a caller that
        # edits one mask edits the next)
        """
_SEEN = {}


def decoder_mask(lengths, L):
    key = (tuple(lengths.tolist()), L)
    if key not in _SEEN:
        causal = torch.ones(L, L, dtype=torch.bool).tril()
        _SEEN[key] = causal[None] & (torch.arange(L) < lengths[:, None])[:, None]
    return _SEEN[key]
""",
    ],
    "transformer_lr": [
        # a float32 computation: right to 7 digits only
        """
def transformer_lr(step, d_model, warmup):
    s = torch.tensor(float(step))
    return float(d_model**-0.5 * torch.minimum(s**-0.5, s * warmup**-1.5))
""",
        # the step counted from 0
        """
def transformer_lr(step, d_model, warmup):
    step = step + 1
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
""",
        # a one-element tensor, not a float
        """
def transformer_lr(step, d_model, warmup):
    return torch.tensor(d_model**-0.5 * min(step**-0.5, step * warmup**-1.5), dtype=torch.float64)
""",
    ],
    "smoothed_loss": [
        # shifts the caller's logits in place for stability
        """
def smoothed_loss(logits, target, eps):
    logits -= logits.max(dim=-1, keepdim=True).values
    log_p = logits.log_softmax(dim=-1)
    q = torch.full_like(log_p, eps / logits.shape[-1])
    q[torch.arange(len(target)), target] += 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
        # one_hot without num_classes: V taken from the largest target present
        """
def smoothed_loss(logits, target, eps):
    log_p = logits.log_softmax(dim=-1)
    onehot = torch.nn.functional.one_hot(target)
    onehot = torch.nn.functional.pad(onehot, (0, logits.shape[-1] - onehot.shape[-1]))
    q = (1 - eps) * onehot + eps / onehot.shape[-1]
    return -(q * log_p).sum(-1).mean()
""",
        # the log-probabilities detached: no gradient reaches the logits
        """
def smoothed_loss(logits, target, eps):
    log_p = logits.detach().log_softmax(dim=-1)
    q = torch.full_like(log_p, eps / logits.shape[-1])
    q[torch.arange(len(target)), target] += 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
        # the smoothed target in float64: a float64 loss from float32 logits
        """
def smoothed_loss(logits, target, eps):
    log_p = logits.log_softmax(dim=-1)
    q = torch.full(log_p.shape, eps / logits.shape[-1], dtype=torch.float64)
    q[torch.arange(len(target)), target] += 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
        # log(softmax) with a floor against log(0): finite, and wrong wherever it is reached
        """
def smoothed_loss(logits, target, eps):
    log_p = torch.log(logits.softmax(dim=-1).clamp_min(1e-30))
    q = torch.full_like(log_p, eps / logits.shape[-1])
    q[torch.arange(len(target)), target] += 1 - eps
    return -(q * log_p).sum(-1).mean()
""",
    ],
    "encoder_layer_parameters": [
        # builds the layer's parts instead of counting
        """
def encoder_layer_parameters(E, d_ff, H):
    parts = [torch.nn.MultiheadAttention(E, H), torch.nn.Linear(E, d_ff), torch.nn.Linear(d_ff, E),
             torch.nn.LayerNorm(E), torch.nn.LayerNorm(E)]
    return sum(p.numel() for m in parts for p in m.parameters())
""",
        # a bias of width E for every head's query, key and value projection
        """
def encoder_layer_parameters(E, d_ff, H):
    D = E // H
    return H * 3 * (E * D + E) + E * E + E + 2 * E * d_ff + d_ff + E + 4 * E
""",
        # the key projection without its bias
        """
def encoder_layer_parameters(E, d_ff, H):
    return 4 * E * E + 3 * E + 2 * E * d_ff + d_ff + E + 4 * E
""",
    ],
    "decoding_step_macs": [
        # cache=True: the new token's key and value counted but its score left out
        """
def decoding_step_macs(t, E, cache):
    n = t + 1
    if cache:
        return 3 * E * E + 2 * t * E + E
    return 3 * n * E * E + 2 * n * n * E
""",
        # only the causal half of the score matrix without the cache
        """
def decoding_step_macs(t, E, cache):
    n = t + 1
    if cache:
        return 3 * E * E + 2 * n * E
    return 3 * n * E * E + n * (n + 1) * E
""",
        # math.pow: a float count
        """
def decoding_step_macs(t, E, cache):
    n = t + 1
    if cache:
        return 3 * math.pow(E, 2) + 2 * n * E
    return 3 * n * math.pow(E, 2) + 2 * n * n * E
""",
    ],
    "mqa_cache_numbers": [
        # a float
        """
def mqa_cache_numbers(layers, T, E, H):
    return 2 * layers * T * E / H
""",
        # one head's key only (no value)
        """
def mqa_cache_numbers(layers, T, E, H):
    return layers * T * (E // H)
""",
        # every head's keys and values: the multi-head cache
        """
def mqa_cache_numbers(layers, T, E, H):
    return 2 * layers * T * E
""",
    ],
    "multi_query_attention": [
        # a finite fill: wrong when the scores are of the order of 1e4
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    D = E // H
    q = (x @ W_q.T).reshape(N, T, H, D).transpose(1, 2)
    k, v = (x @ W_k.T).unsqueeze(1), (x @ W_v.T).unsqueeze(1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    weights = scores.masked_fill(future, -1e4).softmax(dim=-1)
    return (weights @ v).transpose(1, 2).reshape(N, T, E) @ W_o.T
""",
        # the scores under no_grad: nothing reaches W_q or W_k
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    D = E // H
    with torch.no_grad():
        q = (x @ W_q.T).reshape(N, T, H, D).transpose(1, 2)
        k = (x @ W_k.T).unsqueeze(1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    v = (x @ W_v.T).unsqueeze(1)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
    return (weights @ v).transpose(1, 2).reshape(N, T, E) @ W_o.T
""",
        # a float32 buffer for the heads: fails for float64 inputs
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    D = E // H
    q, k, v = x @ W_q.T, x @ W_k.T, x @ W_v.T
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    out = torch.zeros(N, T, E)
    for h in range(H):
        s = q[..., h * D : (h + 1) * D] @ k.transpose(1, 2) / math.sqrt(D)
        out[..., h * D : (h + 1) * D] = s.masked_fill(future, float("-inf")).softmax(-1) @ v
    return out @ W_o.T
""",
        # PyTorch's fused attention with the shared head expanded: the delegation the question forbids
        """
def multi_query_attention(x, W_q, W_k, W_v, W_o, H):
    N, T, E = x.shape
    D = E // H
    q = (x @ W_q.T).reshape(N, T, H, D).transpose(1, 2)
    k = (x @ W_k.T).unsqueeze(1).expand(N, H, T, D)
    v = (x @ W_v.T).unsqueeze(1).expand(N, H, T, D)
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    return out.transpose(1, 2).reshape(N, T, E) @ W_o.T
""",
    ],
}

# Wrong answers that only the hidden test can tell: right on every size the public cases use.
WRONG_HIDDEN = {
    "decoder_mask": [
        # a causal mask made once for 1024 positions and sliced: wrong past its size
        """
_CAUSAL = torch.ones(1024, 1024, dtype=torch.bool).tril()


def decoder_mask(lengths, L):
    return _CAUSAL[None, :L, :L] & (torch.arange(L) < lengths[:, None])[:, None]
""",
    ],
}

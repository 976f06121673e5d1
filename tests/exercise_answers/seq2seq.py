"""Answers for the graded exercises of the seq2seq chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

# the reference solution of beam_search_batch, from which the wrong answers below differ in one place
_SEARCH = """
def beam_search_batch(step, N, k, max_len, bos, eos):
    owner = torch.arange(N)  # (R,): the input of each live prefix, by input, best first
    prefixes = torch.full((N, 1), bos, dtype=torch.long)  # (R, t)
    scores = torch.zeros(N, dtype=torch.float64)  # (R,)
    finished = [[] for _ in range(N)]
    for t in range(1, max_len + 1):
        total = scores[:, None] + step(owner, prefixes).double()  # (R, V)
        V = total.shape[1]
        keep = []  # (row, token) of the next live prefixes, by input, best first
        for n in range(N):
            rows = (owner == n).nonzero().flatten()  # this input's live prefixes, in rank order
            flat = total[rows].flatten()  # (W * V,): row-major, so ties go to the lower index
            live = 0
            for i in flat.sort(descending=True, stable=True).indices.tolist():
                row, token = int(rows[i // V]), i % V
                if t == max_len or token == eos:
                    tokens = torch.cat([prefixes[row, 1:], torch.tensor([token])])
                    finished[n].append((tokens, flat[i].item()))
                else:
                    keep.append((row, token))
                    live += 1
                    if live == k:
                        break
        if not keep:
            break
        rows, tokens = torch.tensor(keep).T
        owner, scores = owner[rows], total[rows, tokens]
        prefixes = torch.cat([prefixes[rows], tokens[:, None]], dim=1)
    return [sorted(found, key=lambda pair: -pair[1])[:k] for found in finished]
"""


def _search(old, new):
    assert old in _SEARCH, old
    return _SEARCH.replace(old, new)


WRONG = {
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
        # the flat index split by B instead of V (right only when B == V)
        """
def beam_step(scores, log_probs, k):
    best, index = (scores.unsqueeze(1) + log_probs).flatten().topk(k)
    return index // log_probs.shape[0], index % log_probs.shape[0], best
""",
        # the scores added along the wrong axis: scores[v] + log_probs[b, v]
        """
def beam_step(scores, log_probs, k):
    total = (scores[: log_probs.shape[1]].unsqueeze(0) + log_probs[:, : scores.shape[0]]).flatten()
    best, index = total.topk(k)
    width = min(log_probs.shape[1], scores.shape[0])
    return index // width, index % width, best
""",
        # at most one extension per hypothesis (k > B cannot be filled right)
        """
def beam_step(scores, log_probs, k):
    best, token = (scores.unsqueeze(1) + log_probs).max(dim=1)
    order = best.argsort(descending=True)
    order = order.repeat(k)[:k]
    return order, token[order], best[order]
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
        # integer division: right only when c divides r
        """
def brevity_penalty(c, r):
    return 1.0 if c > r else math.exp(1 - r // c)
""",
    ],
    "beam_candidates": [
        # k hypotheses extended at every step, the first included
        """
def beam_candidates(k, T, V):
    return k * T * V
""",
        # exhaustive search instead of beam search
        """
def beam_candidates(k, T, V):
    return V**T
""",
        # one candidate per hypothesis and step, the vocabulary forgotten
        """
def beam_candidates(k, T, V):
    return 1 + (T - 1) * k
""",
        # V(kT - 1): equal to the right count only at k = 2
        """
def beam_candidates(k, T, V):
    return V * (k * T - 1)
""",
        # the count of the first check hard-coded
        """
def beam_candidates(k, T, V):
    return 25
""",
    ],
    "beam_picks": [
        # the page's answer hard-coded, length normalisation ignored
        """
def beam_picks(finished):
    return "a", "a"
""",
        # the longest output taken for the best with alpha = 1
        """
def beam_picks(finished):
    return "a", "d"
""",
        # the page's picks swapped
        """
def beam_picks(finished):
    return "b", "a"
""",
        # the page's picks in capitals
        """
def beam_picks(finished):
    return "A", "B"
""",
        # a score instead of a letter
        """
def beam_picks(finished):
    return -1.5, -0.2
""",
        # the two alphas swapped
        """
def beam_picks(finished):
    def pick(alpha):
        return max(finished, key=lambda y: finished[y][1] / finished[y][0] ** alpha)

    return pick(1.0), pick(0.0)
""",
        # the lowest score picked (a log-probability read as a cost)
        """
def beam_picks(finished):
    def pick(alpha):
        return min(finished, key=lambda y: finished[y][1] / finished[y][0] ** alpha)

    return pick(0.0), pick(1.0)
""",
        # multiplied by the length instead of divided
        """
def beam_picks(finished):
    def pick(alpha):
        return max(finished, key=lambda y: finished[y][1] * finished[y][0] ** alpha)

    return pick(0.0), pick(1.0)
""",
    ],
    "sentence_bleu": [
        # counts not clipped: a repeated word matches every time
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    log_sum = 0.0
    for n in range(1, 5):
        hyp = [tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1)]
        ref = set(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum(gram in ref for gram in hyp)
        if matches == 0:
            return 0.0
        log_sum += math.log(matches / len(hyp))
    c, r = len(hypothesis), len(reference)
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * math.exp(log_sum / 4)
""",
        # no brevity penalty
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    log_sum = 0.0
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0.0
        log_sum += math.log(matches / sum(hyp.values()))
    return 100 * math.exp(log_sum / 4)
""",
        # the arithmetic mean of the precisions instead of the geometric one
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    total = 0.0
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0.0
        total += matches / sum(hyp.values())
    c, r = len(hypothesis), len(reference)
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * total / 4
""",
        # precision over the reference's n-grams (a recall)
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    log_sum = 0.0
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0.0
        log_sum += math.log(matches / sum(ref.values()))
    c, r = len(hypothesis), len(reference)
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * math.exp(log_sum / 4)
""",
        # precisions that are 0 skipped instead of making BLEU 0
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    logs = []
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches:
            logs.append(math.log(matches / sum(hyp.values())))
    c, r = len(hypothesis), len(reference)
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * math.exp(sum(logs) / len(logs))
""",
        # on the scale 0 to 1
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    log_sum = 0.0
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0.0
        log_sum += math.log(matches / sum(hyp.values()))
    c, r = len(hypothesis), len(reference)
    return (1.0 if c > r else math.exp(1 - r / c)) * math.exp(log_sum / 4)
""",
    ],
    "beam_search_batch": [
        # one search per input (right results, but step called N times per position)
        """
def beam_search_batch(step, N, k, max_len, bos, eos):
    results = []
    for n in range(N):
        live, finished = [([bos], 0.0)], []
        for t in range(1, max_len + 1):
            prefixes = torch.tensor([p for p, _ in live])
            log_probs = step(torch.full((len(live),), n), prefixes).double()
            extensions = sorted(
                ((s + log_probs[r, v].item(), r, v) for r, (_, s) in enumerate(live)
                 for v in range(log_probs.shape[1])),
                key=lambda e: -e[0],
            )
            going_on = []
            for s, r, v in extensions:
                if v == eos or t == max_len:
                    finished.append((torch.tensor(live[r][0][1:] + [v]), s))
                else:
                    going_on.append((live[r][0] + [v], s))
                    if len(going_on) == k:
                        break
            if not going_on:
                break
            live = going_on
        results.append(sorted(finished, key=lambda f: -f[1])[:k])
    return results
""",
        # finished extensions take places in the beam: k extensions in all, not k live ones
        _search(
            "                    finished[n].append((tokens, flat[i].item()))\n",
            "                    finished[n].append((tokens, flat[i].item()))\n"
            "                    live += 1\n"
            "                    if live == k:\n"
            "                        break\n",
        ),
        # hypotheses alive at max_len dropped instead of finished there
        _search("if t == max_len or token == eos:", "if token == eos:"),
        # the tokens returned with bos in front
        _search("prefixes[row, 1:]", "prefixes[row, :]"),
    ],
}

DELEGATING = {
    "sentence_bleu": """
def sentence_bleu(hypothesis, reference):
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize="none", smooth_method="none")
    return bleu.corpus_score([" ".join(hypothesis)], [[" ".join(reference)]]).score
""",
}

# Plausible wrong answers written before the tests were strengthened, to measure them
# (tests/test_exercises.py: each must fail a test case, and a public one unless it only delegates).
WRONG_NEW = {
    "beam_step": [
        # the scores added into the caller's log_probs, in place
        """
def beam_step(scores, log_probs, k):
    log_probs += scores.unsqueeze(1)
    best, index = log_probs.flatten().topk(k)
    return index // log_probs.shape[1], index % log_probs.shape[1], best
""",
        # .squeeze() of the indices: a 0-d tensor at k = 1
        """
def beam_step(scores, log_probs, k):
    best, index = (scores.unsqueeze(1) + log_probs).flatten().topk(k)
    V = log_probs.shape[1]
    return (index // V).squeeze(), (index % V).squeeze(), best.squeeze()
""",
        # ties left to topk's own order, not the lowest flat index first
        """
def beam_step(scores, log_probs, k):
    total = (scores.unsqueeze(1) + log_probs).flatten()
    best, index = total.topk(k)
    return index // log_probs.shape[1], index % log_probs.shape[1], best
""",
        # float indices (true division, floored)
        """
def beam_step(scores, log_probs, k):
    order = (scores.unsqueeze(1) + log_probs).flatten().sort(descending=True, stable=True)
    index = order.indices[:k]
    V = log_probs.shape[1]
    return (index / V).floor(), (index % V).float(), order.values[:k]
""",
        # the totals detached from the graph (no gradient reaches scores or log_probs)
        """
def beam_step(scores, log_probs, k):
    order = (scores.unsqueeze(1) + log_probs).detach().flatten().sort(descending=True, stable=True)
    index = order.indices[:k]
    return index // log_probs.shape[1], index % log_probs.shape[1], order.values[:k]
""",
    ],
    "normalised_score": [
        # a tensor, not a Python float
        """
def normalised_score(log_prob, length, alpha):
    return torch.tensor(log_prob, dtype=torch.float64) / length**alpha
""",
        # computed in float32
        """
def normalised_score(log_prob, length, alpha):
    return float(torch.tensor(log_prob) / torch.tensor(float(length)) ** alpha)
""",
        # floor division
        """
def normalised_score(log_prob, length, alpha):
    return log_prob // length**alpha
""",
        # rounded for display
        """
def normalised_score(log_prob, length, alpha):
    return round(log_prob / length**alpha, 6)
""",
    ],
    "brevity_penalty": [
        # the int 1, not a float, when there is no penalty
        """
def brevity_penalty(c, r):
    return math.exp(1 - r / c) if c < r else 1
""",
        # a one-element tensor
        """
def brevity_penalty(c, r):
    if c > r:
        return torch.tensor(1.0, dtype=torch.float64)
    return torch.exp(torch.tensor(1 - r / c, dtype=torch.float64))
""",
        # computed in float32
        """
def brevity_penalty(c, r):
    return 1.0 if c > r else float(torch.tensor(1 - r / c).exp())
""",
    ],
    "beam_candidates": [
        # a float count
        """
def beam_candidates(k, T, V):
    return V * (1 + k * (T - 1.0))
""",
        # a 0-d tensor
        """
def beam_candidates(k, T, V):
    return torch.tensor([V] + [k * V] * (T - 1)).sum()
""",
        # EOS never extended: V - 1 tokens after the first step
        """
def beam_candidates(k, T, V):
    return V + (T - 1) * k * (V - 1)
""",
    ],
    "beam_picks": [
        # the caller's table normalised in place
        """
def beam_picks(finished):
    first = max(finished, key=lambda y: finished[y][1])
    for y, (length, log_p) in finished.items():
        finished[y] = (length, log_p / length)
    return first, max(finished, key=lambda y: finished[y][1])
""",
        # lengths without the EOS
        """
def beam_picks(finished):
    def pick(alpha):
        return max(finished, key=lambda y: finished[y][1] / (finished[y][0] - 1) ** alpha)

    return pick(0.0), pick(1.0)
""",
        # a list, not a tuple
        """
def beam_picks(finished):
    return [max(finished, key=lambda y: finished[y][1] / finished[y][0] ** a) for a in (0, 1)]
""",
    ],
    "sentence_bleu": [
        # the brevity penalty first: divides by zero for an empty hypothesis
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    c, r = len(hypothesis), len(reference)
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    log_sum = 0.0
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0.0
        log_sum += math.log(matches / sum(hyp.values()))
    return 100 * penalty * math.exp(log_sum / 4)
""",
        # the tokens lower-cased in the caller's lists
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    for tokens in (hypothesis, reference):
        tokens[:] = [t.lower() for t in tokens]
    log_sum = 0.0
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0.0
        log_sum += math.log(matches / sum(hyp.values()))
    c, r = len(hypothesis), len(reference)
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * math.exp(log_sum / 4)
""",
        # the int 0 when a precision is 0
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    log_sum = 0.0
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0
        log_sum += math.log(matches / sum(hyp.values()))
    c, r = len(hypothesis), len(reference)
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * math.exp(log_sum / 4)
""",
        # the precisions' geometric mean in float32
        """
def sentence_bleu(hypothesis, reference):
    from collections import Counter

    precisions = []
    for n in range(1, 5):
        hyp = Counter(tuple(hypothesis[i : i + n]) for i in range(len(hypothesis) - n + 1))
        ref = Counter(tuple(reference[i : i + n]) for i in range(len(reference) - n + 1))
        matches = sum((hyp & ref).values())
        if matches == 0:
            return 0.0
        precisions.append(matches / sum(hyp.values()))
    c, r = len(hypothesis), len(reference)
    mean = torch.tensor(precisions).log().mean().exp().item()
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * mean
""",
    ],
    "beam_search_batch": [
        # ties left to topk's order instead of the lower index first
        _search(
            "flat.sort(descending=True, stable=True).indices.tolist()",
            "flat.topk(len(flat)).indices.tolist()",
        ),
        # every finished extension of the walk recorded, also below the k-th live one
        _search(
            "                    if live == k:\n                        break\n",
            "",
        ).replace(
            "                    keep.append((row, token))\n",
            "                    if live < k:\n                        keep.append((row, token))\n",
        ),
        # the score a 0-d tensor, not a Python float
        _search("flat[i].item()", "flat[i]"),
        # the scores kept in float32: the model's rounding is exact, so only the type differs
        _search(
            "finished[n].append((tokens, flat[i].item()))",
            "finished[n].append((tokens, flat[i].float()))",
        ),
        # the final ranking by length-normalised score (alpha = 1) instead of the summed log-probs
        _search("key=lambda pair: -pair[1]", "key=lambda pair: -pair[1] / len(pair[0])"),
        # tokens as a Python list
        _search(
            "torch.cat([prefixes[row, 1:], torch.tensor([token])])",
            "prefixes[row, 1:].tolist() + [token]",
        ),
    ],
}

# Kinds of wrong answer that once earned full marks (issue 47): a forbidden implementation reached
# another way than by the names listed. The public check refuses the computation itself.
WRONG_NEW["sentence_bleu"] += [
    # sacrebleu's BLEU made when the cell runs, before the check forbids anything
    """
from sacrebleu.metrics import BLEU

_BLEU = BLEU(tokenize="none", smooth_method="none")


def sentence_bleu(hypothesis, reference):
    return _BLEU.sentence_score(" ".join(hypothesis), [" ".join(reference)]).score
""",
    # sacrebleu's function through a module the list of names does not hold
    """
def sentence_bleu(hypothesis, reference):
    from sacrebleu.compat import sentence_bleu as bleu

    return bleu(" ".join(hypothesis), [" ".join(reference)], tokenize="none", smooth_method="none").score
""",
]
WRONG_NEW["beam_candidates"] += [
    # counted by running the package's search through its private entry point, with a counter of
    # its own (not CountingStep)
    """
def beam_candidates(k, T, V):
    from seqlab.decoding import _beam_search

    rows = []

    def model(tokens, state):
        rows.append(len(tokens))
        return torch.zeros(len(tokens), V).log_softmax(-1), state

    _beam_search(model, None, 1, k, T, 0.0, V, V, torch.device("cpu"))
    return sum(rows) * V
""",
]

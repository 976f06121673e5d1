"""Answers for the graded exercises of the seq2seq chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one.
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

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
}

DELEGATING = {
    "sentence_bleu": """
def sentence_bleu(hypothesis, reference):
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize="none", smooth_method="none")
    return bleu.corpus_score([" ".join(hypothesis)], [[" ".join(reference)]]).score
""",
}

"""Answers for the graded exercises of the language-model chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one, and every
wrong answer fails a public test case (a wrong letter of hot_sampling: a hidden one).
WRONG_HIDDEN: wrong answers that only the hidden test can tell (they remember the public cases).
DELEGATING: answers that hand the work to the implementation the question asks for; the
hidden tests must fail them (questions with nothing to delegate to are left out).
"""

# Questions whose public check accepts the answer's format only (a letter, a whole number in a
# range) and says so; a wrong value in the right format passes it and fails a hidden test. Every
# other WRONG answer fails at least one public test case.
FORMAT_ONLY = {"hot_sampling"}

WRONG = {
    "padded_perplexity": [
        # padding counted as targets
        """
def padded_perplexity(logits, targets, pad):
    log_p = logits.log_softmax(dim=-1)
    return math.exp(-log_p.gather(-1, targets.unsqueeze(-1)).mean().item())
""",
        # a mean of the rows' means: short rows weigh as much as long ones
        """
def padded_perplexity(logits, targets, pad):
    log_p = logits.log_softmax(dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    real = (targets != pad).double()
    return math.exp(-((log_p * real).sum(1) / real.sum(1)).mean().item())
""",
        # the mean loss, not its exponential
        """
def padded_perplexity(logits, targets, pad):
    log_p = logits.log_softmax(dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return -log_p[targets != pad].mean().item()
""",
        # log of the softmax: -inf for large logits
        """
def padded_perplexity(logits, targets, pad):
    log_p = logits.softmax(dim=-1).log().gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return math.exp(-log_p[targets != pad].mean().item())
""",
        # a tensor, not a float
        """
def padded_perplexity(logits, targets, pad):
    log_p = logits.log_softmax(dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (-log_p[targets != pad].mean()).exp()
""",
    ],
    "min_p_mask": [
        # the temperature ignored
        """
def min_p_mask(logits, p_min, temperature):
    gap = logits - logits.amax(dim=-1, keepdim=True)
    return gap >= math.log(p_min)
""",
        # multiplied by the temperature instead of divided
        """
def min_p_mask(logits, p_min, temperature):
    z = logits * temperature
    return z - z.amax(dim=-1, keepdim=True) >= math.log(p_min)
""",
        # probabilities compared: a float32 probability of exp(-125) is 0, below p_min times the top
        """
def min_p_mask(logits, p_min, temperature):
    probs = (logits / temperature).softmax(dim=-1)
    return probs >= p_min * probs.amax(dim=-1, keepdim=True)
""",
        # one top token for the whole batch
        """
def min_p_mask(logits, p_min, temperature):
    z = logits / temperature
    return z - z.max() >= math.log(p_min)
""",
        # strictly above the cut: at p_min = 1 even the top token goes
        """
def min_p_mask(logits, p_min, temperature):
    z = logits / temperature
    return z - z.amax(dim=-1, keepdim=True) > math.log(p_min)
""",
        # the probability compared with p_min itself, not with p_min times the top one
        """
def min_p_mask(logits, p_min, temperature):
    return (logits / temperature).log_softmax(dim=-1) >= math.log(p_min)
""",
    ],
    "kv_cache_numbers": [
        # keys only
        """
def kv_cache_numbers(N, T, layers, E):
    return N * T * layers * E
""",
        # the batch forgotten
        """
def kv_cache_numbers(N, T, layers, E):
    return 2 * T * layers * E
""",
        # one block only
        """
def kv_cache_numbers(N, T, layers, E):
    return 2 * N * T * E
""",
        # a float
        """
def kv_cache_numbers(N, T, layers, E):
    return 2.0 * N * T * layers * E
""",
    ],
    "per_character_perplexity": [
        # divided instead of the root
        """
def per_character_perplexity(ppl, chars_per_token):
    return ppl / chars_per_token
""",
        # the power instead of the root
        """
def per_character_perplexity(ppl, chars_per_token):
    return float(ppl ** chars_per_token)
""",
        # the loss per character, not the perplexity
        """
def per_character_perplexity(ppl, chars_per_token):
    return math.log(ppl) / chars_per_token
""",
    ],
    # a word instead of a letter (fails the public format check), and the three wrong letters
    "hot_sampling": [
        'hot_sampling = "uniform"\n',
        'hot_sampling = "a"\n',
        'hot_sampling = "c"\n',
        'hot_sampling = "d"\n',
    ],
    "wordpiece_pair": [
        # BPE's choice: the most frequent pair
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    return min(pairs, key=lambda p: (-pairs[p], p))
""",
        # each word counted once, whatever its count
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + 1
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + 1
    return min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] * singles[p[1]]), -pairs[p], p))
""",
        # a tie of scores broken by the tuples, not by the counts first
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    return min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] * singles[p[1]]), p))
""",
        # a pair counted once per word, however often it occurs in it
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in set(zip(word, word[1:])):
            pairs[pair] = pairs.get(pair, 0) + n
    return min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] * singles[p[1]]), -pairs[p], p))
""",
        # words of one token left out of the token counts
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        if len(word) < 2:
            continue
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    return min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] * singles[p[1]]), -pairs[p], p))
""",
        # the tokens' counts added, not multiplied
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    return min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] + singles[p[1]]), -pairs[p], p))
""",
    ],
    "fewest_tokens": [
        # the longest token that fits, from the left (greedy)
        """
def fewest_tokens(word, vocab):
    tokens, i = [], 0
    while i < len(word):
        j = max(j for j in range(i + 1, len(word) + 1) if word[i:j] in vocab)
        tokens.append(word[i:j])
        i = j
    return tokens
""",
        # a tie kept by the shortest first token
        """
def fewest_tokens(word, vocab):
    n = len(word)
    best = [None] * n + [[]]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n + 1):
            if word[i:j] in vocab and (best[i] is None or len(best[j]) + 1 < len(best[i])):
                best[i] = [word[i:j], *best[j]]
    return list(best[0])
""",
        # the best split of each prefix, a tie kept by the longest last token
        """
def fewest_tokens(word, vocab):
    best = [[]] + [None] * len(word)
    for j in range(1, len(word) + 1):
        for i in range(j):
            if word[i:j] in vocab and (best[j] is None or len(best[i]) + 1 < len(best[j])):
                best[j] = [*best[i], word[i:j]]
    return best[-1]
""",
        # a tuple, not a list
        """
def fewest_tokens(word, vocab):
    n = len(word)
    best = [None] * n + [[]]
    for i in range(n - 1, -1, -1):
        for j in range(n, i, -1):
            if word[i:j] in vocab and (best[i] is None or len(best[j]) + 1 < len(best[i])):
                best[i] = [word[i:j], *best[j]]
    return tuple(best[0])
""",
    ],
}

DELEGATING = {
    "padded_perplexity": """
def padded_perplexity(logits, targets, pad):
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=pad)
    return math.exp(loss.item())
""",
    "wordpiece_pair": """
from seqlab.bpe import count_pairs
def wordpiece_pair(table):
    from fractions import Fraction
    pairs = count_pairs(table)
    singles = {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + n
    return min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] * singles[p[1]]), -pairs[p], p))
""",
}

# Plausible wrong answers of the kinds that got past the earlier tests (inputs changed in place,
# .squeeze() at size 1, the named edge cases, ties, types, a "how" the question states), written
# before the tests were strengthened: every one must fail a test case, and a public one unless it
# only delegates (tests/test_exercises.py).
WRONG_NEW = {
    "padded_perplexity": [
        # the padding set to token 0 in the caller's targets, so that gather accepts pad = -100
        """
def padded_perplexity(logits, targets, pad):
    real = targets != pad
    targets[~real] = 0
    nll = -logits.log_softmax(dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return math.exp(nll[real].mean().item())
""",
        # .squeeze(): the (N, T) losses lose a dimension when N = 1 or T = 1
        """
def padded_perplexity(logits, targets, pad):
    log_p = logits.log_softmax(dim=-1)
    nll = -log_p.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze()
    real = targets != pad
    return math.exp(nll[real].mean().item())
""",
        # the padding taken to be the ids below 1 (pad = 0 or negative), not the id pad
        """
def padded_perplexity(logits, targets, pad):
    real = targets > 0
    nll = -logits.log_softmax(dim=-1).gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return math.exp(nll[real].mean().item())
""",
        # the mean over the real targets of each row, weighted by the row's length, divided by N
        """
def padded_perplexity(logits, targets, pad):
    real = targets != pad
    nll = -logits.log_softmax(dim=-1).gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    per_row = (nll * real).sum(1) / real.sum(1).clamp_min(1)
    return math.exp((per_row * real.sum(1)).sum().item() / real.numel())
""",
        # the exponential taken in float32: a perplexity of 1.9e130 is inf there
        """
def padded_perplexity(logits, targets, pad):
    nll = -logits.log_softmax(dim=-1).gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return nll[targets != pad].mean().exp().item()
""",
    ],
    "min_p_mask": [
        # the caller's logits divided by the temperature in place
        """
def min_p_mask(logits, p_min, temperature):
    z = logits.div_(temperature)
    return z - z.amax(dim=-1, keepdim=True) >= math.log(p_min)
""",
        # the log of a softmax: -inf where a float32 probability underflows
        """
def min_p_mask(logits, p_min, temperature):
    log_p = (logits / temperature).softmax(dim=-1).log()
    return log_p - log_p.amax(dim=-1, keepdim=True) >= math.log(p_min)
""",
        # p_min compared with a difference of logits, not its logarithm
        """
def min_p_mask(logits, p_min, temperature):
    z = logits / temperature
    return z - z.amax(dim=-1, keepdim=True) >= p_min
""",
    ],
    "kv_cache_numbers": [
        # the cache counted in bytes of float32, not in numbers
        """
def kv_cache_numbers(N, T, layers, E):
    return 4 * 2 * N * T * layers * E
""",
        # one token too many: the cache also holds the token being predicted
        """
def kv_cache_numbers(N, T, layers, E):
    return 2 * N * (T + 1) * layers * E
""",
        # numpy's product: a numpy integer, not an int
        """
def kv_cache_numbers(N, T, layers, E):
    import numpy as np
    return np.prod([2, N, T, layers, E])
""",
    ],
    "per_character_perplexity": [
        # the characters per token rounded to a whole number
        """
def per_character_perplexity(ppl, chars_per_token):
    return float(ppl ** (1 / round(chars_per_token)))
""",
        # a tensor, not a float
        """
def per_character_perplexity(ppl, chars_per_token):
    return torch.tensor(ppl, dtype=torch.float64) ** (1 / chars_per_token)
""",
        # under one character a token (bytes of a multi-byte character) taken as one
        """
def per_character_perplexity(ppl, chars_per_token):
    return float(ppl ** (1 / max(chars_per_token, 1.0)))
""",
    ],
    "wordpiece_pair": [
        # the caller's table emptied while it is read
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word in list(table):
        n = table.pop(word)
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    return min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] * singles[p[1]]), -pairs[p], p))
""",
        # the largest pair on a full tie (max over the whole key)
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    return max(pairs, key=lambda p: (Fraction(pairs[p], singles[p[0]] * singles[p[1]]), pairs[p], p))
""",
        # the merged token, not the pair
        """
def wordpiece_pair(table):
    from fractions import Fraction
    singles, pairs = {}, {}
    for word, n in table.items():
        for token in word:
            singles[token] = singles.get(token, 0) + n
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    best = min(pairs, key=lambda p: (-Fraction(pairs[p], singles[p[0]] * singles[p[1]]), -pairs[p], p))
    return best[0] + best[1]
""",
    ],
    "fewest_tokens": [
        # the longest token that fits, from the right
        """
def fewest_tokens(word, vocab):
    tokens, j = [], len(word)
    while j > 0:
        i = min(i for i in range(j) if word[i:j] in vocab)
        tokens.insert(0, word[i:j])
        j = i
    return tokens
""",
        # the empty word split into one empty token
        """
def fewest_tokens(word, vocab):
    if not word:
        return [""]
    n = len(word)
    best = [None] * n + [[]]
    for i in range(n - 1, -1, -1):
        for j in range(n, i, -1):
            if word[i:j] in vocab and (best[i] is None or len(best[j]) + 1 < len(best[i])):
                best[i] = [word[i:j], *best[j]]
    return best[0]
""",
    ],
}

# Wrong answers only the hidden test can tell: the public cases, read from the package that
# declares them (a student can), and a guess elsewhere.
WRONG_HIDDEN = {
    "kv_cache_numbers": [
        """
from seqlab.exercises.questions.language_models import KV_KNOWN
def kv_cache_numbers(N, T, layers, E):
    return KV_KNOWN.get((N, T, layers, E), 2 * N * T * E)
""",
    ],
    "per_character_perplexity": [
        """
from seqlab.exercises.questions.language_models import PER_CHAR_KNOWN
def per_character_perplexity(ppl, chars_per_token):
    return float(PER_CHAR_KNOWN.get((ppl, chars_per_token), ppl / chars_per_token))
""",
    ],
    "wordpiece_pair": [
        # the public tables answered, BPE's choice elsewhere
        """
from seqlab.exercises.questions.language_models import WORDPIECE_KNOWN
def wordpiece_pair(table):
    for known, pair in WORDPIECE_KNOWN.values():
        if known == table:
            return pair
    pairs = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + n
    return min(pairs, key=lambda p: (-pairs[p], p))
""",
    ],
    "fewest_tokens": [
        # every split tried, but only up to 12 characters: a longer word comes back in characters
        """
def fewest_tokens(word, vocab):
    if len(word) > 12:
        return list(word)
    def splits(w):
        if not w:
            yield []
            return
        for j in range(1, len(w) + 1):
            if w[:j] in vocab:
                for rest in splits(w[j:]):
                    yield [w[:j], *rest]
    return min(splits(word), key=lambda s: (len(s), [-len(t) for t in s]))
""",
    ],
}

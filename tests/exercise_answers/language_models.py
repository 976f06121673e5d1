"""Answers for the graded exercises of the language-model chapter, used by tests/test_exercises.py.

WRONG: plausible wrong answers per question; every test case must reject at least one, and every
wrong answer fails a public test case.
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
    "top_p_mask": [
        # ties at the boundary cut by the sort order
        """
def top_p_mask(logits, p, temperature):
    probs = (logits / temperature).softmax(dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True)
    keep_sorted = (sorted_p.cumsum(-1) - sorted_p) < p
    return torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, keep_sorted)
""",
        # temperature ignored
        """
def top_p_mask(logits, p, temperature):
    probs = logits.softmax(dim=-1)
    sorted_p = probs.sort(dim=-1, descending=True).values
    before = sorted_p.cumsum(dim=-1) - sorted_p
    needed = torch.where(before < p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.amin(dim=-1, keepdim=True)
""",
        # the tokens whose cumulative mass stays below p (one token too few)
        """
def top_p_mask(logits, p, temperature):
    probs = (logits / temperature).softmax(dim=-1)
    sorted_p = probs.sort(dim=-1, descending=True).values
    needed = torch.where(sorted_p.cumsum(-1) <= p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.amin(dim=-1, keepdim=True)
""",
        # multiplied by the temperature instead of divided
        """
def top_p_mask(logits, p, temperature):
    probs = (logits * temperature).softmax(dim=-1)
    sorted_p = probs.sort(dim=-1, descending=True).values
    before = sorted_p.cumsum(dim=-1) - sorted_p
    needed = torch.where(before < p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.amin(dim=-1, keepdim=True)
""",
        # one threshold for the whole batch
        """
def top_p_mask(logits, p, temperature):
    probs = (logits / temperature).softmax(dim=-1)
    sorted_p = probs.sort(dim=-1, descending=True).values
    before = sorted_p.cumsum(dim=-1) - sorted_p
    needed = torch.where(before < p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.min()
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
    "merge_step": [
        # ties broken by the strings' alphabetical order, not the vocabulary's
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + n
    best = min(counts, key=lambda p: (-counts[p], p))
    new = {}
    for word, n in table.items():
        out, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                out.append(best[0] + best[1])
                i += 2
            else:
                out.append(word[i])
                i += 1
        new[tuple(out)] = n
    return best, new
""",
        # ties broken by the second token first
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + n
    rank = {t: i for i, t in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[1]], rank[p[0]]))
    new = {}
    for word, n in table.items():
        out, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                out.append(best[0] + best[1])
                i += 2
            else:
                out.append(word[i])
                i += 1
        new[tuple(out)] = n
    return best, new
""",
        # each word counted once, whatever its count
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    rank = {t: i for i, t in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
    new = {}
    for word, n in table.items():
        out, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                out.append(best[0] + best[1])
                i += 2
            else:
                out.append(word[i])
                i += 1
        new[tuple(out)] = n
    return best, new
""",
        # a pair counted once per word, however often it occurs in it
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in set(zip(word, word[1:])):
            counts[pair] = counts.get(pair, 0) + n
    rank = {t: i for i, t in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
    new = {}
    for word, n in table.items():
        out, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                out.append(best[0] + best[1])
                i += 2
            else:
                out.append(word[i])
                i += 1
        new[tuple(out)] = n
    return best, new
""",
        # the merge done on the joined string: it matches across token boundaries ("a|b c")
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + n
    rank = {t: i for i, t in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
    new = {}
    for word, n in table.items():
        joined = " ".join(word).replace(best[0] + " " + best[1], best[0] + best[1])
        new[tuple(joined.split(" "))] = n
    return best, new
""",
        # the table merged in place (the caller's table changes)
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + n
    rank = {t: i for i, t in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
    for word in list(table):
        out, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                out.append(best[0] + best[1])
                i += 2
            else:
                out.append(word[i])
                i += 1
        table[tuple(out)] = table.pop(word)
    return best, table
""",
    ],
    "encode_word": [
        # the longest token that fits, from the left (as text.Vocab's pieces)
        """
def encode_word(word, merges):
    vocab = set(word) | {a + b for a, b in merges}
    tokens, i = [], 0
    while i < len(word):
        j = max(j for j in range(i + 1, len(word) + 1) if word[i:j] in vocab or j == i + 1)
        tokens.append(word[i:j])
        i = j
    return tokens
""",
        # the leftmost pair that was ever merged, not the earliest learned
        """
def encode_word(word, merges):
    known = set(merges)
    tokens = list(word)
    while True:
        for i in range(len(tokens) - 1):
            if (tokens[i], tokens[i + 1]) in known:
                tokens[i : i + 2] = [tokens[i] + tokens[i + 1]]
                break
        else:
            return tokens
""",
        # the latest learned merge first
        """
def encode_word(word, merges):
    rank = {pair: i for i, pair in enumerate(merges)}
    tokens = list(word)
    while len(tokens) > 1:
        pairs = [p for p in zip(tokens, tokens[1:]) if p in rank]
        if not pairs:
            break
        pair = max(pairs, key=rank.get)
        merged, i = [], 0
        while i < len(tokens):
            if tuple(tokens[i : i + 2]) == pair:
                merged.append(pair[0] + pair[1])
                i += 2
            else:
                merged.append(tokens[i])
                i += 1
        tokens = merged
    return tokens
""",
        # each merge applied once, to its first occurrence only
        """
def encode_word(word, merges):
    tokens = list(word)
    for a, b in merges:
        for i in range(len(tokens) - 1):
            if (tokens[i], tokens[i + 1]) == (a, b):
                tokens[i : i + 2] = [a + b]
                break
    return tokens
""",
        # occurrences merged right to left
        """
def encode_word(word, merges):
    tokens = list(word)
    for a, b in merges:
        i = len(tokens) - 2
        while i >= 0:
            if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == (a, b):
                tokens[i : i + 2] = [a + b]
                i -= 2
            else:
                i -= 1
    return tokens
""",
        # the tokens joined back into a string
        """
def encode_word(word, merges):
    tokens = list(word)
    for a, b in merges:
        i = 0
        while i < len(tokens) - 1:
            if (tokens[i], tokens[i + 1]) == (a, b):
                tokens[i : i + 2] = [a + b]
            i += 1
    return " ".join(tokens)
""",
    ],
}

DELEGATING = {
    "padded_perplexity": """
def padded_perplexity(logits, targets, pad):
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=pad)
    return math.exp(loss.item())
""",
    "top_p_mask": """
from seqlab.sampling import filter_logits
def top_p_mask(logits, p, temperature):
    return filter_logits(logits, temperature=temperature, top_p=p).isfinite()
""",
    "merge_step": """
from seqlab.bpe import count_pairs, merge_pair
def merge_step(table, order):
    counts = count_pairs(table)
    rank = {t: i for i, t in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
    return best, {merge_pair(word, best, best[0] + best[1]): n for word, n in table.items()}
""",
    "encode_word": """
from seqlab.bpe import merge_pair
def encode_word(word, merges):
    rank = {pair: i for i, pair in enumerate(merges)}
    tokens = tuple(word)
    while True:
        found = [pair for pair in zip(tokens, tokens[1:]) if pair in rank]
        if not found:
            return list(tokens)
        pair = min(found, key=rank.get)
        tokens = merge_pair(tokens, pair, pair[0] + pair[1])
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
    ],
    "top_p_mask": [
        # a token is needed while the mass before it is at most p: one token too many when the
        # tokens above it add up to exactly p
        """
def top_p_mask(logits, p, temperature):
    probs = (logits / temperature).softmax(dim=-1)
    sorted_p = probs.sort(dim=-1, descending=True).values
    before = sorted_p.cumsum(dim=-1) - sorted_p
    needed = torch.where(before <= p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.amin(dim=-1, keepdim=True)
""",
        # the caller's logits divided by the temperature in place
        """
def top_p_mask(logits, p, temperature):
    probs = logits.div_(temperature).softmax(dim=-1)
    sorted_p = probs.sort(dim=-1, descending=True).values
    before = sorted_p.cumsum(dim=-1) - sorted_p
    needed = torch.where(before < p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.amin(dim=-1, keepdim=True)
""",
        # the temperature applied to the probabilities, not renormalised
        """
def top_p_mask(logits, p, temperature):
    probs = logits.softmax(dim=-1) ** (1 / temperature)
    sorted_p = probs.sort(dim=-1, descending=True).values
    before = sorted_p.cumsum(dim=-1) - sorted_p
    needed = torch.where(before < p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.amin(dim=-1, keepdim=True)
""",
        # p = 1 left to the rounding of the cumulative sum: a token of tiny probability, after
        # tokens whose probabilities add up to 1.0 in floating point, is dropped
        """
def top_p_mask(logits, p, temperature):
    probs = (logits / temperature).softmax(dim=-1)
    sorted_p = probs.sort(dim=-1, descending=True).values
    before = sorted_p.cumsum(dim=-1) - sorted_p
    needed = torch.where(before < p, sorted_p, torch.ones_like(sorted_p))
    return probs >= needed.amin(dim=-1, keepdim=True)
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
    "merge_step": [
        # the merged token appended to the caller's vocabulary order
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + n
    rank = {token: i for i, token in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
    order.append(best[0] + best[1])
    new_table = {}
    for word, n in table.items():
        merged, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                merged.append(best[0] + best[1])
                i += 2
            else:
                merged.append(word[i])
                i += 1
        new_table[tuple(merged)] = n
    return best, new_table
""",
        # a tie broken by the first token only (then by the table's order)
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + n
    rank = {token: i for i, token in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]]))
    new_table = {}
    for word, n in table.items():
        merged, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                merged.append(best[0] + best[1])
                i += 2
            else:
                merged.append(word[i])
                i += 1
        new_table[tuple(merged)] = n
    return best, new_table
""",
        # words of one token (no pair left) dropped from the new table
        """
def merge_step(table, order):
    counts = {}
    for word, n in table.items():
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + n
    rank = {token: i for i, token in enumerate(order)}
    best = min(counts, key=lambda p: (-counts[p], rank[p[0]], rank[p[1]]))
    new_table = {}
    for word, n in table.items():
        if len(word) < 2:
            continue
        merged, i = [], 0
        while i < len(word):
            if word[i : i + 2] == best:
                merged.append(best[0] + best[1])
                i += 2
            else:
                merged.append(word[i])
                i += 1
        new_table[tuple(merged)] = n
    return best, new_table
""",
    ],
    "encode_word": [
        # every merge once, in the order learned: right for merges that training made, not for
        # a list where a pair is listed before the pair that makes one of its tokens
        """
def encode_word(word, merges):
    tokens = list(word)
    for a, b in merges:
        out, i = [], 0
        while i < len(tokens):
            if tokens[i : i + 2] == [a, b]:
                out.append(a + b)
                i += 2
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
    return tokens
""",
        # the merges done on the text with spaces between tokens: a merge can match across a
        # token boundary ("a b" inside "ca b")
        """
def encode_word(word, merges):
    text = " ".join(word)
    changed = True
    while changed:
        changed = False
        present = [m for m in merges if f" {m[0]} {m[1]} " in f" {text} "]
        if present:
            a, b = present[0]
            text = text.replace(f"{a} {b}", a + b)
            changed = True
    return text.split(" ") if text else []
""",
        # a word of one character returned as the string itself
        """
def encode_word(word, merges):
    if len(word) < 2:
        return word if word else []
    order = {merge: n for n, merge in enumerate(merges)}
    parts = list(word)
    while True:
        adjacent = [(order[p], p) for p in zip(parts, parts[1:]) if p in order]
        if not adjacent:
            return parts
        _, (left, right) = min(adjacent)
        out, j = [], 0
        while j < len(parts):
            if parts[j : j + 2] == [left, right]:
                out.append(left + right)
                j += 2
            else:
                out.append(parts[j])
                j += 1
        parts = out
""",
    ],
}

"""The hidden tests' own cases of the chapter language_models (only in the autograder zip)."""

import functools
import math
import random

import torch

from seqlab.exercises.questions import language_models as public

# ---------------------------------------------------------------------------------------------
# min_p_mask


def min_p_reference(logits, p_min, temperature):
    """Min-p in log space, float64: log p_i - log p_max = (z_i - z_max) / temperature."""
    z = logits.double() / temperature
    return z - z.max(dim=-1, keepdim=True).values >= math.log(p_min)


def min_p_random(d):
    """Random logits (whole numbers with ties in odd draws) and a p_min whose cut lies at least
    1e-3 from every token's log ratio, so that float32 rounding cannot move a token across it."""
    N, V = d.sizes(2)
    if d.index % 2:
        logits = torch.randint(-3, 4, (N, V), generator=d.generator).to(d.dtype)
    else:
        logits = d.randn(N, V, scale=3.0)
    tau = d.uniform(0.3, 3.0)
    gaps = logits.double() / tau
    gaps = gaps - gaps.max(dim=-1, keepdim=True).values
    p_min = 1.0 if d.index % 7 == 6 else math.exp(d.uniform(math.log(1e-6), math.log(0.9)))
    while p_min < 1.0 and (gaps - math.log(p_min)).abs().min() < 1e-3:
        p_min *= math.exp(0.01)
    return logits, min(p_min, 1.0), tau


# ---------------------------------------------------------------------------------------------
# wordpiece_pair


def wordpiece_reference(table):
    """The pair of highest count(ab) / (count(a) count(b)), compared by cross-multiplying integers;
    then the more frequent pair; then the smaller tuple of strings."""
    singles: dict = {}
    pairs: dict = {}
    for symbols, count in table.items():
        for t in symbols:
            singles[t] = singles.get(t, 0) + count
        for a, b in zip(symbols, symbols[1:]):
            pairs[a, b] = pairs.get((a, b), 0) + count
    best = None
    for pair in sorted(pairs):
        if best is None:
            best = pair
            continue
        mine = pairs[pair] * singles[best[0]] * singles[best[1]]
        theirs = pairs[best] * singles[pair[0]] * singles[pair[1]]
        if mine > theirs or (mine == theirs and pairs[pair] > pairs[best]):
            best = pair
    return best


def _merged(table, pair):
    out = {}
    for symbols, count in table.items():
        tokens, at = [], 0
        while at < len(symbols):
            if tuple(symbols[at : at + 2]) == pair:
                tokens.append(pair[0] + pair[1])
                at += 2
            else:
                tokens.append(symbols[at])
                at += 1
        out[tuple(tokens)] = count
    return out


def wordpiece_random(d):
    """A random table of words over 'abcd' (counts 1 to 5), after 0, 1 or 2 WordPiece merges."""
    rng = random.Random(d.index)
    words = {"".join(rng.choice("abcd") for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(2, 7))}
    table = {tuple(w): rng.randint(1, 5) for w in words}
    if all(len(w) < 2 for w in table):
        table[("a", "b")] = 1
    for _ in range(d.index % 3):
        merged = _merged(table, wordpiece_reference(table))
        if any(len(w) > 1 for w in merged):
            table = merged
    return (table,)


# ---------------------------------------------------------------------------------------------
# fewest_tokens


def fewest_reference(word, vocab):
    """The best split of each suffix, memoised: the fewest tokens, then the longest first token,
    then the longest second ... (the key (length, [-len(t) for t in tokens]) compared as a whole)."""

    @functools.cache
    def best(i):
        if i == len(word):
            return ()
        options = [(word[i:j],) + best(j) for j in range(i + 1, len(word) + 1) if word[i:j] in vocab]
        return min(options, key=lambda tokens: (len(tokens), [-len(t) for t in tokens]))

    return list(best(0))


def fewest_random(d):
    """A word over 'abc' (0 to 14 characters) and a vocabulary: the characters and pieces of it
    and of other words, of 2 to 5 characters."""
    rng = random.Random(d.index)
    word = "".join(rng.choice("abc") for _ in range(rng.randint(0, 14)))
    texts = [word] + ["".join(rng.choice("abc") for _ in range(10)) for _ in range(3)]
    vocab = set("abc")
    for _ in range(rng.randint(0, 12)):
        text = rng.choice(texts)
        if len(text) >= 2:
            start = rng.randrange(len(text) - 1)
            vocab.add(text[start : start + rng.randint(2, 5)])
    return word, frozenset(vocab)


HIDDEN = {
    "padded_perplexity": {
        "hidden_edges": {
            "one real target (N = T = 1)": lambda: (
                torch.tensor([[[0.5, -2.0, 1.0, 3.0]]]),
                torch.tensor([[2]]),
                -1,
            ),
            "pad = V - 1 and no padding at all": lambda: (
                torch.linspace(-3.0, 3.0, 30, dtype=torch.float64).reshape(2, 3, 5),
                torch.tensor([[0, 1, 2], [3, 2, 1]]),
                4,
            ),
        }
    },
    "min_p_mask": {
        "oracle": min_p_reference,
        "draw": min_p_random,
        "edges": {},
        "hidden_edges": {
            "one token (V = 1)": lambda: (torch.tensor([[3.0], [-1.0]]), 0.5, 2.0),
            "float64 logits 300 apart, p_min = 1e-60": lambda: (
                torch.tensor([[0.0, -130.0, -140.0, -300.0]], dtype=torch.float64),
                1e-60,
                1.0,
            ),
            "logits near -1e4 (float32)": lambda: (torch.tensor([[-1e4, -1e4 - 1.0, -2e4, -1e4]]), 0.5, 1.0),
            "temperature 0.05": lambda: (torch.tensor([[1.0, 0.9, 0.8, -1.0]]), 0.1, 0.05),
        },
    },
    "kv_cache_numbers": {
        "oracle": lambda N, T, layers, E: 2 * N * T * layers * E,
        "draw": lambda d: (d.integer(1, 9), d.integer(1, 300), d.integer(1, 13), d.integer(1, 999)),
        "draws": (0, 30),
    },
    "per_character_perplexity": {
        "oracle": lambda ppl, chars_per_token: math.exp(math.log(ppl) / chars_per_token),
        "draw": lambda d: (d.uniform(1.0, 500.0), d.uniform(0.3, 6.0)),
        "draws": (0, 30),
        "extra": public.per_char_floats([(9, 2), (16.0, 2.0), (1, 3), (27, 3.0)]),
    },
    "hot_sampling": {"judge": None, "draw": lambda d: ((), "b")},
    "wordpiece_pair": {
        "oracle": wordpiece_reference,
        "draw": wordpiece_random,
        "edges": {},
        "draws": (0, 30),
        "hidden_edges": {
            "a word of one token": lambda: ({("abc",): 4, ("a", "b"): 1, ("c",): 2, ("b", "c"): 1},),
            "one pair in the whole table": lambda: ({("q", "r"): 3, ("s",): 1},),
        },
    },
    "fewest_tokens": {
        "oracle": fewest_reference,
        "draw": fewest_random,
        "edges": {},
        "draws": (0, 30),
        "hidden_edges": {
            "20 characters": lambda: (
                "abcabcabcabcabcabcab",
                frozenset({"a", "b", "c", "ab", "bca", "cab", "abcab"}),
            ),
            "single characters only": lambda: ("cabbage", frozenset("cabge")),
        },
    },
}

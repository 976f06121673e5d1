"""The graded questions of the chapter language_models (chapters/language_models.ipynb).

Questions 2, 6 and 7 ask for what the page does not show (min-p sampling, WordPiece's merge
criterion, the fewest tokens a vocabulary allows): their public cases carry their results, worked
out by hand or built from the result they must give, so that no oracle here spells the answer."""

import copy
import math

import torch

from seqlab.exercises import check_choice
from seqlab.exercises.harness import Question

# ---------------------------------------------------------------------------------------------
# Question 1: perplexity with padding

PERPLEXITY_RTOL = 1e-4  # the relative tolerance the question's text states


def perplexity_oracle(logits, targets, pad):
    """exp of PyTorch's cross-entropy over the targets that are not pad, in float64."""
    loss = torch.nn.functional.cross_entropy(
        logits.double().flatten(0, 1), targets.flatten(), ignore_index=pad
    )
    return math.exp(loss.item())


def perplexity_draw(d):
    N, T, V = d.sizes(3)  # distinct; each is 1 in one draw
    logits = d.randn(N, T, V, scale=3.0)
    targets = torch.randint(0, V, (N, T), generator=d.generator)
    pad = (d.integer(0, V - 1), -100, -1)[d.index % 3] if V > 1 else -100
    targets[d.rand(N, T) < 0.4] = pad
    targets[d.integer(0, N - 1), 0] = (pad + 1) % V  # at least one real target
    return logits, targets, pad


def _real(targets, pad):
    return targets[targets != pad]


PERPLEXITY = Question(
    "padded_perplexity",
    oracle=perplexity_oracle,
    draw=perplexity_draw,
    edges={
        "rows of 5, 3 and 1 real targets, pad = 0": lambda: (
            torch.linspace(-2.0, 2.0, 105).reshape(3, 5, 7),
            torch.tensor([[1, 2, 3, 4, 5], [6, 0, 2, 0, 0], [3, 0, 0, 0, 0]]),
            0,
        ),
        "pad = -100": lambda: (
            torch.linspace(-1.0, 3.0, 24, dtype=torch.float64).reshape(2, 3, 4),
            torch.tensor([[2, -100, 1], [-100, -100, 0]]),
            -100,
        ),
        # the log of a softmax is -inf here, and the perplexity (about 1.9e130) overflows float32
        "logits 150 apart": lambda: (
            150 * torch.tensor([[[1.0, -1.0, 0.5], [0.0, 1.0, -1.0]]]),
            torch.tensor([[1, 2]]),
            0,
        ),
    },
    forbidden=(
        "torch.nn.functional.cross_entropy",
        "torch.nn.functional.nll_loss",
        "torch.nn.CrossEntropyLoss",
        "torch.nn.NLLLoss",
        "seqlab.gpt.lm_loss",
        # the operators those run, whatever the route (torch.ops.aten.nll_loss, torch._C._nn ...)
        "aten.nll_loss_forward",
        "aten.nll_loss2d_forward",
    ),
    tolerance=PERPLEXITY_RTOL / 1e-9,  # the harness compares floats to 1e-9 relative, times this
    bounds={
        # the text: real targets are token ids in [0, V); pad is such an id or negative; one is real
        "the real targets": (0, None, lambda logits, targets, pad: _real(targets, pad)),
        "V - 1 - the real targets": (
            0,
            None,
            lambda logits, targets, pad: logits.shape[-1] - 1 - _real(targets, pad),
        ),
        "the number of real targets": (1, None, lambda logits, targets, pad: int((targets != pad).sum())),
        "pad - (V - 1) where pad >= 0": (
            None,
            0,
            lambda logits, targets, pad: pad - (logits.shape[-1] - 1) * (pad >= 0),
        ),
    },  # fmt: skip
)

# ---------------------------------------------------------------------------------------------
# Question 2: min-p over a batch

P_MIN_LOW = 1e-60  # the smallest p_min the text promises


def positive(x):
    """a number > 0"""
    return not isinstance(x, bool) and isinstance(x, (int, float)) and x > 0


def min_p_draw(d):
    """Logits built from the mask they must give: ``((logits, p_min, temperature), mask)``. A kept
    token's (z - z_max) / temperature lies in [0.95 log p_min, 0], a dropped one's at least 0.035
    below log p_min: far from the cut in float32 too."""
    N, V = d.sizes(2)  # distinct; each is 1 in one draw
    temperature = d.uniform(0.3, 3.0)
    p_min = 1.0 if d.index % 5 == 4 else math.exp(d.uniform(math.log(1e-4), math.log(0.5)))
    floor = math.log(p_min)
    keep = d.rand(N, V, dtype=torch.float64) < 0.5
    top = torch.randint(0, V, (N,), generator=d.generator)
    keep[torch.arange(N), top] = True
    kept = 0.95 * floor * d.rand(N, V, dtype=torch.float64)
    if d.index % 2:  # ties with the top token
        kept[d.rand(N, V, dtype=torch.float64) < 0.4] = 0.0
    dropped = min(1.05 * floor, floor - 0.05) - 3.0 * d.rand(N, V, dtype=torch.float64)
    gap = torch.where(keep, kept, dropped)
    gap[torch.arange(N), top] = 0.0
    logits = d.randn(N, 1, dtype=torch.float64, scale=2.0) + temperature * gap
    return (logits.to(d.dtype), p_min, temperature), keep


MIN_P = Question(
    "min_p_mask",
    oracle=None,
    draw=min_p_draw,
    arg_names=("logits", "p_min", "temperature"),
    edges={
        "p_min = 1: the top token and its ties": lambda: (
            (torch.tensor([[1.0, 3.0, 3.0, 0.0]]), 1.0, 1.0),
            torch.tensor([[False, True, True, False]]),
        ),
        # exp(-125) = 5e-55 is at least 1e-60, but 0 as a float32 probability
        "logits 125 below the top (float32), p_min = 1e-60": lambda: (
            (torch.tensor([[0.0, -120.0, -150.0, 5.0]]), 1e-60, 1.0),
            torch.tensor([[True, True, False, True]]),
        ),
        "temperature 10": lambda: (
            (torch.tensor([[0.5, 0.3, 0.15, 0.05]]).log(), 0.8, 10.0),
            torch.tensor([[True, True, True, False]]),
        ),
        # "at least": log p - log p_max = log 0.5 = log p_min exactly here, so a strict > drops it
        "a token exactly at the cut, p_min = 0.5 (float64)": lambda: (
            (torch.tensor([[0.0, math.log(0.5), -1.0]], dtype=torch.float64), 0.5, 1.0),
            torch.tensor([[True, True, False]]),
        ),
        "a sure row and an unsure one (float64)": lambda: (
            (torch.tensor([[4.0, 0.0, 0.0, 0.0], [0.2, 0.1, 0.0, -0.1]], dtype=torch.float64), 0.1, 1.0),
            torch.tensor([[True, False, False, False], [True, True, True, True]]),
        ),
    },
    new_tensors=True,
    bounds={"p_min": (P_MIN_LOW, 1.0), "temperature": positive},
)

# ---------------------------------------------------------------------------------------------
# Question 3: the size of a KV cache

# (N, T, layers, E): the count, worked out by hand (none of them printed on the page)
KV_KNOWN = {
    (1, 2048, 24, 1024): 100_663_296,  # GPT-2 medium's width and depth, twice its context
    (3, 5, 2, 8): 480,
    (1, 1, 1, 1): 2,
    (2, 7, 3, 1): 84,
    (5, 1, 4, 6): 240,
}
KV_CACHE = Question(
    "kv_cache_numbers",
    oracle=None,
    draw=lambda d: list(KV_KNOWN.items())[d.index % len(KV_KNOWN)],
    arg_names=("N", "T", "layers", "E"),
    draws=(len(KV_KNOWN), len(KV_KNOWN)),
    bounds={"N": (1, None), "T": (1, None), "layers": (1, None), "E": (1, None)},
)

# ---------------------------------------------------------------------------------------------
# Question 4: perplexities of two tokenizers

# (ppl, chars_per_token): the perplexity per character, worked out by hand
PER_CHAR_KNOWN = {
    (16.0, 2.0): 4.0,
    (7.0, 1.0): 7.0,
    (9, 2): 3.0,
    (4.0, 0.5): 16.0,
    (100.0, 4.0): math.sqrt(10.0),
    (1.0, 2.5): 1.0,
    (8.0, 1.5): 4.0,
}


def per_char_floats(arguments):
    def extra(answer, public):
        for args in arguments:  # whole numbers in, a whole number out: still a float
            got = answer(*args)
            if type(got) is not float:
                raise AssertionError(
                    f"per_character_perplexity{args} gave a {type(got).__name__}: return a Python float"
                )

    return extra


PER_CHAR = Question(
    "per_character_perplexity",
    oracle=None,
    draw=lambda d: list(PER_CHAR_KNOWN.items())[d.index % len(PER_CHAR_KNOWN)],
    arg_names=("ppl", "chars_per_token"),
    draws=(len(PER_CHAR_KNOWN), len(PER_CHAR_KNOWN)),
    extra=per_char_floats([(9, 2), (16.0, 2.0)]),
    bounds={"ppl": (1, None), "chars_per_token": positive},
)

# ---------------------------------------------------------------------------------------------
# Question 5: a very high temperature (a letter)


def hot_sampling_format(value, args, where):
    """The public check: one of the letters, written as the letter itself (the hidden test
    grades which)."""
    letter = check_choice(value, "abcd", "hot_sampling")
    if value != letter:
        raise AssertionError(f"hot_sampling should be one lower-case letter of 'abcd' itself; got {value!r}")


# a value, not a function: the harness calls a function of no arguments that returns it
HOT_SAMPLING = Question(
    "hot_sampling", oracle=None, judge=hot_sampling_format, draw=lambda d: (), arg_names=(), draws=(1, 1)
)

# ---------------------------------------------------------------------------------------------
# Question 6: WordPiece's merge criterion


def table_unchanged(known):
    """``extra``: the answer leaves the caller's table (a dict) as it was, on each known case."""

    def extra(answer, public):
        for make in known.values():
            (table,), _ = make()
            before = copy.deepcopy(table)
            answer(table)
            if table != before:
                raise AssertionError("wordpiece_pair changed its argument table: leave it unchanged")

    return extra


# table: the pair, worked out by hand (counts c of tokens and pairs, each word as often as it occurs)
WORDPIECE_KNOWN = {
    # BPE merges ('e', 's') (9 times) or ('s', 't'); ('i', 'd') scores 3 / (3 * 3) = 1/3, the most
    "BPE's table of words": (
        {tuple("low"): 5, tuple("lower"): 2, tuple("newest"): 6, tuple("widest"): 3},
        ("i", "d"),
    ),
    # ('x', 'y'): 2 / (2 * 4) and ('a', 'b'): 1 / (2 * 2), both 1/4: the more frequent pair
    "a tie of scores": (
        {("a", "b"): 1, ("a",): 1, ("b",): 1, ("x", "y"): 2, ("y",): 2},
        ("x", "y"),
    ),
    # 1/2 each, once each: ('a', 'bz') < ('ab', 'a') as tuples of strings
    "a tie of scores and counts": ({("ab", "a"): 1, ("a", "bz"): 1}, ("a", "bz")),
    # ('a', 'a') 3 times in one word: 3 / (4 * 4); ('b', 'c'): 2 / (8 * 2), 'b' alone 6 times
    "a pair three times in one word": (
        {("b", "c"): 2, ("a", "a", "a", "a"): 1, ("b",): 6},
        ("a", "a"),
    ),
    # counted once per word, ('c', 'd') would score 1; counted as often as it occurs, 5 / 25
    "counts, not words": (
        {("a", "b"): 1, ("c", "d"): 5, ("a", "b", "x"): 1},
        ("a", "b"),
    ),
}


def a_table_with_a_pair(table):
    """a dict of words (tuples of non-empty strings) to positive int counts, with a pair of tokens"""
    return (
        isinstance(table, dict)
        and all(isinstance(w, tuple) and all(isinstance(t, str) and t for t in w) for w in table)
        and all(type(n) is int and n >= 1 for n in table.values())
        and any(len(w) > 1 for w in table)
    )


def _wordpiece_case(name):
    table, pair = WORDPIECE_KNOWN[name]
    return (copy.deepcopy(table),), pair


WORDPIECE = Question(
    "wordpiece_pair",
    oracle=None,
    draw=lambda d: (),
    edges={name: (lambda name=name: _wordpiece_case(name)) for name in WORDPIECE_KNOWN},
    arg_names=("table",),
    draws=(0, 0),
    forbidden=(
        "seqlab.bpe.count_pairs",
        "seqlab.bpe.best_pair",
        "seqlab.bpe.learn_merges",
        "seqlab.bpe.learn_merges_fast",
    ),
    extra=table_unchanged({name: (lambda name=name: _wordpiece_case(name)) for name in WORDPIECE_KNOWN}),
    bounds={"table": a_table_with_a_pair},
)

# ---------------------------------------------------------------------------------------------
# Question 7 (stretch): the fewest tokens

WORD_MAX = 20  # the longest word the text promises


def nonempty_strings(case):
    """a frozenset of non-empty strings"""
    return isinstance(case, frozenset) and all(isinstance(t, str) and t for t in case)


def _fewest_case(word, vocab, tokens):
    return (word, frozenset(vocab)), tokens


# (word, vocab): the tokens, worked out by hand
FEWEST_KNOWN = {
    # greedy longest first gives ab | c | d
    "not the longest token first": ("abcd", ["a", "b", "c", "d", "ab", "bcd"], ["a", "bcd"]),
    "the empty word": ("", ["a"], []),
    "one character": ("a", ["a", "b"], ["a"]),
    "no token longer than a character applies": ("xyz", ["x", "y", "z", "xx"], ["x", "y", "z"]),
    # ab | cd and abc | d are both two tokens: the first token longest
    "a tie: the longer first token": ("abcd", ["a", "b", "c", "d", "ab", "cd", "abc"], ["abc", "d"]),
    # a | bcd | ef, ab | cd | ef, abc | d | ef and abc | de | f: three tokens each; the first token
    # longest, then the second
    "a tie of four": (
        "abcdef",
        ["a", "b", "c", "d", "e", "f", "bcd", "ef", "abc", "de", "ab", "cd"],
        ["abc", "de", "f"],
    ),
    "a token repeated": ("abababa", ["a", "b", "ab", "aba"], ["aba", "b", "aba"]),
}


FEWEST = Question(
    "fewest_tokens",
    oracle=None,
    draw=lambda d: (),
    edges={name: (lambda c=case: _fewest_case(*c)) for name, case in FEWEST_KNOWN.items()},
    arg_names=("word", "vocab"),
    draws=(0, 0),
    bounds={
        "vocab": nonempty_strings,
        "the word's length": (0, WORD_MAX, lambda word, vocab: len(word)),
        "characters of the word not in vocab": (0, 0, lambda word, vocab: len(set(word) - vocab)),
    },
)

QUESTIONS = (PERPLEXITY, MIN_P, KV_CACHE, PER_CHAR, HOT_SAMPLING, WORDPIECE, FEWEST)

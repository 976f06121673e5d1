"""The graded questions of the chapter seq2seq (chapters/seq2seq.ipynb)."""

import copy
import math
import random
import types

import torch

from seqlab.decoding import CountingStep, beam_search
from seqlab.decoding import beam_search_batch as package_search
from seqlab.exercises import check_number
from seqlab.exercises.harness import Question

# the package's beam searches, by their public names and the ones they call
BEAM_SEARCHES = (
    "seqlab.decoding.beam_search",
    "seqlab.decoding.beam_search_batch",
    "seqlab.decoding._beam_search",
    "seqlab.decoding._beam_search_one",
)


def python_float(got, where):
    """An int, a bool or a tensor is refused: the questions ask for a Python float."""
    if isinstance(got, bool) or not isinstance(got, float):
        raise AssertionError(f"{where} should be a Python float, got {type(got).__name__}")


def beam_step_oracle(scores, log_probs, k):
    """Every extension (b, v) ranked one by one, best first, ties by b * V + v."""
    B, V = log_probs.shape
    pairs = [(b, v) for b in range(B) for v in range(V)]
    value = {(b, v): (scores[b] + log_probs[b, v]).item() for b, v in pairs}
    ranked = sorted(pairs, key=lambda bv: -value[bv])[:k]  # sorted is stable
    parent, token = torch.tensor(ranked, dtype=torch.long).reshape(k, 2).T
    return parent, token, torch.stack([scores[b] + log_probs[b, v] for b, v in ranked])


def beam_step_draw(d):
    B, V = d.sizes(2)  # distinct; each is 1 in one of the first draws
    scores = -(d.randn(B, scale=2.0) - 3.0).abs()  # log-probabilities: at most 0
    return scores, d.randn(B, V).log_softmax(-1), d.integer(1, B * V)


def uniform(B, V):
    """Every hypothesis and every token equally likely: all totals tie."""
    return torch.full((B,), -1.0), torch.full((B, V), -math.log(V))


BEAM_STEP = Question(
    "beam_step",
    oracle=beam_step_oracle,
    draw=beam_step_draw,
    edges={
        "ties everywhere (k > B)": lambda: (*uniform(3, 4), 5),
        "ties everywhere, B * V = 21": lambda: (*uniform(3, 7), 10),
        "k = B * V": lambda: (
            torch.tensor([-0.5, -2.0]),
            torch.tensor([[-0.3, -1.9, -2.2], [-1.2, -0.4, -2.9]]),
            6,
        ),
    },
    grad=(0, 1),
    forbidden=BEAM_SEARCHES,
    # log-probabilities (at most 0), "an int 1 <= k <= BV"
    bounds={
        "scores": (None, 0.0),
        "log_probs": (None, 0.0),
        "k": (1, None),
        "k - B * V": (None, 0, lambda scores, log_probs, k: k - log_probs.numel()),
    },
)


def normalised_judge(got, args, where):
    """A Python float, equal to the definition's value to nine significant digits."""
    log_prob, length, alpha = args
    python_float(got, where)
    check_number(got, log_prob / length**alpha, where, rel=1e-9, abs_tol=1e-12)


NORMALISED = Question(
    "normalised_score",
    oracle=None,
    judge=normalised_judge,
    draw=lambda d: (-d.uniform(0.0, 40.0), d.integer(1, 60), d.uniform(0.0, 1.5)),
    arg_names=("log_prob", "length", "alpha"),
    edges={"alpha = 0": lambda: (-7.25, 5, 0.0), "length 1": lambda: (-2.5, 1, 0.7)},
    # "a float log P <= 0, an int length >= 1 and a float alpha >= 0"
    bounds={"log_prob": (None, 0.0), "length": (1, None), "alpha": (0.0, None)},
)


def brevity_judge(got, args, where):
    """A Python float, equal to sacrebleu's brevity penalty to nine significant digits."""
    from sacrebleu.metrics import BLEU  # here: importing sacrebleu takes seconds

    c, r = args
    python_float(got, where)
    want = BLEU.compute_bleu([1] * 4, [1] * 4, sys_len=c, ref_len=r).bp
    check_number(got, want, where, rel=1e-9, abs_tol=1e-12)


BREVITY = Question(
    "brevity_penalty",
    oracle=None,
    judge=brevity_judge,
    draw=lambda d: (d.integer(1, 40), d.integer(1, 40)),
    arg_names=("c", "r"),
    edges={"c = r": lambda: (6, 6), "c > r": lambda: (10, 8), "c = 1": lambda: (1, 3)},
    bounds={"c": (1, None), "r": (1, None)},  # "ints c >= 1 and r >= 1"
)


def candidates_counted(k, T, V):
    """Run the package's beam search on a random model over V tokens that never ends a
    hypothesis (its EOS id is V, a token it never gives), counting the prefixes it scores."""
    generator = torch.Generator().manual_seed(k * 1000 + V)

    def model(tokens, state):
        return torch.randn(len(tokens), V, generator=generator).log_softmax(-1), state

    counter = CountingStep(model)
    beam_search(counter, None, k, T, bos=V, eos=V)
    return counter.rows * V  # each prefix is extended by every token


def candidates_draw(d):
    V = d.integer(1, 12)
    return d.integer(1, V), d.integer(1, 8), V


CANDIDATES = Question(
    "beam_candidates",
    oracle=candidates_counted,
    draw=candidates_draw,
    arg_names=("k", "T", "V"),
    edges={"T = 1": lambda: (3, 1, 7), "k = V": lambda: (4, 3, 4)},
    forbidden=(*BEAM_SEARCHES, "seqlab.decoding.CountingStep"),
    # "1 <= k <= V, T >= 1"
    bounds={"k": (1, None), "T": (1, None), "k - V": (None, 0, lambda k, T, V: k - V)},
)


def picks_oracle(finished):
    """For each alpha, the output that no other output beats on log p / |y| ** alpha."""

    def best(alpha):
        score = {y: log_p / length**alpha for y, (length, log_p) in finished.items()}
        return next(y for y in score if all(score[y] >= s for s in score.values()))

    return best(0.0), best(1.0)


def picks_draw(d):
    letters = "abcdefgh"[: d.integer(1, 8)]
    table = {y: (d.integer(1, 30), -d.uniform(0.1, 12.0)) for y in letters}
    return (types.MappingProxyType(table),)  # read-only: an answer may not change it


def read_only(table):
    return lambda: (types.MappingProxyType(table),)


def a_table_of_outputs(finished) -> bool:
    """a read-only table of one to eight outputs, each (an int length >= 1, a float log p <= 0),
    with no tie for the best at alpha = 0 or alpha = 1"""
    if not isinstance(finished, types.MappingProxyType) or not 1 <= len(finished) <= 8:
        return False
    for length, log_p in finished.values():
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            return False
        if not isinstance(log_p, float) or log_p > 0:
            return False
    for alpha in (0.0, 1.0):
        scores = [log_p / length**alpha for length, log_p in finished.values()]
        if scores.count(max(scores)) > 1:
            return False
    return True


PICKS = Question(
    "beam_picks",
    oracle=picks_oracle,
    draw=picks_draw,
    arg_names=("finished",),
    edges={
        "one output": read_only({"q": (7, -2.0)}),
        "another table than the page's": read_only(
            {"p": (4, -2.4), "q": (12, -3.0), "r": (9, -2.0), "s": (20, -4.4)}
        ),
    },
    bounds={"finished": a_table_of_outputs},
)


def bleu_judge(got, args, where):
    """A Python float, equal to sacrebleu's unsmoothed BLEU."""
    from sacrebleu.metrics import BLEU  # here: importing sacrebleu takes seconds

    hypothesis, reference = args
    python_float(got, where)
    want = (
        BLEU(tokenize="none", smooth_method="none")
        .corpus_score([" ".join(hypothesis)], [[" ".join(reference)]])
        .score
    )
    check_number(got, want, where, rel=1e-9, abs_tol=1e-9)


def bleu_draw(d):
    words = ["the", "cat", "The", "sat", "mat"][: d.integer(2, 5)]  # "The" is not "the"
    reference = [words[d.integer(0, len(words) - 1)] for _ in range(d.integer(1, 12))]
    hypothesis = [words[d.integer(0, len(words) - 1)] for _ in range(d.integer(1, 12))]
    if d.index % 2:  # a hypothesis that shares a run of the reference, so BLEU is not 0
        hypothesis = reference[: d.integer(1, len(reference))] + hypothesis[: d.integer(0, 3)]
    return hypothesis, reference


def pair(hypothesis, reference):
    return lambda: (hypothesis.split(), reference.split())


BLEU_Q = Question(
    "sentence_bleu",
    oracle=None,
    judge=bleu_judge,
    draw=bleu_draw,
    arg_names=("hypothesis", "reference"),
    edges={
        "the empty hypothesis": pair("", "the cat sat"),
        "fewer than 4 tokens": pair("a b c", "a b c"),
        "a repeated word (clipped)": pair("the the the cat sat on the mat", "the cat sat on the mat"),
        "shorter than the reference": pair("a b c d e f", "a b c d e f g h"),
        "capitals count": pair("The cat sat on the mat", "the cat sat on The mat"),
    },
    draws=(6, 40),
    forbidden=(
        "sacrebleu.BLEU",
        "sacrebleu.metrics.BLEU",
        "sacrebleu.metrics.bleu.BLEU",
        "sacrebleu.sentence_bleu",
        "sacrebleu.corpus_bleu",
        # sacrebleu's BLEU by any other way in (sacrebleu.compat's functions, a BLEU made before
        # the call): every one of them computes the score here
        "sacrebleu.metrics.bleu.BLEU.compute_bleu",
        "seqlab.metrics.corpus_bleu",
    ),
    # "the reference has at least one token, the hypothesis may be empty"
    bounds={"len(reference)": (1, None, lambda hypothesis, reference: len(reference))},
)


class ToyModel:
    """step(inputs, prefixes) -> (R, V) float32: a fixed random model of each input and prefix,
    its log-probabilities rounded to multiples of 2**-16, at least -16 (every sum is exact)."""

    def __init__(self, V, eos, seed, max_calls, eos_bias=0.0, flat=False):
        self.V, self.eos, self.seed, self.max_calls = V, eos, seed, max_calls
        self.eos_bias, self.flat, self.calls = eos_bias, flat, 0

    def __repr__(self):
        return f"<a model over V = {self.V} tokens>"

    def table(self, n, prefix):
        """log p(v | prefix) for input n, v = 0 .. V - 1."""
        if self.flat:  # every token as likely as every other
            return [-1.0] * self.V
        rng = random.Random(hash((self.seed, n, *prefix)))
        logits = [rng.gauss(0, 1.5) + self.eos_bias * (v == self.eos) for v in range(self.V)]
        top = max(logits)
        log_z = top + math.log(sum(math.exp(x - top) for x in logits))
        return [max(round((x - log_z) * 2**16) / 2**16, -16.0) for x in logits]

    def __call__(self, inputs, prefixes):
        self.calls += 1
        if self.calls > self.max_calls:
            raise AssertionError(
                f"step was called more than max_len = {self.max_calls} times: call it once per "
                "step, for the live prefixes of all the inputs together"
            )
        ok = isinstance(inputs, torch.Tensor) and isinstance(prefixes, torch.Tensor)
        if not (ok and inputs.dtype == prefixes.dtype == torch.long and inputs.dim() == 1):
            raise AssertionError("step takes int64 tensors: inputs (R,) and prefixes (R, t)")
        if prefixes.dim() != 2 or len(prefixes) != len(inputs):
            raise AssertionError(f"step got prefixes {tuple(prefixes.shape)} for {len(inputs)} rows")
        rows = [self.table(n, tuple(p)) for n, p in zip(inputs.tolist(), prefixes.tolist())]
        return torch.tensor(rows, dtype=torch.float32).reshape(len(rows), self.V)


def search_oracle(step, N, k, max_len, bos, eos):
    """The package's search for one input, run on each input: its state holds the prefixes."""
    model = copy.copy(step)
    model.max_calls = math.inf
    if step.flat:  # ties: the rule's order (lexicographic here) as tiny differences
        model.table = lambda n, p: [-1.0 - v * 2**-6 * 8.0 ** (1 - len(p)) for v in range(step.V)]

    def package_step(tokens, state):
        inputs, prefixes = state
        prefixes = torch.cat([prefixes, tokens[:, None]], dim=1)
        return model(inputs, prefixes), (inputs, prefixes)

    state = (torch.arange(N), torch.zeros(N, 0, dtype=torch.long))
    found = package_search(package_step, state, N, k, max_len, 0.0, bos, eos, impl="scratch")

    def score(n, tokens):  # the sum of the model's own log-probabilities
        path = [bos, *tokens.tolist()]
        return sum(step.table(n, tuple(path[:i]))[path[i]] for i in range(1, len(path)))

    return [[(tokens, score(n, tokens)) for tokens, _ in hyps] for n, hyps in enumerate(found)]


def search_draw(d):
    N, k, V = d.sizes(3)  # distinct; each is 1 in one of the first draws
    max_len, eos = d.integer(1, 5), d.integer(0, V - 1)
    model = ToyModel(V, eos, d.index, max_len, eos_bias=d.uniform(-1.0, 2.0))
    return model, N, k, max_len, V, eos  # bos = V: a token the model never gives


SEARCH = Question(
    "beam_search_batch",
    oracle=search_oracle,
    draw=search_draw,
    arg_names=("step", "N", "k", "max_len", "bos", "eos"),
    edges={
        "eos the likeliest first token": lambda: (ToyModel(4, 2, 7, 4, 6.0), 2, 2, 4, 4, 2),
        "ties: every token equally likely": lambda: (ToyModel(3, 0, 0, 3, flat=True), 2, 2, 3, 3, 0),
        "ties, V = 6, k = 4": lambda: (ToyModel(6, 5, 0, 3, flat=True), 1, 4, 3, 6, 5),
        "max_len = 1": lambda: (ToyModel(5, 1, 3, 1), 3, 2, 1, 5, 1),
        "a bigger batch": lambda: (ToyModel(6, 0, 11, 6, 1.0), 7, 3, 6, 6, 0),
    },
    draws=(8, 40),
    forbidden=BEAM_SEARCHES,
    # "N, k and V may be 1", steps t = 1 .. max_len, eos one of the model's V tokens
    bounds={
        "N": (1, None),
        "k": (1, None),
        "max_len": (1, None),
        "eos": (0, None),
        "eos - V": (None, -1, lambda step, N, k, max_len, bos, eos: eos - step.V),
    },
)

QUESTIONS = (BEAM_STEP, NORMALISED, BREVITY, CANDIDATES, PICKS, BLEU_Q, SEARCH)

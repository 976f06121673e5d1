import pytest
import torch

from seqlab.exercises import check_close, check_tensor


def test_check_close_accepts_a_match():
    check_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]), "x")


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "not written yet"),
        (Ellipsis, "not written yet"),
        ([1.0, 2.0], "should be a torch.Tensor"),
        (torch.zeros(3), r"shape \(3,\), expected \(2,\)"),
        (torch.tensor([1.0, float("nan")]), "NaN"),
        (torch.tensor([1.0, 2.5]), r"1 of 2 entries.*index \(1,\): got 2\.5, expected 2"),
    ],
)
def test_check_close_explains_what_is_wrong(value, message):
    with pytest.raises(AssertionError, match=message):
        check_close(value, torch.tensor([1.0, 2.0]), "answer")


def test_check_tensor_returns_the_tensor():
    t = torch.ones(2)
    assert check_tensor(t, "t", (2,)) is t


def test_a_failing_check_shows_the_students_message_first():
    """grader.check's report of a failing public test: the message written for the student, then the
    line that failed, and none of doctest's machinery (its trace, 'Trying:', 'Expecting nothing')."""
    from otter.test_files import ok_test

    from seqlab.exercises import readable_feedback, student_message

    env = {"torch": torch}
    exec("def causal(T):\n    return torch.ones(T, T)\n", env)
    test = (
        ">>> got = causal(3)\n"
        '>>> assert got.dtype == torch.bool, f"return a bool tensor, not {got.dtype}"\n'
        ">>> assert got.shape == (3, 3)\n"
    )
    before = ok_test.run_doctest
    original = getattr(before, "__wrapped__", before)  # an earlier test may have run the set-up cell
    passed, raw = original("causal 0", test, env)
    assert not passed and "Traceback" in raw
    shown = student_message(raw)
    assert shown.startswith("return a bool tensor, not torch.float32\n")
    assert "got.dtype == torch.bool" in shown
    assert not any(x in shown for x in ("Traceback", "doctest.py", "Trying:", "Expecting nothing"))
    exec("def causal(T):\n    return T.shape\n", env)
    shown = student_message(original("causal 0", test, env)[1])
    assert shown.startswith("your code raised AttributeError: 'int' object has no attribute 'shape'")
    ok_test.run_doctest = original
    readable_feedback()
    readable_feedback()  # once is enough
    try:
        passed, shown = ok_test.run_doctest("causal 0", test, env)
        assert not passed and shown.startswith("your code raised AttributeError")
        exec("def causal(T):\n    return torch.ones(T, T, dtype=torch.bool)\n", env)
        assert ok_test.run_doctest("causal 0", test, env) == (True, "")
    finally:
        ok_test.run_doctest = before


def test_a_format_only_check_is_never_reported_as_passed():
    """A public test that checks only the form of an answer (a letter, an integer read off a
    table) makes grader.check say "format accepted; the value is graded by hidden tests"."""
    from otter.test_files import ok_test
    from otter.test_files.abstract_test import TestCase

    from seqlab.exercises import FORMAT_ONLY, check_choice, check_integer, readable_feedback

    with pytest.raises(AssertionError, match="should be an int, got float"):
        check_integer(3.0, "steps")
    with pytest.raises(AssertionError, match="outside the possible range 1..10"):
        check_integer(11, "steps", 1, 10)
    with pytest.raises(AssertionError, match="one of the letters a, b"):
        check_choice("c", "ab", "pick")
    before = ok_test.run_doctest
    readable_feedback()
    try:
        env = {"check_choice": check_choice, "check_integer": check_integer}

        def run(*bodies):
            cases = [TestCase(f"q - {i}", body, False, 1, None, None) for i, body in enumerate(bodies)]
            test = ok_test.OKTestFile("q", "q.py", cases)
            test.run(env)
            return test

        format_only = run(">>> _ = check_choice('a', 'ab', 'the pick')\n")
        assert format_only.passed_all
        for shown in (format_only.summary(), format_only._repr_html_()):
            assert FORMAT_ONLY in shown and "the pick" in shown and "passed" not in shown, shown
        mixed = run(">>> _ = check_integer(4, 'steps')\n", ">>> assert 1 == 2, 'wrong'\n")
        assert FORMAT_ONLY in mixed.summary() and "wrong" in mixed.summary()
        real = run(">>> assert 1 == 1\n")
        assert "All test cases passed!" in real.summary() and FORMAT_ONLY not in real.summary()
    finally:
        ok_test.run_doctest = before


def test_count_torch_calls_tells_a_loop_from_whole_tensor_operations():
    from seqlab.exercises import count_torch_calls

    def vectorised(x):
        return (x @ x.T).sum(-1)

    def looped(x):
        return torch.stack([sum(x[i] @ x[j] for j in range(len(x))) for i in range(len(x))])

    small, big = torch.randn(2, 3), torch.randn(5, 3)
    assert count_torch_calls(lambda: vectorised(small)) == count_torch_calls(lambda: vectorised(big)) > 0
    assert count_torch_calls(lambda: looped(small)) < count_torch_calls(lambda: looped(big))


# ---------------------------------------------------------------------------------------------
# the shared harness: seqlab.exercises.Question


def _scale_question(**kwargs):
    from seqlab.exercises import Question

    def draw(d):
        N, E = d.sizes(2)
        return (d.randn(N, E), d.randn(E))

    edges = {"zero weights": lambda: (torch.ones(2, 3), torch.zeros(3))}
    return Question(
        "scale",
        oracle=lambda x, w: x * w,
        draw=draw,
        edges=edges,
        grad=(0, 1),
        **kwargs,
    )


def test_harness_accepts_a_right_answer_on_public_and_hidden_cases():
    question = _scale_question()
    question.check(lambda x, w: w * x, {}, public=True)
    question.check(lambda x, w: torch.mul(x, w), {}, public=False)
    public, hidden = question.cases(True), question.cases(False)
    assert len(public) == 5 + 1 and len(hidden) == 30 + 1
    for (label, make), (label2, make2) in zip(public[:5], hidden[:5]):  # the public draws: the hidden ones
        assert label == label2 and all(torch.equal(a, b) for a, b in zip(make(), make2()))


def test_draws_have_distinct_sizes_and_each_dimension_at_one_early():
    from seqlab.exercises import Draw

    for i in range(20):
        sizes = Draw(i).sizes(4)
        assert len(set(sizes)) == 4 and all(1 <= s <= 7 for s in sizes)
        assert (sizes[i] == 1) if i < 4 else True
    assert Draw(0).dtype == torch.float32 and Draw(1).dtype == torch.float64
    assert torch.equal(Draw(3).randn(2, 3), Draw(3).randn(2, 3))  # the same draw every time


def _in_place(x, w):
    x *= w
    return x


def _float64(x, w):
    return x.double() * w.double()


def _no_grad(x, w):
    with torch.no_grad():
        return x * w


def _detach(x, w):
    return x.detach() * w


def _squeeze(x, w):
    return (x.squeeze() * w).reshape(x.shape) if x.shape[0] > 1 else (x.squeeze() * w)


@pytest.mark.parametrize(
    "answer, message",
    [
        (None, "not written yet"),
        (3, "should be a function"),
        (lambda x, w: None, "not written yet"),
        (lambda x, w: (x * w).tolist(), "should be a torch.Tensor"),
        (_in_place, "changed its argument x"),
        (_float64, "dtype torch.float64, expected torch.float32"),
        (lambda x, w: x * w + 1e-3, r"is wrong at \d+ of \d+ entries"),
        (_no_grad, "not attached to the autograd graph"),
        (_detach, r"gradient .* with respect to x"),
        (_squeeze, r"shape"),
        (
            lambda x, w: x * w + 0 * torch.where(w == 0, 1.0, 0.0).sum() / (w != 0).all(),
            "edge case 'zero weights'",
        ),
    ],
)
def test_harness_rejects_plausible_wrong_answers_with_a_reason(answer, message):
    with pytest.raises(AssertionError, match=message):
        _scale_question().check(answer, {}, public=True)


def test_harness_messages_never_show_the_expected_values():
    from seqlab.exercises import Question

    secret = torch.tensor([123.456])
    question = Question("f", oracle=lambda x: x + secret, draw=lambda d: (torch.zeros(1),))
    with pytest.raises(AssertionError) as error:
        question.check(lambda x: x + 1, {}, public=True)
    assert "123" not in str(error.value) and "wrong at 1 of 1" in str(error.value)
    counted = Question("n", oracle=lambda k: 7 * k, draw=lambda d: (d.integer(1, 5),))
    with pytest.raises(AssertionError, match="should be an int, got float"):
        counted.check(lambda k: 7.0 * k, {}, public=True)
    with pytest.raises(AssertionError, match="should be an int, got Tensor"):
        counted.check(lambda k: torch.tensor(7 * k), {}, public=True)
    with pytest.raises(AssertionError) as error:
        counted.check(lambda k: 7 * k + 1, {}, public=True)
    assert "is not right" in str(error.value)


def test_harness_public_and_hidden_cases_forbid_delegation_and_check_new_tensors():
    from seqlab.exercises import DelegationError, Question

    question = Question(
        "causal",
        oracle=lambda T: torch.ones(T, T, dtype=torch.bool).tril(),
        draw=lambda d: (d.integer(1, 6),),
        forbidden=("seqlab.masks.causal_mask",),
    )
    import seqlab.masks

    delegating = lambda T: seqlab.masks.causal_mask(T)  # noqa: E731
    # the ban is in the question's text: the public test names the forbidden call already
    for public in (True, False):
        with pytest.raises(DelegationError, match="your answer called seqlab.masks.causal_mask"):
            question.check(delegating, {}, public=public)
    # an answer that is the forbidden function itself, or a partial of it, is caught too
    import functools

    with pytest.raises(DelegationError, match="your answer is seqlab.masks.causal_mask"):
        question.check(seqlab.masks.causal_mask, {}, public=False)
    with pytest.raises(DelegationError, match="your answer is seqlab.masks.causal_mask"):
        question.check(functools.partial(seqlab.masks.causal_mask), {}, public=False)
    with pytest.raises(DelegationError, match="your answer is seqlab.masks.causal_mask"):
        question.check(seqlab.masks.causal_mask, {}, public=True)
    fresh = Question(
        "copy",
        oracle=lambda x: x.clone(),
        draw=lambda d: (d.randn(3),),
        new_tensors=True,
    )
    with pytest.raises(AssertionError, match="shares memory with an input"):
        fresh.check(lambda x: x, {}, public=True)
    fresh.check(lambda x: x + 0, {}, public=True)


def test_harness_judges_a_question_with_many_right_answers():
    from seqlab.exercises import Question

    def judge(result, args, where):
        (n,) = args
        if not isinstance(result, int) or result % n:
            raise AssertionError(f"{where} is not a multiple of {n}")

    question = Question("multiple", oracle=None, judge=judge, draw=lambda d: (d.integer(1, 9),))
    question.check(lambda n: 3 * n, {}, public=False)
    with pytest.raises(AssertionError, match="not a multiple"):
        question.check(lambda n: n + 1, {}, public=True)


def test_harness_value_only_edges_skip_the_gradient_comparison_there_only():
    from seqlab.exercises import Question

    def answer(x):  # right values everywhere, a wrong gradient on large inputs only
        return 2 * x if x.abs().max() < 1e3 else (2 * x).detach() + 0 * x

    def make(value_only):
        return Question(
            "double",
            oracle=lambda x: 2 * x,
            draw=lambda d: (d.randn(3, 2),),
            edges={"large": lambda: (torch.full((2, 3), 1e5),)},
            grad=(0,),
            value_only=value_only,
        )

    make(("large",)).check(answer, {}, public=True)
    with pytest.raises(AssertionError, match="gradient"):
        make(()).check(answer, {}, public=True)
    with pytest.raises(AssertionError, match="wrong at"):  # values are still compared there
        make(("large",)).check(lambda x: torch.where(x.abs() < 1e3, 2 * x, -2 * x), {}, public=True)


def test_a_forbidden_module_class_is_forbidden_through_its_bases():
    """nn.LSTM forbidden: building it as nn.RNNBase("LSTM", ...) is caught (a base class that
    implements it), while nn.GRU, another subclass of that base, still works."""
    from seqlab.exercises import DelegationError, Question

    question = Question(
        "count",
        oracle=lambda E: 4 * (2 * E * E + 2 * E),
        draw=lambda d: (d.integer(1, 5),),
        forbidden=("torch.nn.LSTM",),
    )
    question.check(lambda E: 4 * (2 * E * E + 2 * E), {}, public=True)
    with pytest.raises(DelegationError, match="RNNBase"):
        question.check(lambda E: sum(p.numel() for p in torch.nn.RNNBase("LSTM", E, E).parameters()), {})
    with pytest.raises(DelegationError, match="torch.nn.LSTM"):
        question.check(lambda E: sum(p.numel() for p in torch.nn.LSTM(E, E).parameters()), {})
    gru = lambda E: 4 * sum(p.numel() for p in torch.nn.GRU(E, E).parameters()) // 3  # noqa: E731
    question.check(gru, {}, public=True)


def test_a_forbidden_operator_is_refused_whatever_route_reaches_it():
    """'aten.nll_loss_forward' forbidden: F.cross_entropy, torch.ops.aten.nll_loss and
    torch._C._nn.nll_loss all end in that operator; log_softmax and gather do not."""
    import torch.nn.functional as F

    from seqlab.exercises import DelegationError, Question

    def mine(z, t):
        return -z.log_softmax(-1).gather(-1, t[:, None]).mean()

    question = Question(
        "loss",
        oracle=mine,
        draw=lambda d: (d.randn(3, 4), torch.tensor([0, 3, 1])),
        arg_names=("z", "t"),
        forbidden=("aten.nll_loss_forward",),
    )
    question.check(mine, {}, public=True)
    routes = [
        lambda z, t: F.cross_entropy(z, t),
        lambda z, t: torch.ops.aten.nll_loss(z.log_softmax(-1), t),
        lambda z, t: torch._C._nn.nll_loss(z.log_softmax(-1), t),
    ]
    for route in routes:
        with pytest.raises(DelegationError, match="aten.nll_loss_forward"):
            question.check(route, {}, public=True)
    assert float(F.cross_entropy(torch.zeros(1, 2), torch.tensor([0]))) > 0  # put back afterwards


def test_a_forbidden_function_is_forbidden_under_its_other_handles():
    """torch.lstm_cell forbidden: torch._VF.lstm_cell and torch.ops.aten.lstm_cell too (routes a
    student took); math.cos: cmath.cos and numpy.cos; all put back afterwards."""
    import cmath

    from seqlab.exercises import DelegationError, forbid

    x, state = torch.randn(1, 2), [torch.zeros(1, 3), torch.zeros(1, 3)]
    w_ih, w_hh = torch.randn(12, 2), torch.randn(12, 3)
    routes = {
        "torch.lstm_cell": [
            lambda: torch._VF.lstm_cell(x, state, w_ih, w_hh),
            lambda: torch.ops.aten.lstm_cell(x, state, w_ih, w_hh),
        ],
        "math.cos": [lambda: cmath.cos(1.0)],
        "torch.nn.functional.softmax": [lambda: torch.special.softmax(x, -1), lambda: torch.softmax(x, -1)],
    }
    for name, calls in routes.items():
        for call in calls:
            with pytest.raises(DelegationError), forbid({}, name):
                call()
    with forbid({}, "torch.nn.functional.softmax"):
        assert (x.exp() / x.exp().sum(-1, keepdim=True)).shape == x.shape  # what is not banned runs
    torch.ops.aten.lstm_cell(x, state, w_ih, w_hh)
    assert torch._VF.lstm_cell(x, state, w_ih, w_hh)[0].shape == (1, 3) and cmath.cos(0.0) == 1


def test_harness_catches_a_write_into_grad():
    """grad_untouched: neither a leaf behind the arguments nor an argument itself (backward with
    inputs=) may get a .grad from the answer."""
    from seqlab.exercises import Question

    def draw(d):
        x = d.randn(3).requires_grad_(True)
        return (2 * x,)

    question = Question(
        "g", oracle=lambda y: torch.autograd.grad(y.sum(), y)[0], draw=draw, grad_untouched=True
    )
    question.check(lambda y: torch.autograd.grad(y.sum(), y)[0], {}, public=True)

    def through_backward(y):
        y.retain_grad()
        y.sum().backward(retain_graph=True)
        return y.grad.clone()

    def through_inputs(y):
        y.sum().backward(inputs=[y], retain_graph=True)
        return y.grad.clone()

    for answer in (through_backward, through_inputs):
        with pytest.raises(AssertionError, match=r"wrote into the \.grad"):
            question.check(answer, {}, public=True)


def test_questions_declared_as_code_need_no_public_cell_and_hide_their_hidden_cases():
    """check("name", answer) finds the declaration in seqlab.exercises.questions; the hidden cases
    come from seqlab_hidden, never from the package's declarations."""
    from seqlab.exercises import Question, check
    from seqlab.exercises.harness import _declared

    declared = _declared()
    assert {"rnn_forward", "lstm_cell_step"} <= set(declared)
    for chapter, question in declared.values():
        assert not question.hidden_edges, f"{question.name}: hidden edge cases in the package ({chapter})"
    hidden = Question.named("clip_by_global_norm").with_hidden()
    assert "float64 gradients near 1e200" in hidden.hidden_edges

    def steps_below(rate, threshold):  # a logarithm with a fudge term: right on the public cases
        import math

        return math.floor(math.log(threshold) / math.log(rate) + 1e-9) + 1

    check("steps_below", steps_below)
    with pytest.raises(AssertionError, match="a power of the rate"):
        check("steps_below", steps_below, hidden=True)


def test_harness_rejects_a_case_outside_the_bounds_its_question_declares():
    """A question's text states bounds (``bounds``); a draw that leaves them is the question's
    fault, and the harness says so before the answer runs, public and hidden."""
    within = _scale_question(bounds={"x": (-10.0, 10.0)}, arg_names=("x", "w"))
    within.check(lambda x, w: x * w, {}, public=False)
    outside = _scale_question(bounds={"x": (-1.0, 1.0)}, arg_names=("x", "w"))
    with pytest.raises(ValueError, match="outside the bounds"):
        outside.check(lambda x, w: x * w, {}, public=True)

    def small_norm(x):
        """of norm at most 1"""
        return bool(x.norm() <= 1)

    with pytest.raises(ValueError, match="x is not of norm at most 1"):
        _scale_question(bounds={"x": small_norm}, arg_names=("x", "w")).check(lambda x, w: x * w, {})
    product = _scale_question(bounds={"x * w": (-1e-3, 1e-3, lambda x, w: x * w)}, arg_names=("x", "w"))
    with pytest.raises(ValueError, match=r"x \* w reaches .* outside the bounds"):
        product.check(lambda x, w: x * w, {})
    misnamed = _scale_question(bounds={"scores": (-1.0, 1.0)}, arg_names=("x", "w"))
    with pytest.raises(ValueError, match="not among its arguments"):
        misnamed.check(lambda x, w: x * w, {}, public=True)


def test_every_declared_case_stays_within_the_bounds_its_text_states():
    """Every public and hidden case of every question declared as code (its random draws and its
    edge cases) lies within the question's ``bounds``, which its text states."""
    from seqlab.exercises.harness import _declared

    checked = 0
    for chapter, question in _declared().values():
        if not question.bounds:
            continue
        hidden = question.with_hidden()
        for public, q in ((True, question), (False, hidden)):
            for label, make in q.cases(public):
                args = make()
                if q.oracle is None and q.judge is None:
                    args = args[0]
                q.check_bounds(args, q._names(len(args)), f"{chapter}, {label}")
                checked += 1
    assert checked > 0

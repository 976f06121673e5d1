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

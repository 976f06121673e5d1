"""One harness for every graded question: the answer against an oracle on many random draws.

A question declares its oracle (the package's implementation that the page shows, or a reference
formula), a generator of argument draws and its edge cases; :meth:`Question.check` then calls the
student's function on each draw and checks, with messages that never print an expected value:

- the result has the oracle's structure (tuple, list, tensor, ``int``, ``float``, ``bool``), and
  every tensor its shape, dtype and device, with values close to the oracle's;
- the inputs are unchanged after the call (cloned before, compared after);
- with ``grad`` given, a backward pass through the answer gives finite gradients equal to the
  oracle's, for the arguments named there;
- in the hidden tests, the implementations in ``forbidden`` raise while the answer runs.

The public test runs the first ``draws[0]`` draws (5) and the edge cases the question names
(``edges``); the hidden test the first ``draws[1]`` draws (30) (the public ones among them), those
edge cases and ``hidden_edges``: what the public test accepts, the hidden one judges by the same
rules, on more inputs. The implementations in ``forbidden`` raise in both, so that the public test
already names a forbidden call the answer makes.

Where the questions live (docs/contributors.md, "Exercises as code"): each chapter's questions are
declared in ``seqlab.exercises.questions.<chapter>`` (its tuple ``QUESTIONS``), shipped with the
package; what only the hidden test may know (more edge cases, a hidden oracle) in
``seqlab_hidden.<chapter>`` (its dict ``HIDDEN``: question name -> fields to replace), which only
the autograder zip carries. A notebook's test cells are one line each::

    check("lstm_cell_step", lstm_cell_step)               # the public test
    check("lstm_cell_step", lstm_cell_step, hidden=True)  # the hidden test (zip only)

Example (a declaration)::

    def draw(d):                                  # d: a Draw, seeded by the draw's number
        N, T, E = d.sizes(3)                      # distinct sizes; one of them 1 in early draws
        return (d.randn(N, T, E), d.randn(E, E))
    F = Question("f", oracle=reference_f, draw=draw, grad=(0, 1))
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import pkgutil
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

__all__ = ["Draw", "Question"]

# (atol, rtol) by the expected result's dtype
TOLERANCE = {
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (1e-2, 1e-2),
    torch.float32: (1e-5, 1e-4),
    torch.float64: (1e-10, 1e-8),
}


class Draw:
    """Random arguments for draw number ``index``: sizes and tensors from a generator seeded by it.

    ``dtype`` alternates: float32 for even draws, float64 for odd ones (``Draw.dtype``)."""

    def __init__(self, index: int):
        self.index = index
        self.generator = torch.Generator().manual_seed(1000 + index)
        self.dtype = torch.float64 if index % 2 else torch.float32

    def sizes(self, k: int, high: int = 7) -> list[int]:
        """``k`` distinct sizes in ``1..high`` (so no two dimensions can be confused); in draw
        ``i < k`` the ``i``-th of them is 1, so each dimension is 1 in one of the first draws."""
        if not 1 <= k <= high:
            raise ValueError(f"k must be in 1..high={high}, got {k}")
        values = (torch.randperm(high - 1, generator=self.generator)[:k] + 2).tolist()
        if self.index < k:
            values[self.index] = 1
        return values

    def integer(self, low: int, high: int) -> int:
        """A Python ``int`` in ``low..high``."""
        return int(torch.randint(low, high + 1, (), generator=self.generator))

    def uniform(self, low: float, high: float) -> float:
        """A Python ``float`` in ``[low, high)``."""
        return low + (high - low) * float(torch.rand((), generator=self.generator, dtype=torch.float64))

    def randn(self, *shape: int, dtype: torch.dtype | None = None, scale: float = 1.0) -> torch.Tensor:
        """Standard normal entries times ``scale``, of ``dtype`` (default :attr:`dtype`)."""
        dtype = dtype or self.dtype
        return scale * torch.randn(*shape, generator=self.generator, dtype=torch.float64).to(dtype)

    def rand(self, *shape: int, dtype: torch.dtype | None = None) -> torch.Tensor:
        """Uniform entries in ``[0, 1)``, of ``dtype`` (default :attr:`dtype`)."""
        return torch.rand(*shape, generator=self.generator, dtype=torch.float64).to(dtype or self.dtype)


def _clone(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    return value


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        if not (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        a, b = a.detach(), b.detach()
        return bool(((a == b) | (a != a) & (b != b)).all())  # NaN where it was NaN counts as unchanged
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)


def _graph_leaves(values) -> list[torch.Tensor]:
    """The tensors whose ``.grad`` a backward pass could write: the arguments that require grad
    and the leaves their autograd graphs reach."""
    leaves, seen, stack = [], set(), []
    for t in _tensors(values):
        if t.requires_grad:  # a non-leaf argument too: backward(inputs=...) writes its .grad
            leaves.append(t)
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):  # AccumulateGrad: the leaf it accumulates into
            leaves.append(node.variable)
        stack.extend(n for n, _ in node.next_functions)
    return leaves


def _grad_of(t: torch.Tensor):
    with warnings.catch_warnings():  # reading a non-leaf's .grad warns
        warnings.simplefilter("ignore")
        return t.grad


def _tensors(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def describe(args: Sequence, names: Sequence[str]) -> str:
    """``x (2, 3) float32, k = 4``: the arguments by shape and dtype (tensors) or value."""
    parts = []
    for name, value in zip(names, args):
        if isinstance(value, torch.Tensor):
            parts.append(f"{name} {tuple(value.shape)} {str(value.dtype).replace('torch.', '')}")
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
            parts.append(f"{name}: {len(value)} tensors")
        else:
            parts.append(f"{name} = {value!r}")
    return ", ".join(parts)


def _compare(got, want, where: str, tolerance: float) -> None:
    """Assert that ``got`` has ``want``'s structure and values; the messages never show ``want``."""
    from seqlab.exercises import check_number, check_tensor

    if got is None or got is Ellipsis:
        raise AssertionError(f"{where} is {got!r}: the function is not written yet (or returns nothing)")
    if isinstance(want, torch.Tensor):
        got = check_tensor(got, where, tuple(want.shape)) if torch.isfinite(want).all() else got
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            raise AssertionError(f"{where} should be a tensor of shape {tuple(want.shape)}")
        if got.dtype != want.dtype:
            raise AssertionError(f"{where} has dtype {got.dtype}, expected {want.dtype}")
        if got.device != want.device:
            raise AssertionError(f"{where} is on {got.device}, expected {want.device} (the inputs' device)")
        if want.dtype == torch.bool or not want.is_floating_point():
            if not torch.equal(got, want):
                wrong = int((got != want).sum())
                raise AssertionError(f"{where} is wrong at {wrong} of {want.numel()} entries")
            return
        atol, rtol = TOLERANCE.get(want.dtype, (1e-5, 1e-4))
        atol, rtol = atol * tolerance, rtol * tolerance
        got, want = got.detach(), want.detach()
        finite = torch.isfinite(want)
        if not torch.equal(finite, torch.isfinite(got)) or not torch.equal(got[~finite], want[~finite]):
            raise AssertionError(f"{where} has NaN or infinite values where it should not (or misses some)")
        bad = (got - want).abs() > atol + rtol * want.abs()
        if bad.any():
            index = tuple(int(i) for i in torch.nonzero(bad)[0])
            raise AssertionError(
                f"{where} is wrong at {int(bad.sum())} of {want.numel()} entries (first at {index})"
            )
        return
    if isinstance(want, (tuple, list)):
        kind = type(want).__name__
        if type(got) is not type(want):
            raise AssertionError(f"{where} should be a {kind}, got {type(got).__name__}")
        if len(got) != len(want):
            raise AssertionError(f"{where} should be a {kind} of {len(want)} items, got {len(got)}")
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{i}]", tolerance)
        return
    if isinstance(want, bool):
        if not isinstance(got, bool):
            raise AssertionError(f"{where} should be a bool, got {type(got).__name__}")
    elif isinstance(want, int):
        if isinstance(got, bool) or not isinstance(got, int):
            raise AssertionError(f"{where} should be an int, got {type(got).__name__}: {got!r}")
    elif isinstance(want, float):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise AssertionError(f"{where} should be a Python float, got {type(got).__name__}")
        check_number(got, want, where, rel=1e-9 * tolerance, abs_tol=1e-12 * tolerance)
        return
    if got != want:
        raise AssertionError(f"{where} is not right")


_QUESTIONS: dict[str, Question] = {}  # declared in a notebook cell (a chapter not yet converted)


@functools.cache
def _declared() -> dict[str, tuple[str, Question]]:
    """{question name: (chapter, question)} from every module of ``seqlab.exercises.questions``."""
    from seqlab.exercises import questions

    found: dict[str, tuple[str, Question]] = {}
    for info in pkgutil.iter_modules(questions.__path__):
        module = importlib.import_module(f"{questions.__name__}.{info.name}")
        for question in getattr(module, "QUESTIONS", ()):
            if question.name in found:
                raise ValueError(
                    f"question {question.name!r} is declared twice ({found[question.name][0]}, {info.name})"
                )
            found[question.name] = (info.name, question)
    return found


def _hidden_module(chapter: str, question: str):
    """``seqlab_hidden.<chapter>``: installed from the autograder zip, loaded by the grader, or (in
    the course's repository, where ``seqlab`` is installed editable) from ``code/tools/grading``."""
    name = f"seqlab_hidden.{chapter}"
    for attempt in range(2):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name not in ("seqlab_hidden", name):
                raise
        repository = Path(__file__).resolve().parents[3] / "tools" / "grading"
        if attempt or not (repository / "seqlab_hidden" / "__init__.py").is_file():
            break
        sys.path.append(str(repository))
        importlib.invalidate_caches()
    raise AssertionError(
        f"the hidden test of {question} runs only in the grader (its cases are not in seqlab)"
    )


@dataclass(frozen=True)
class Question:
    """A graded function: ``check`` compares the student's answer with ``oracle``.

    - ``oracle``: a function of the answer's arguments that returns the right result (or raises the
      ``ValueError`` / ``TypeError`` the answer must raise); ``None`` when each case gives its own
      result: then ``draw`` and the edge cases return ``(arguments, result)``;
    - ``draw(d)``: the arguments (a tuple) of one random draw, from a :class:`Draw` ``d``;
    - ``edges`` / ``hidden_edges``: ``{name: function returning the arguments}``, the edge cases
      the question names (public and hidden tests) and further ones (hidden tests only);
    - ``grad``: positions of the floating-point tensor arguments to differentiate the answer by
      (empty: no backward pass; the question is not differentiable);
    - ``forbidden``: dotted names of the implementations the answer must not call (public and hidden
      tests: the public one names the call, the ban being in the question's text);
    - ``draws``: how many draws the public and the hidden test run;
    - ``tolerance``: a factor on the default tolerances (:data:`TOLERANCE`);
    - ``new_tensors``: the result must not share memory with an input (a new tensor, not a view);
    - ``value_only``: names of edge cases whose gradients are not compared, only their values: a
      case built to overflow (scores of 1e10 through a saturated softmax) has gradients that
      rounding decides, and PyTorch versions round them differently;
    - ``judge(result, arguments, where)``: for a question with many right answers (``oracle`` None,
      the draws return the arguments only), raises ``AssertionError`` when ``result`` is wrong;
    - ``grad_untouched``: the answer must leave the ``.grad`` of every tensor behind its arguments
      as it was (None): a question that asks for gradients by ``torch.autograd.grad``;
    - ``extra(answer, public)``: checks beyond the cases, run after them (e.g. that the work does
      not grow with the batch: a loop over time, not over the sequences);
    - ``bounds``: ``{argument name: (low, high)}``, the range of its values (every entry of a tensor)
      that the question's text promises the answer must handle (None: no bound on that side), or
      ``{argument name: predicate}`` for a bound no range states (the predicate's docstring says
      what it is, e.g. "finite gradients whose global norm their dtype holds"), or, for a quantity
      the text bounds that is no argument (the scores ``q k^T / sqrt(D)``), ``{name: (low, high,
      function of the arguments)}``; a
      question states its bounds once, here, and its text and its draws must agree with them:
      :meth:`check` runs :meth:`check_bounds` on every case, public and hidden, before the answer.

    The hidden test's own cases and oracle are not declared here but in ``seqlab_hidden.<chapter>``
    (:meth:`with_hidden`), which the student's install does not hold.
    """

    name: str
    oracle: Callable | None
    draw: Callable[[Draw], tuple]
    edges: Mapping[str, Callable[[], tuple]] = field(default_factory=dict)
    hidden_edges: Mapping[str, Callable[[], tuple]] = field(default_factory=dict)
    grad: tuple[int, ...] = ()
    forbidden: tuple[str, ...] = ()
    draws: tuple[int, int] = (5, 30)
    tolerance: float = 1.0
    new_tensors: bool = False
    value_only: tuple[str, ...] = ()
    arg_names: tuple[str, ...] | None = None
    judge: Callable | None = None
    grad_untouched: bool = False
    extra: Callable | None = None
    bounds: Mapping[str, tuple | Callable[[object], bool]] = field(default_factory=dict)

    def __post_init__(self):
        _QUESTIONS[self.name] = self  # a question declared in a cell: its hidden test finds it here

    @staticmethod
    def named(name: str) -> Question:
        """The question ``name``: declared in ``seqlab.exercises.questions.<chapter>``, or (a chapter
        not yet converted) by its public test cell, which must then have run first."""
        if name in _declared():
            return _declared()[name][1]
        if name not in _QUESTIONS:
            raise AssertionError(f"the public test of {name} has not run: run its grader.check first")
        return _QUESTIONS[name]

    @staticmethod
    def chapter_of(name: str) -> str:
        """The chapter whose module declares the question ``name``."""
        if name not in _declared():
            raise AssertionError(f"no chapter declares a question {name!r}")
        return _declared()[name][0]

    def with_hidden(self) -> Question:
        """This question as its hidden test runs it: the fields that ``seqlab_hidden.<chapter>``
        replaces for it (hidden edge cases, a hidden oracle, more draws) replaced. Only the
        autograder (its zip, or the repository's tests) has that module."""
        module = _hidden_module(Question.chapter_of(self.name), self.name)
        return dataclasses.replace(self, **getattr(module, "HIDDEN", {}).get(self.name, {}))

    def cases(self, public: bool) -> list[tuple[str, Callable[[], tuple]]]:
        """``[(label, make)]``: the random draws then the edge cases of a public or hidden test;
        ``make()`` builds that case's arguments anew (the oracle and the answer get their own)."""
        count = self.draws[0] if public else self.draws[1]
        cases = [(f"random draw {i}", lambda i=i: self.draw(Draw(i))) for i in range(count)]
        edges = dict(self.edges) if public else {**self.edges, **self.hidden_edges}
        return cases + [(f"edge case '{name}'", make) for name, make in edges.items()]

    def _names(self, n: int) -> list[str]:
        if self.arg_names:
            return list(self.arg_names)
        try:
            names = list(inspect.signature(self.oracle).parameters)
        except (TypeError, ValueError):
            names = []
        return (names + [f"argument {i}" for i in range(len(names), n)])[:n]

    def check_bounds(self, args: Sequence, names: Sequence[str], label: str) -> None:
        """Raise ``ValueError`` when a case's arguments leave the ``bounds`` the question declares
        (its text promises them): a fault of the question, never of the answer. Every entry of a
        tensor (or of a list of tensors or numbers) counts; NaN is no value and counts for none."""
        derived = {n: b for n, b in self.bounds.items() if n not in names}
        unknown = sorted(n for n, b in derived.items() if not (isinstance(b, tuple) and len(b) == 3))
        if unknown:
            raise ValueError(
                f"{self.name} declares bounds for {unknown}, which are not among its arguments "
                f"{list(names)} (a derived quantity takes (low, high, function of the arguments))"
            )
        values_of = {name: value for name, value in zip(names, args) if name in self.bounds}
        values_of.update({name: bound[2](*args) for name, bound in derived.items()})
        for name, value in values_of.items():
            bound = self.bounds[name][:2] if name in derived else self.bounds[name]
            if callable(bound):  # a bound no range can state: a predicate, its docstring says which
                if not bound(value):
                    raise ValueError(
                        f"{self.name} [{label}]: {name} is not {bound.__doc__}, as its text states "
                        "(a fault of the question, not of the answer)"
                    )
                continue
            low, high = bound
            values = [t.detach() for t in _tensors(value)] or [torch.as_tensor(value, dtype=torch.float64)]
            values = [v[~torch.isnan(v)] if v.is_floating_point() else v for v in values]
            smallest = min((float(v.min()) for v in values if v.numel()), default=None)
            largest = max((float(v.max()) for v in values if v.numel()), default=None)
            if smallest is None:
                continue
            if (low is not None and smallest < low) or (high is not None and largest > high):
                raise ValueError(
                    f"{self.name} [{label}]: {name} reaches {smallest:.6g} .. {largest:.6g}, outside the "
                    f"bounds [{low}, {high}] its text states (a fault of the question, not of the answer)"
                )

    def check(self, answer, namespace: dict | None = None, public: bool = True) -> None:
        """Check ``answer`` on the public (``public=True``) or hidden cases; raise
        ``AssertionError`` with a message for the student at the first problem."""
        from seqlab.exercises import forbidding

        if answer is None or answer is Ellipsis:
            raise AssertionError(f"{self.name} is {answer!r}: the function is not written yet")
        if not callable(answer):
            raise AssertionError(f"{self.name} should be a function, got {type(answer).__name__}")
        if self.forbidden:
            answer = forbidding(answer, namespace if namespace is not None else {}, *self.forbidden)
        for label, make in self.cases(public):
            if self.oracle is None and self.judge is None:
                make = lambda make=make: make()[0]  # noqa: E731
            args = make()
            names = self._names(len(args))
            self.check_bounds(args, names, label)
            where = f"{self.name}({describe(args, names)}) [{label}]"
            compare_gradients = self.grad and label not in {f"edge case '{e}'" for e in self.value_only}
            if self._check_values(answer, make, names, where, label, public) and compare_gradients:
                self._check_gradients(answer, make, names, where)
        if self.extra is not None:
            self.extra(answer, public)

    def _want(self, label: str, public: bool):
        """The right result of the case ``label`` (or the error it must raise)."""
        make = dict(self.cases(public))[label]
        try:
            return make()[1] if self.oracle is None else self.oracle(*make())
        except (ValueError, TypeError) as error:
            return error

    def _check_values(self, answer, make, names, where, label, public) -> bool:
        """Check one case's result and inputs; False when the case is one that must raise."""
        want = None if self.judge else self._want(label, public)
        args = make()
        before = _clone(args)
        if isinstance(want, Exception):
            kind = type(want).__name__
            try:
                answer(*args)
            except type(want):
                return False
            except Exception as error:
                raise AssertionError(
                    f"{where} should raise {kind}, but raised {type(error).__name__}"
                ) from None
            raise AssertionError(f"{where} should raise {kind} (the question says when), but returned")
        leaves = _graph_leaves(args) if self.grad_untouched else []
        grads_before = [_grad_of(leaf) for leaf in leaves]
        got = answer(*args)
        for name, old, new in zip(names, before, args):
            if not _same(old, new):
                raise AssertionError(
                    f"{where}: your function changed its argument {name}; leave the inputs unchanged"
                )
        if any(_grad_of(leaf) is not old for leaf, old in zip(leaves, grads_before)):
            raise AssertionError(
                f"{where}: your function wrote into the .grad of a tensor behind its arguments "
                "(.backward() does); compute gradients with torch.autograd.grad, which leaves .grad alone"
            )
        if self.judge:
            self.judge(got, args, f"the result of {where}")
        else:
            _compare(got, want, f"the result of {where}", self.tolerance)
        if self.new_tensors:
            inputs = {t.untyped_storage().data_ptr() for t in _tensors(args) if t.numel()}
            for t in _tensors(got):
                if t.numel() and t.untyped_storage().data_ptr() in inputs:
                    raise AssertionError(
                        f"the result of {where} shares memory with an input: return new tensors"
                    )
        return True

    def _check_gradients(self, answer, make, names, where) -> None:
        def run(function):
            leaves = list(make())
            for i in self.grad:
                leaves[i] = leaves[i].detach().clone().requires_grad_(True)
            out = function(*leaves)
            return [t for t in _tensors(out) if t.is_floating_point()], [leaves[i] for i in self.grad]

        want_out, want_leaves = run(self.oracle)
        got_out, got_leaves = run(answer)
        if any(not t.requires_grad for t in got_out):
            raise AssertionError(
                f"the result of {where} is not attached to the autograd graph of its inputs "
                "(computed under torch.no_grad(), detached, or rebuilt from numbers?)"
            )
        generator = torch.Generator().manual_seed(7)
        weights = [
            torch.randn(t.shape, generator=generator, dtype=torch.float64).to(t.dtype) for t in want_out
        ]
        want = torch.autograd.grad(want_out, want_leaves, weights, allow_unused=True)
        try:
            got = torch.autograd.grad(got_out, got_leaves, weights, allow_unused=True)
        except RuntimeError as error:
            raise AssertionError(f"a backward pass through the result of {where} fails: {error}") from None
        for i, g, w, leaf in zip(self.grad, got, want, want_leaves):
            g = torch.zeros_like(leaf) if g is None else g
            w = torch.zeros_like(leaf) if w is None else w
            if not torch.isfinite(g).all():
                raise AssertionError(
                    f"a backward pass through {where} gives NaN or infinite gradients for {names[i]}"
                )
            _compare(g, w, f"the gradient of {where} with respect to {names[i]}", self.tolerance * 10)

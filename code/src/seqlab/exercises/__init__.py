"""Checks that the graded exercises call, with failure messages written for students.

A chapter's test cell is one line, ``check("lstm_cell_step", lstm_cell_step)`` (:func:`check`): the
question is declared in ``seqlab.exercises.questions.<chapter>``. When the answer is wrong the
student reads which case and which value is off (its shape, its dtype, a changed input, a broken
gradient, a forbidden call), never the expected value, instead of a bare ``AssertionError``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = [
    "check",
    "check_tensor",
    "check_close",
    "check_number",
    "check_choice",
    "check_integer",
    "count_torch_calls",
    "format_only",
    "FORMAT_ONLY",
    "forbid",
    "forbidding",
    "DelegationError",
    "student_message",
    "readable_feedback",
]


def check_tensor(value, name: str, shape: tuple[int, ...] | None = None) -> torch.Tensor:
    """Assert that ``value`` is a finite tensor (of ``shape`` if given) and return it."""
    if value is None or value is Ellipsis:
        raise AssertionError(f"{name} is {value!r}: the function is not written yet (or returns nothing)")
    if not isinstance(value, torch.Tensor):
        raise AssertionError(f"{name} should be a torch.Tensor, got {type(value).__name__}")
    if type(value) not in (torch.Tensor, torch.nn.Parameter):
        raise AssertionError(
            f"{name} should be a plain torch.Tensor, got the subclass {type(value).__name__}"
        )
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise AssertionError(f"{name} has shape {tuple(value.shape)}, expected {tuple(shape)}")
    if value.is_floating_point() and not torch.isfinite(value).all():
        raise AssertionError(f"{name} contains NaN or infinite values")
    return value


def check_close(
    value,
    expected: torch.Tensor,
    name: str,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    reveal: bool = True,
    dtype: torch.dtype | None = None,
) -> None:
    """Assert that ``value`` is a tensor of ``expected``'s shape (and ``dtype`` if given), close to
    it elementwise; with ``reveal=False`` the message does not show the expected values."""
    value = check_tensor(value, name, tuple(expected.shape))
    if dtype is not None and value.dtype != dtype:
        raise AssertionError(f"{name} has dtype {value.dtype}, expected {dtype}")
    if value.is_complex() and not expected.is_complex():
        raise AssertionError(f"{name} is complex ({value.dtype}); expected real values")
    value = value.detach().to(expected.dtype)
    expected = expected.detach()
    diff = (value - expected).abs()
    allowed = atol + rtol * expected.abs()
    if (diff > allowed).any():
        worst = int(torch.argmax(diff - allowed))
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), diff.shape))
        where = f"{int((diff > allowed).sum())} of {diff.numel()} entries"
        if not reveal:
            raise AssertionError(f"{name} is wrong at {where} (the worst at index {index})")
        raise AssertionError(
            f"{name} differs from the expected values at {where}; largest |difference| is "
            f"{diff.max().item():.3g} (at index {index}: got {value[index].item():.6g}, "
            f"expected {expected[index].item():.6g})"
        )


def check_number(value, expected: float, name: str, rel: float = 1e-6, abs_tol: float = 0.0) -> None:
    """Assert that ``value`` (int, float or a one-element tensor) is close to ``expected``:
    ``|value - expected| <= max(rel * |expected|, abs_tol)``."""
    if value is None or value is Ellipsis:
        raise AssertionError(f"{name} is {value!r}: the answer is not written yet")
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise AssertionError(f"{name} should be one number, got a tensor of shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AssertionError(f"{name} should be a number, got {type(value).__name__}: {value!r}")
    if value != value or value in (float("inf"), float("-inf")):
        raise AssertionError(f"{name} is {value}, not a finite number")
    if abs(value - expected) > max(rel * abs(expected), abs_tol):
        raise AssertionError(f"{name} = {value!r} is not right")


FORMAT_ONLY = "format accepted; the value is graded by hidden tests"
"""What ``grader.check`` shows, instead of "passed", for a public test that checks a format only."""

_format_checks: list[str] = []  # what the public test now running checked the format of only
_FORMAT_ONLY_CASES: dict[str, list[str]] = {}  # test case ("question i") -> those names


def format_only(name: str) -> None:
    """Say that the public test now running checks only the *format* of ``name``, not its value:
    with :func:`readable_feedback` on, ``grader.check`` then reports ``FORMAT_ONLY``, not "passed"."""
    _format_checks.append(str(name))


def check_choice(value, options: str, name: str) -> str:
    """``value`` in lower case if it is one of the letters in ``options`` (e.g. "abcd"): a format
    check (:func:`format_only`; a hidden case checks which letter)."""
    if value is None or value is Ellipsis:
        raise AssertionError(f"{name} is {value!r}: the answer is not written yet")
    if not isinstance(value, str) or len(value.strip()) != 1 or value.strip().lower() not in options:
        raise AssertionError(f"{name} should be one of the letters {', '.join(options)}; got {value!r}")
    format_only(name)
    return value.strip().lower()


def check_integer(value, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` if it is an ``int`` (not a bool) in ``[low, high]`` where given: a format check
    (:func:`format_only`; a hidden test grades the value)."""
    if value is None or value is Ellipsis:
        raise AssertionError(f"{name} is {value!r}: the answer is not written yet")
    if isinstance(value, bool) or not isinstance(value, int):
        raise AssertionError(f"{name} should be an int, got {type(value).__name__}: {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"{'' if low is None else low}..{'' if high is None else high}"
        raise AssertionError(f"{name} = {value} lies outside the possible range {span}")
    format_only(name)
    return value


def count_torch_calls(fn) -> int:
    """How many torch functions and tensor methods (``@``, ``[]``, ``.sum()``) ``fn()`` calls: the
    same number at every size for whole-tensor code, more on a bigger input for a loop."""
    from torch.overrides import TorchFunctionMode

    class _Counter(TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls += 1
            return func(*args, **(kwargs or {}))

    with _Counter() as counter:
        fn()
    return counter.calls


class DelegationError(AssertionError):
    """Raised when an answer calls the library function that the question asks it to write."""


class _Forbidden:
    """Stands in for a forbidden function or class while a hidden test calls the answer."""

    def __init__(self, dotted: str):
        self._dotted = dotted
        # read off every function of torch's namespace by torch.overrides (torch.compile does)
        self.__name__ = self.__qualname__ = dotted.rsplit(".", 1)[-1]

    def _refuse(self):
        raise DelegationError(
            f"this question asks you to write it yourself; your answer called {self._dotted}, "
            "which already implements it"
        )

    def __call__(self, *args, **kwargs):
        self._refuse()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self._refuse()


def _resolve(dotted: str):
    """(owner, attribute, object) for ``"package.module.name"`` or ``"package.Class.method"``."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:-1]:
            owner = getattr(owner, part)
        return owner, parts[-1], getattr(owner, parts[-1])
    raise ValueError(f"cannot find {dotted!r}")


# Where PyTorch keeps another handle on a function of the same name: torch.lstm_cell is also
# torch._VF.lstm_cell and torch.ops.aten.lstm_cell; F.softmax is also torch.softmax. A forbidden
# function is forbidden under each of them (a student found the first two).
_ROUTES = ("torch", "torch._VF", "torch._C._nn", "torch.nn.functional",
           "torch.special", "torch.ops.aten")  # fmt: skip
# math's and NumPy's functions of the same name: only for these, where a question bans the function
_MATH_ROUTES = ("math", "cmath", "numpy")
_MATH_NAMES = {"sin", "cos", "tan", "exp", "log"}


@functools.cache
def _aten_operators() -> tuple[str, ...]:
    """The names of the dispatcher's aten operators (``_softmax``, ``lstm_cell``, ...)."""
    names = {n.split("::", 1)[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names()}
    return tuple(sorted(n for n in names if n))


def _words_in(name: str, op: str) -> bool:
    """Whether the words of ``name`` (split at "_") appear in order among those of ``op``."""
    words, theirs = name.split("_"), iter(op.split("_"))
    return op != name and all(word in theirs for word in words)


@functools.cache
def _routes(dotted: str) -> tuple[str, ...]:
    """The other dotted names under which ``dotted``'s function is reachable (none for a class,
    a method or a module; ``math.cos`` only under math, cmath and NumPy)."""
    parts = dotted.split(".")
    name = parts[-1]
    if parts[0] not in ("torch", *_MATH_ROUTES) or name[:1].isupper() or name.startswith("__"):
        return ()
    if len(parts) > 2 and parts[-2][:1].isupper():  # a method, torch.Tensor.cos: its own handle
        return ()
    if parts[0] in _MATH_ROUTES:
        prefixes = _MATH_ROUTES
    else:
        prefixes = _ROUTES + (_MATH_ROUTES if name in _MATH_NAMES else ())
    candidates = [f"{prefix}.{name}" for prefix in prefixes]
    if parts[0] == "torch":  # the operator's variants: aten._safe_softmax, aten._softmax_backward_data,
        # aten._scaled_dot_product_flash_attention_for_cpu: its words, in order, among theirs
        candidates += [f"torch.ops.aten.{op}" for op in _aten_operators() if _words_in(name, op)]
    found = []
    for route in candidates:
        if route == dotted:
            continue
        try:
            obj = _resolve(route)[2]
        except (ValueError, AttributeError, RuntimeError, ImportError):
            continue
        if not isinstance(obj, types.ModuleType):
            found.append(route)
    return tuple(found)


_ALIASES: dict[tuple, list] = {}


def _module_aliases(originals: set[int]) -> list[tuple[types.ModuleType, str]]:
    """``[(module, name)]``: where the loaded ``seqlab`` and ``torch`` modules hold one of the
    objects ``originals`` (by id). Scanning the ~800 modules is the slow part of :func:`forbid`,
    and a hidden test enters it for every call of the answer, so the places are remembered until
    another module is imported."""
    key = (frozenset(originals), len(sys.modules))
    if key not in _ALIASES:
        _ALIASES[key] = [
            (module, name)
            for prefix, module in list(sys.modules.items())
            if module is not None and prefix.split(".")[0] in ("seqlab", "torch")
            for name, value in list(vars(module).items())
            if id(value) in originals
        ]
    return _ALIASES[key]


class _RefuseOps(TorchDispatchMode):
    """Refuses the dispatcher's operators named (``"nll_loss_forward"``): every route to them,
    ``F.cross_entropy``, ``torch.ops.aten.nll_loss`` or ``torch._C._nn.nll_loss``, ends there."""

    def __init__(self, ops: set[str]):
        super().__init__()
        self.ops = ops

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in self.ops:
            raise DelegationError(
                f"this question asks you to write it yourself; your answer ran PyTorch's operator "
                f"aten.{name}, which already implements it"
            )
        return func(*args, **(kwargs or {}))


class _RefuseFunctions(TorchFunctionMode):
    """Refuses a call of the given functions (``{dotted name: function}``), an operator's overloads
    (``torch.ops.aten.lstm_cell.default``) included, whichever name the answer reached them by."""

    def __init__(self, functions: dict):
        super().__init__()
        self.names = {id(function): name for name, function in functions.items()}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = self.names.get(id(func)) or self.names.get(id(getattr(func, "overloadpacket", None)))
        if name is not None:
            raise DelegationError(
                f"this question asks you to write it yourself; your answer called {name}, "
                "which already implements it"
            )
        return func(*args, **(kwargs or {}))


@contextmanager
def forbid(namespace: dict, *dotted_names: str, also: tuple[dict, ...] = ()) -> Iterator[None]:
    """Make ``dotted_names`` (e.g. ``"seqlab.rnn.RNN"``) raise :class:`DelegationError` while the
    block runs: in their modules, every loaded ``seqlab`` / ``torch`` module, ``namespace`` and
    ``also`` (globals), the defaults and closures of the functions there, and an ``nn.Module``'s
    ``forward``; under PyTorch's other handles on the same function (:func:`_routes`); and a name
    ``"aten.<operator>"`` as the dispatcher's operator, whatever route reached it. Everything is
    put back when the block ends, even if it raises."""
    ops = {name.removeprefix("aten.") for name in dotted_names if name.startswith("aten.")}
    named = list(dict.fromkeys(name for name in dotted_names if not name.startswith("aten.")))
    routes = [r for d in named for r in _routes(d) if r not in named]
    # PyTorch's other handles are refused when called (a torch-function mode), not swapped: its own
    # modules read them at import time (torch._decomp keys tables by aten.rnn_tanh.input, imported
    # by torch.compile); math's, cmath's and NumPy's are swapped like the names given
    torch_routes = {r: _resolve(r)[2] for r in routes if r.startswith("torch.")}
    torch_routes.update({n: _resolve(n)[2] for n in named if n.startswith("torch.ops.")})
    swapped = [n for n in named if n not in torch_routes] + [r for r in routes if r not in torch_routes]
    with contextlib.ExitStack() as stack:
        if ops:
            stack.enter_context(_RefuseOps(ops))
        if torch_routes:
            stack.enter_context(_RefuseFunctions(torch_routes))
        stack.enter_context(_swap(namespace, swapped, also))
        yield


@contextmanager
def _swap(namespace: dict, dotted_names: list[str], also: tuple[dict, ...]) -> Iterator[None]:
    """:func:`forbid`'s swap of the named objects for stand-ins that refuse, and back."""
    named_first = dotted_names
    targets = [(dotted, *_resolve(dotted)) for dotted in named_first]
    # a forbidden module class is forbidden through its bases too (nn.LSTM through nn.RNNBase("LSTM",
    # ...)): every nn.Module subclass it derives from, nn.Module itself excepted
    named = {id(obj) for *_, obj in targets}
    for _, _, _, obj in list(targets):
        if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
            for base in obj.__mro__[1:]:
                if (
                    issubclass(base, torch.nn.Module)
                    and base is not torch.nn.Module
                    and id(base) not in named
                ):
                    named.add(id(base))
                    dotted = f"{base.__module__}.{base.__qualname__}"
                    targets.append((dotted, *_resolve(dotted)))
    stand_ins = {}
    for dotted, _, _, obj in targets:  # named after the first name given for it
        stand_ins.setdefault(id(obj), _Forbidden(dotted))
    originals = {id(obj) for _, _, _, obj in targets}
    undo = []

    def swap_attribute(owner, key, value):
        if isinstance(owner, type) and key not in vars(owner):  # inherited: shadow, then unshadow
            undo.append(lambda owner=owner, key=key: delattr(owner, key))
        else:
            old = vars(owner)[key] if key in vars(owner) else getattr(owner, key)  # keeps staticmethod
            undo.append(lambda owner=owner, key=key, old=old: setattr(owner, key, old))
        setattr(owner, key, value)

    def swap_item(mapping, key, value):
        undo.append(lambda mapping=mapping, key=key, old=mapping[key]: mapping.__setitem__(key, old))
        mapping[key] = value

    try:
        for _, owner, key, obj in targets:
            swap_attribute(owner, key, stand_ins[id(obj)])
        for module, key in _module_aliases(originals):
            value = vars(module).get(key)
            if id(value) in originals:
                swap_attribute(module, key, stand_ins[id(value)])
        # the namespace given, and the globals of the functions in it: a doctest runs in a copy
        # of the notebook's globals, while the answer still looks names up in the original
        spaces = {id(namespace): namespace}
        for space in also:
            spaces.setdefault(id(space), space)
        for value in list(namespace.values()):
            if isinstance(value, types.FunctionType):
                spaces.setdefault(id(value.__globals__), value.__globals__)
        for space in spaces.values():
            for key, value in list(space.items()):
                if id(value) in originals:
                    swap_item(space, key, stand_ins[id(value)])
        for value in list(namespace.values()):
            if isinstance(value, types.FunctionType):
                if value.__defaults__ and any(id(d) in stand_ins for d in value.__defaults__):
                    new = tuple(stand_ins.get(id(d), d) for d in value.__defaults__)
                    swap_attribute(value, "__defaults__", new)
                if value.__kwdefaults__ and any(id(d) in stand_ins for d in value.__kwdefaults__.values()):
                    new = {k: stand_ins.get(id(d), d) for k, d in value.__kwdefaults__.items()}
                    swap_attribute(value, "__kwdefaults__", new)
                for cell in value.__closure__ or ():
                    try:
                        content = cell.cell_contents
                    except ValueError:
                        continue
                    if id(content) in stand_ins:
                        undo.append(lambda cell=cell, old=content: setattr(cell, "cell_contents", old))
                        cell.cell_contents = stand_ins[id(content)]
        for dotted, _, _, obj in targets:
            if dotted in dotted_names and isinstance(obj, type) and issubclass(obj, torch.nn.Module):
                if obj is not torch.nn.Module:  # the bases added above keep their forward
                    swap_attribute(obj, "forward", stand_ins[id(obj)])
        yield
    finally:
        for action in reversed(undo):
            action()


def forbidding(function, namespace: dict, *dotted_names: str):
    """``function`` with each call inside :func:`forbid` ``(namespace, *dotted_names)``, e.g.
    ``rnn_forward = forbidding(rnn_forward, globals(), "seqlab.rnn.RNN", "torch.nn.RNN")``."""
    if not callable(function):
        raise AssertionError(f"the answer should be a function, got {type(function).__name__}")
    # an answer that *is* the forbidden function (``rnn_forward = torch.rnn_tanh``, or a partial
    # or method of it) holds the original object itself, which no swap in a namespace reaches
    inner = function
    while True:
        names = [n for d in dotted_names if not d.startswith("aten.") for n in (d, *_routes(d))]
        for dotted in names:
            if inner is _resolve(dotted)[2]:
                raise DelegationError(
                    f"this question asks you to write it yourself; your answer is {dotted}, "
                    "which already implements it"
                )
        unwrapped = getattr(inner, "func", None) or getattr(inner, "__func__", None)
        if unwrapped is None or unwrapped is inner:
            break
        inner = unwrapped

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        with forbid(namespace, *dotted_names, also=(getattr(function, "__globals__", namespace),)):
            return function(*args, **kwargs)

    return guarded


# ---------------------------------------------------------------------------------------------
# what grader.check shows: the message written for the student first


def student_message(doctest_output: str) -> str:
    """A failing doctest's report rewritten for a student: the check's message, the test's line that
    failed, and for an error in the student's code its lines (never the checks' machinery)."""
    failed = re.search(
        r"^Failed example:\n([\s\S]*?)^(Exception raised|Expected):\n([\s\S]*)", doctest_output, re.M
    )
    if not failed:
        return doctest_output
    example = failed.group(1).rstrip("\n")  # indented by 4, as doctest prints it
    # the first failure only: what follows it often fails because of it
    first = re.split(r"^\*{20,}$|^Trying:$", failed.group(3), maxsplit=1, flags=re.M)[0]
    rest = "\n".join(x[4:] for x in first.rstrip("\n").splitlines())
    if failed.group(2) == "Expected":
        return f"The check printed something else than expected:\n{rest}\n\nThe check that failed:\n{example}"
    lines = rest.splitlines()
    # the exception: the last line that starts at the left margin and names it, to the end
    start = max(
        (i for i, x in enumerate(lines) if re.match(r"^[A-Za-z_][\w.]*(: |$)", x)), default=len(lines) - 1
    )
    kind, _, message = "\n".join(lines[start:]).partition(": ")
    kind = kind.rsplit(".", 1)[-1]
    if kind == "AssertionError" or kind == "DelegationError":
        head = message.strip() or "a check of the test failed (it has no message)"
    else:
        head = f"your code raised {kind}: {message.strip()}"
    frames, i = [], 0
    while i < start:
        m = re.match(r'^\s+File "([^"]+)", line (\d+), in (\S+)', lines[i])
        if m and not re.search(r"doctest|otter|seqlab[/\\]exercises|site-packages|<doctest ", m.group(1)):
            code = (
                lines[i + 1].strip() if i + 1 < start and not lines[i + 1].lstrip().startswith("File") else ""
            )
            frames.append(f"    in {m.group(3)}, line {m.group(2)}" + (f": {code}" if code else ""))
        i += 1
    out = f"{head}\n\nThe check that failed:\n{example}"
    if frames:
        out += "\n\nWhere, in your code:\n" + "\n".join(frames)
    return out


def _format_note(test_file) -> str | None:
    """The names whose format only the passing test cases of ``test_file`` checked, or None
    (also None while :func:`readable_feedback`'s wrapper of otter's doctest runner is off)."""
    from otter.test_files import ok_test

    if not getattr(ok_test.run_doctest, "_seqlab_readable", False):
        return None
    names = []
    for i, result in enumerate(getattr(test_file, "test_case_results", None) or []):
        if result.passed:
            names += _FORMAT_ONLY_CASES.get(f"{test_file.name} {i}", [])
    return ", ".join(dict.fromkeys(names)) or None


def readable_feedback() -> None:
    """Make ``grader.check`` in this kernel show :func:`student_message` for a failing public test
    and ``FORMAT_ONLY`` for a format-only one (the student notebook's ``otter_ignore`` set-up cell
    calls it, so grading runs otter as it is). Calling it again does nothing."""
    from otter.test_files import abstract_test, ok_test

    if getattr(ok_test.run_doctest, "_seqlab_readable", False):
        return
    original = ok_test.run_doctest

    @functools.wraps(original)
    def run_doctest(name, doctest_string, global_environment):
        _format_checks.clear()
        passed, output = original(name, doctest_string, global_environment)
        _FORMAT_ONLY_CASES.pop(name, None)
        if passed and _format_checks:
            _FORMAT_ONLY_CASES[name] = list(dict.fromkeys(_format_checks))
        _format_checks.clear()
        return passed, (output if passed else student_message(output))

    run_doctest._seqlab_readable = True
    ok_test.run_doctest = run_doctest

    test_file = abstract_test.TestFile
    if getattr(test_file.summary, "_seqlab_readable", False):
        return
    summary, repr_html = test_file.summary, test_file._repr_html_

    @functools.wraps(summary)
    def format_summary(self, public_only: bool = False) -> str:
        text, note = summary(self, public_only), _format_note(self)
        if note is None:
            return text
        return text.replace("All test cases passed!", f"{FORMAT_ONLY} ({note})", 1)

    @functools.wraps(repr_html)
    def format_repr_html(self) -> str:
        html, note = repr_html(self), _format_note(self)
        if note is None:
            return html
        return re.sub(r"</strong> passed! \S+</p>", f"</strong>: {FORMAT_ONLY} ({note})</p>", html, count=1)

    run = ok_test.OKTestFile.run

    @functools.wraps(run)
    def format_run(self, global_environment):
        run(self, global_environment)
        if _format_note(self) is None:
            return
        for i, result in enumerate(self.test_case_results):
            names = _FORMAT_ONLY_CASES.get(f"{self.name} {i}") if result.passed else None
            if names:
                result.message = f"{FORMAT_ONLY} ({', '.join(names)})"

    format_summary._seqlab_readable = True
    ok_test.OKTestFile.run = format_run
    test_file.summary = format_summary
    test_file._repr_html_ = format_repr_html


from seqlab.exercises.harness import Draw, Question  # noqa: E402  (the harness uses the checks above)

__all__ += ["Draw", "Question"]


def check(name: str, answer, hidden: bool = False) -> None:
    """Check the student's ``answer`` to the question ``name`` (declared in
    ``seqlab.exercises.questions.<chapter>``): its public cases, or with ``hidden=True`` (the
    autograder only) its public and hidden ones (where a question's points are: docs/instructors.md);
    raises ``AssertionError`` with a message for the student.
    The forbidden implementations are looked up also in the globals ``answer`` was defined in."""
    question = Question.named(name)
    if question.arg_names == () and not callable(answer):  # a value: a function of no arguments
        answer = (lambda value: lambda: value)(answer)
    namespace = getattr(answer, "__globals__", None)
    if hidden:
        public = question
        question = question.with_hidden()
        # the hidden test passes only where every test does: its cases hold the public draws and
        # edge cases, unless its module replaces how cases are made or judged; then it reruns them
        if any(getattr(question, f) is not getattr(public, f) for f in ("draw", "oracle", "edges", "judge")):
            public.check(answer, namespace, public=True)
    question.check(answer, namespace, public=not hidden)

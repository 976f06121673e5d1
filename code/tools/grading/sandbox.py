"""Run one submission and its chapter's tests, under guard: the child process of ``grade.py``.

    python sandbox.py REQUEST.json      (the parent writes a one-time token on stdin)
    python sandbox.py --server          (grade.py: imports once, forks a process per submission)

``REQUEST.json`` (in a folder the submission cannot touch) names the submission, the chapter's
OK-format test files, the working folder, the results file and the limits. The child

1. reads everything it needs and imports torch, seqlab and friends (``--server``: once, before it
   forks the process of each submission, which then starts from here);
2. installs its guards: memory and file-size limits (``resource``), a per-cell and per-question
   alarm, an audit hook (PEP 578, cannot be removed) that refuses, while submission code runs,
   to open files outside the working folder and the Python installation, start processes or
   threads, open sockets, load C libraries, inspect frames or the garbage collector, and a
   stand-in for ``os._exit``;
3. runs the submission's code cells (``otter_ignore`` lesson cells excepted) one by one, under
   the cell time limit; a cell that fails is recorded and the next one runs;
4. puts back every function of torch, numpy, seqlab, the standard library and this grader that
   the submission replaced (and says so), and pops torch modes it left on;
5. runs each question's test cases, hidden ones included, and after each question appends a
   line ``TOKEN JSON`` to the results file (opened only while no submission code runs).

Threat model. The submission and the tests share one Python process, as with ``otter run`` and
Gradescope, because the tests call the submission's functions. The guards stop what a student can
do by editing their notebook in the ordinary ways (replacing the checks or ``torch.allclose``,
exiting, writing a fake results file, reading the hidden tests or other students' files, using
too much time or memory). They are not a security boundary against arbitrary native code: run
untrusted work from outside the class in containers (docs/instructors.md, "Grading").
"""

import _thread
import builtins
import doctest
import importlib
import io
import json
import os
import resource
import signal
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from unittest.mock import MagicMock

MEMORY_ERRORS = ("can't allocate memory", "not enough memory", "out of memory", "Cannot allocate memory")


class GradingTimeout(BaseException):
    """Raised by the alarm inside a cell or a test that runs past its time limit."""


class SubmissionExit(BaseException):
    """Raised instead of ending the process when the submission calls ``os._exit``."""


class Refused(PermissionError):
    """What the audit hook raises for an operation the grader does not allow."""


def _set_limits(request: dict) -> None:
    for limit, value in ((resource.RLIMIT_AS, request["memory_bytes"]), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_FSIZE, request["file_bytes"])):  # fmt: skip
        resource.setrlimit(limit, (int(value), int(value)))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing


def _preimport() -> None:
    """Everything the chapters' exercises import, loaded before the guards go up."""
    import matplotlib.pyplot  # noqa: F401  (its backend: MPLBACKEND=Agg, set by grade.py)
    import numpy  # noqa: F401
    import torch  # and with it torch.nn.functional and torch.testing
    import torch.func  # noqa: F401  (the exercises' oracles call modules with given weights)

    torch.set_num_threads(1)
    for module in ("attention", "block", "bpe", "corpus", "data", "decoder", "decoding", "exercises",
                   "ffn", "gpt", "gqa", "lstm", "lstmn", "masks", "metrics", "multihead", "norms",
                   "positional", "rnn", "rope", "sampling", "seq2seq", "text", "train",
                   "transformer"):  # fmt: skip
        importlib.import_module(f"seqlab.{module}")
    import IPython.display  # noqa: F401

    from seqlab.exercises.harness import _declared

    _declared()  # every chapter's question declarations (seqlab.exercises.questions)


def _load_hidden(sources: dict) -> None:
    """``seqlab_hidden`` and its chapter modules from their sources (read by grade.py from the
    autograder zip), before the guards: the tests import them; the submission's folder has none."""
    import types

    for name in sorted(sources, key=lambda n: n.count(".")):  # the package first
        module = types.ModuleType(name)
        module.__file__ = f"<autograder zip: {name}>"
        if "." not in name:
            module.__path__ = []
        sys.modules[name] = module
        exec(compile(sources[name], module.__file__, "exec"), module.__dict__)  # trusted: the zip's own
        if "." in name:
            setattr(sys.modules[name.rsplit(".", 1)[0]], name.rsplit(".", 1)[1], module)


class _Discard(io.TextIOBase):
    """``sys.stdout`` / ``sys.stderr`` while submission code runs: keeps nothing, costs nothing (no
    file, so nothing for the garbage collector to close while the submission's code runs)."""

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        return len(text) if isinstance(text, str) else 0


def _watched() -> list[tuple[str, object]]:
    """Modules and classes whose functions a submission must not replace (name, object)."""
    import numpy.testing
    import torch

    names = ["builtins", "os", "posix", "sys", "_thread", "threading", "math", "json", "json.encoder", "re",
             "io", "doctest", "traceback", "importlib", "contextlib", "signal", "resource", "numpy",
             "numpy.testing", "numpy.linalg", "torch", "torch.testing", "torch.nn", "torch.nn.functional",
             "torch.linalg", "torch.autograd", "torch.overrides", "__main__"]  # fmt: skip
    names += sorted(n for n in sys.modules if n.split(".")[0] in ("seqlab", "seqlab_hidden"))
    watched = [(n, sys.modules[n]) for n in names if n in sys.modules]
    from seqlab.exercises.harness import Question  # the checks of every question

    classes = [torch.Tensor, torch.nn.Module, torch.nn.Parameter, json.JSONEncoder, io.StringIO,
               doctest.DocTestParser, doctest.Example, numpy.testing.TestCase, Question]  # fmt: skip
    watched += [(f"{c.__module__}.{c.__qualname__}", c) for c in classes]
    return watched


def _snapshot(watched) -> dict:
    """{(owner name, attribute): (owner, value)} for every callable or module attribute."""
    saved = {}
    for owner_name, owner in watched:
        for key, value in list(vars(owner).items()):
            if callable(value) or isinstance(value, type(sys)):
                saved[(owner_name, key)] = (owner, value)
        if isinstance(owner, type):  # a class: a new attribute can shadow an inherited one
            saved[(owner_name, _KEYS)] = (owner, frozenset(vars(owner)))
        elif sys.modules.get(owner_name) is owner:
            saved[("sys.modules", owner_name)] = (None, owner)
    return saved


def _made_by(library: str):
    """A test of whether a new value of a watched attribute is the library's own wrapper of the old
    one: a function whose code lies under ``library`` (a folder) and whose ``__wrapped__`` chain
    reaches the old value. PyTorch's compiler, when a submission imports it (``torch._dynamo``,
    ``torch.compile``), wraps ``torch.manual_seed`` so: that is PyTorch, not tampering."""
    realpath, getattr_, sep = os.path.realpath, getattr, os.sep

    def wrapper_of(new, old) -> bool:
        code = getattr_(new, "__code__", None)
        if code is None or not realpath(code.co_filename).startswith(library + sep):
            return False
        if any(cell.cell_contents is old for cell in getattr_(new, "__closure__", None) or ()):
            return True  # torch._dynamo's patched nn.Module.__init__ calls the old one it closes over
        inner = new
        for _ in range(8):
            inner = getattr_(inner, "__wrapped__", None)
            if inner is None:
                return False
            if inner is old:
                return True
        return False

    return wrapper_of


# attributes PyTorch's compiler adds to nn.Module when it loads (the mark that it patched __init__)
PYTORCH_MARKS = frozenset({"___needs_generation_tag_patch"})


def _restore(
    saved: dict,
    vars=vars,
    setattr=setattr,
    delattr=delattr,
    set=set,
    sorted=sorted,
    modules=sys.modules,
    benign=lambda new, old: False,
    pytorch_marks=PYTORCH_MARKS,
) -> list[str]:
    """Put back every saved attribute that was replaced or deleted; the names of those. A new value
    that ``benign(new, old)`` accepts (PyTorch's own wrapper) becomes the saved one instead."""
    changed = []
    for (owner_name, key), (owner, value) in saved.items():
        if owner is None:
            if modules.get(key) is not value:
                modules[key] = value
                changed.append(f"sys.modules[{key!r}]")
            continue
        if key is _KEYS:
            marks = {k for k in set(vars(owner)) - value if k in pytorch_marks}
            if marks:
                saved[(owner_name, key)] = (owner, value | marks)
            for added in sorted(set(vars(owner)) - value - marks):
                changed.append(f"{owner_name}.{added}")
                try:
                    delattr(owner, added)
                except (TypeError, AttributeError):
                    pass
            continue
        current = vars(owner).get(key, _MISSING)
        if current is not value and current is not _MISSING and benign(current, value):
            saved[(owner_name, key)] = (owner, current)
            continue
        if current is not value:
            changed.append(f"{owner_name}.{key}")
            try:
                setattr(owner, key, value)
            except (TypeError, AttributeError):
                pass
    return changed


_MISSING = object()
_KEYS = object()  # the snapshot key under which a class's attribute names are kept
_REAL_EXIT = os._exit
_ERR_FD = 2  # the parent's log of this child; fd 2 itself goes to /dev/null while grading


def _reset_torch_state() -> list[str]:
    """Leave torch as the tests expect it; the names of what had to be undone."""
    import torch

    undone = []
    while torch._C._len_torch_function_stack() > 0:
        torch._C._pop_torch_function_stack()
        undone.append("a torch function mode")
    while torch._C._len_torch_dispatch_stack() > 0:
        torch._C._pop_torch_dispatch_stack()
        undone.append("a torch dispatch mode")
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    return undone


def _make_guard(workdir: str, read_roots: list[str], violations: list[str]):
    """The audit hook and the switch between grader and submission (closures only).

    Frames: library code may look at its own frames (``torch.manual_seed`` formats a stack), but a
    frame of the submission's code or of this grader is refused, so that the submission cannot
    climb from its own frame to the grader's (``f_back``) and reach its token or its switch.
    """
    realpath, join, getcwd, isfile = os.path.realpath, os.path.join, os.getcwd, os.path.isfile
    state = {"submission": False, "busy": False}
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    workdir = realpath(workdir)
    roots = tuple(realpath(r) for r in read_roots)
    grader_files = {realpath(__file__)}
    devices = {"/dev/null", "/dev/urandom", "/dev/random", "/dev/zero"}
    refused_always = {
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
        "os.forkpty", "os.kill", "os.killpg", "pty.spawn", "socket.connect", "socket.bind",
        "socket.sendto", "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "resource.setrlimit",
        "resource.prlimit", "sys._current_frames", "sys.settrace", "sys.setprofile",
        "gc.get_objects", "gc.get_referrers", "gc.get_referents", "webbrowser.open", "urllib.Request",
        "code.__new__", "function.__new__", "os.startfile", "sys.remote_exec", "signal.pthread_kill",
    }  # fmt: skip
    library_may = {"function.__new__", "code.__new__"}
    frame_attributes = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
    path_events = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                   "os.link", "os.symlink", "os.truncate", "os.utime", "shutil.rmtree",
                   "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
                   "shutil.move", "os.chflags", "os.setxattr", "os.removexattr"}  # fmt: skip
    list_events = {"os.listdir", "os.scandir", "glob.glob", "os.walk", "os.fwalk"}

    def inside(path, places) -> bool:
        return any(path == p or path.startswith(p + os.sep) for p in places)

    def resolve(path) -> str:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return realpath(join(getcwd(), str(path)))

    def library_frame(frame) -> bool:
        if frame is None:
            return True
        name = frame.f_code.co_filename
        if name.startswith("<") or not isfile(name):
            return name in ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
        where = realpath(name)
        return where not in grader_files and inside(where, roots)

    def refuse(what: str):
        if len(violations) < 20 and what not in violations:
            violations.append(what)
        raise Refused(f"the grader does not allow this: {what}")

    def check(event, args):
        if event == "open":
            path, mode, flags = args[0], args[1], args[2]
            if path is None or isinstance(path, int):
                return
            where = resolve(path)
            writes = (mode is not None and any(c in mode for c in "wax+")) or bool(flags & write_flags)
            if inside(where, (workdir,)) or where in devices:
                return
            if writes:
                refuse(f"writing {where} (outside the submission's folder)")
            if not inside(where, roots) and not where.startswith(("/proc/self", "/sys/devices/system")):
                refuse(f"reading {where} (outside the submission's folder)")
        elif event in path_events:
            for path in args:
                if isinstance(path, (str, bytes)) and not inside(resolve(path), (workdir,)):
                    refuse(f"{event} on {resolve(path)} (outside the submission's folder)")
        elif event in list_events:
            path = args[0] if args else "."
            if isinstance(path, (str, bytes)):
                where = resolve(path or ".")
                if not inside(where, (workdir, *roots)):
                    refuse(f"listing {where} (outside the submission's folder)")
        elif event == "sys._getframe":
            if not library_frame(args[0]):
                refuse("inspecting the frames of the submission or of the grader (sys._getframe)")
        elif event == "object.__getattr__":
            if len(args) > 1 and args[1] in frame_attributes:
                frame = getattr(args[0], args[1], None)
                if not library_frame(frame):
                    refuse(f"inspecting the frames of the submission or of the grader ({args[1]})")
        elif event in refused_always:
            refuse(event)

    getframe = sys._getframe

    def hook(event, args):
        if not state["submission"] or state["busy"]:
            return
        state["busy"] = True
        try:
            # PyTorch's compiler (torch.compile, torch._dynamo) makes functions from code objects
            # of its own: allowed where the frame that does it is the library's
            if event in library_may and library_frame(getframe(1)):
                return
            check(event, args)
        finally:
            state["busy"] = False

    def switch(submission: bool) -> None:
        state["submission"] = submission

    start_thread = _thread.start_new_thread

    def no_threads(*args, **kwargs):
        """Stands in for ``_thread.start_new_thread``: a thread of the submission would go on
        running while the grader works (without the hook's limits), so the submission gets none."""
        if state["submission"]:
            refuse("starting a thread")
        return start_thread(*args, **kwargs)

    return hook, switch, no_threads


def _exit_stand_in(code=0):
    raise SubmissionExit(f"os._exit({code})")


def _describe(exc: BaseException, limits: dict) -> tuple[str, str]:
    """(kind, one-line message) for an exception raised by submission code."""
    text = str(exc).strip().splitlines()[0][:240] if str(exc).strip() else ""
    if isinstance(exc, GradingTimeout):
        return "timeout", f"ran past the time limit ({limits['cell_timeout']:g} s)"
    if isinstance(exc, MemoryError) or any(m in str(exc) for m in MEMORY_ERRORS):
        return "memory", f"ran out of memory (limit {limits['memory_bytes'] / 2**30:g} GiB)"
    if isinstance(exc, SubmissionExit):
        return "exit", f"called {text}; the grader went on"
    if isinstance(exc, SystemExit):
        return "exit", f"called sys.exit({exc.code!r}); the grader went on"
    if isinstance(exc, Refused):
        return "refused", text
    return "error", f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _make_stopper(switch):
    """(arm, disarm): a time limit for submission code that even ``except BaseException`` obeys.

    The alarm raises :class:`GradingTimeout` at the limit and every 0.25 s after. If the code
    swallows it and runs on for a second more, every line of the submission's own code (and of
    the tests) raises it too, through a trace function, so an ``except`` clause re-raises.
    """
    setitimer, itimer, settrace = signal.setitimer, signal.ITIMER_REAL, sys.settrace
    state = {"count": 0, "tracing": False}

    def owned(frame) -> bool:
        return frame.f_code.co_filename.startswith(("<cell", "<test"))

    def tracer(frame, event, arg):
        if owned(frame):
            raise GradingTimeout()
        return None

    def alarm(signum, frame):
        state["count"] += 1
        if state["count"] >= 5 and not state["tracing"]:
            switch(False)
            state["tracing"] = True
            settrace(tracer)
            while frame is not None:
                if owned(frame):
                    frame.f_trace = tracer
                frame = frame.f_back
            switch(True)
        raise GradingTimeout()

    def arm(seconds: float) -> None:
        state["count"] = 0
        signal.signal(signal.SIGALRM, alarm)
        setitimer(itimer, float(seconds), 0.25)

    def disarm() -> None:
        setitimer(itimer, 0)
        if state["tracing"]:
            settrace(None)
            state["tracing"] = False

    return arm, disarm


def _make_runner(env: dict, limits: dict, switch, tamper_log: list[str], saved: dict, library: str = ""):
    """(run, run_case, check_world), closures: everything they use is bound now, not looked up
    later, when the submission may have replaced it."""
    parse, example_type = doctest.DocTestParser().parse, doctest.Example
    compile_, exec_, discard = builtins.compile, builtins.exec, _Discard
    string_io, stdout_to, stderr_to = io.StringIO, redirect_stdout, redirect_stderr
    describe, restore, reset = _describe, _restore, _reset_torch_state
    benign = _made_by(library) if library else (lambda new, old: False)
    # the tests' one function, ``check("question", answer)``: each test case runs in a copy of the
    # submission's globals (as otter runs them) holding the real one, whatever the notebook named so
    from seqlab.exercises import check as real_check

    dict_ = dict

    timeout = float(limits["test_timeout"])
    arm, disarm = _make_stopper(switch)

    def run(code, seconds: float, namespace: dict | None = None) -> BaseException | None:
        """Run submission code, guarded and timed (in ``env``, or ``namespace``); what it raised."""
        arm(seconds)
        switch(True)
        try:
            exec_(code, env if namespace is None else namespace)
        except BaseException as exc:  # noqa: BLE001 - anything submission code raises is its own
            return exc
        finally:
            switch(False)
            disarm()
            sys.stdout = sys.stderr = discard()
        return None

    def run_case(body: str) -> tuple[bool, str, str]:
        """(passed, kind, message) of one test case run in the submission's namespace."""
        space = dict_(env)
        space["check"] = real_check
        for number, example in enumerate((e for e in parse(body) if isinstance(e, example_type)), 1):
            output = string_io()
            with stdout_to(output), stderr_to(output):
                failure = run(compile_(example.source, "<test>", "single"), timeout, space)
            if failure is not None:
                kind, message = describe(failure, {**limits, "cell_timeout": timeout})
                line = example.source.strip().splitlines()[0][:160]
                return False, kind, f"line {number}: {line}\n{message}"
            if output.getvalue().strip() != example.want.strip():
                got = output.getvalue().strip()[:200]
                return False, "error", f"line {number} printed {got!r}, expected {example.want.strip()!r}"
        return True, "", ""

    def check_world() -> None:
        """Undo what the submission changed in the grader's world; log it."""
        for name in restore(saved, benign=benign) + reset():
            if name not in tamper_log:
                tamper_log.append(name)

    return run, run_case, check_world


def _read_questions(tests: list, ok_test_file) -> list[tuple[str, list, bool]]:
    """(question, [(case, body, hidden, points)], all_or_nothing) from the chapter's OK test files."""
    questions = []
    for name, source in tests:
        spec: dict = {}
        exec(source, spec)  # the chapter's own test file, trusted
        test_file = ok_test_file.from_spec(spec["test"], path=name)
        cases = [(c.name, c.body, bool(c.hidden), float(c.points)) for c in test_file.test_cases]
        questions.append((test_file.name, cases, bool(test_file.all_or_nothing)))
    return questions


def _code_cells(path: str) -> list[tuple[int, str]]:
    """(index, source) of the submission's code cells, lesson cells (``otter_ignore``) left out."""
    with open(path, encoding="utf-8") as handle:
        cells = enumerate(json.load(handle)["cells"])  # a list: grade.py grades no other file
    code = [(i, c) for i, c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    code = [(i, c) for i, c in code if "otter_ignore" not in (c.get("metadata") or {}).get("tags", [])]
    return [(i, "".join(c.get("source", ""))) for i, c in code]


def _run_cells(cells, run, limits: dict) -> list[tuple]:
    """Run the submission's cells one by one, each under the cell time limit; the problems,
    ``(kind, cell index, message)``: a cell that fails costs only its own question."""
    from IPython.core.inputtransformer2 import TransformerManager  # magics: get_ipython() calls

    problems = []
    for index, source in cells:
        try:
            code = compile(TransformerManager().transform_cell(source), f"<cell {index}>", "exec")
        except Exception as exc:  # noqa: BLE001 - a cell the transformer or the compiler cannot read
            syntax = isinstance(exc, SyntaxError)
            problems.append(("syntax", index, f"SyntaxError: {exc.msg} (line {exc.lineno})" if syntax
                             else f"{type(exc).__name__}: {exc}"[:240]))  # fmt: skip
            continue
        if (failure := run(code, limits["cell_timeout"])) is not None:
            kind, message = _describe(failure, limits)
            problems.append((kind, index, message))
    return problems


def _grade_questions(questions, run_case, check_world, emit) -> None:
    """Run every test case of every question and emit one signed result line per question."""
    for name, cases, all_or_nothing in questions:
        outcomes = []
        for case_name, body, hidden, points in cases:
            passed, kind, message = run_case(body)
            code = "" if hidden else "\n".join(x[4:] for x in body.splitlines() if x[:4] in (">>> ", "... "))
            outcomes.append({"name": case_name, "hidden": hidden, "points": points, "passed": passed,
                             "kind": kind, "message": message, "code": code})  # fmt: skip
            check_world()
        possible = sum(o["points"] for o in outcomes)
        score = sum(o["points"] for o in outcomes if o["passed"])
        if all_or_nothing and score < possible:
            score = 0.0
        emit("question", {"name": name, "score": score, "possible": possible, "cases": outcomes})


def main() -> int:
    """One submission in this fresh process: ``sandbox.py REQUEST.json``, the token on stdin."""
    with open(sys.argv[1], encoding="utf-8") as handle:
        request = json.load(handle)
    token = sys.stdin.readline().strip()
    os.close(0)
    _set_limits(request)
    _preimport()
    return _grade(request, token)


def serve() -> None:
    """``sandbox.py --server``: import once, then grade each submission in a process of its own,
    forked from this one (the imports are half of a submission's time; a fork copies them).

    Reads one request a line on stdin, ``{"request", "token", "stderr", "tmpdir"}`` (the request
    file as ``main`` reads it, the token, the child's log file and temporary folder), forks a child
    that runs it exactly as ``main`` does after its imports (a session of its own, the limits set in
    the child), writes ``started PID`` on stdout, waits for it and writes ``ended PID CODE`` (the
    exit code as ``subprocess`` gives it: minus the signal that killed it). One child at a time;
    this process runs no submission code, so every child starts from the same state. The child
    closes the pipes to the grader before anything of the submission runs."""
    _preimport()
    import tempfile

    import otter.test_files  # noqa: F401  (what _grade imports, before the stand-in)

    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    while line := _read_line(requests):
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child: nothing of the grader's pipes, a log of its own
            try:
                os.setsid()
                requests.close()
                os.close(replies)
                log = os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(log, 2)
                os.close(log)
                os.environ["TMPDIR"] = job["tmpdir"]
                tempfile.tempdir = None
                sys.argv[1:] = [job["request"]]  # as a fresh ``sandbox.py REQUEST.json`` sees it
                with open(job["request"], encoding="utf-8") as handle:
                    request = json.load(handle)
                _set_limits(request)
                _grade(request, job["token"])
            except BaseException:  # noqa: BLE001 - the grader itself failed; the parent reads stderr
                os.write(_ERR_FD, traceback.format_exc().encode())
            _REAL_EXIT(3)
        os.write(replies, f"started {pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        os.write(replies, f"ended {pid} {os.waitstatus_to_exitcode(status)}\n".encode())


def _read_line(stream) -> bytes:
    """One line from an unbuffered binary stream (nothing read past it: a child gets no request of
    another submission in a buffer); ``b""`` at the end."""
    line = bytearray()
    while (byte := stream.read(1)) and byte != b"\n":
        line += byte
    return bytes(line)


def _grade(request: dict, token: str) -> int:
    """Grade the request's submission in this process, its imports done (see the module docstring)."""
    _load_hidden(request.get("hidden", {}))
    from otter.test_files import OKTestFile  # before the stand-in for otter replaces it

    sys.modules["otter"] = MagicMock()  # otter.Notebook(...).check(...) does nothing here

    questions = _read_questions(request["tests"], OKTestFile)
    cells = _code_cells(request["notebook"])

    results_path = request["results"]
    limits = {k: request[k] for k in ("cell_timeout", "test_timeout", "memory_bytes")}
    dumps, write_open, real_exit = json.dumps, open, _REAL_EXIT
    workdir = os.path.realpath(request["workdir"])
    os.chdir(workdir)
    violations: list[str] = []
    tamper_log: list[str] = []

    def emit(kind: str, payload: dict) -> None:  # a line signed with the token
        frame = {"kind": kind, **payload, "refused": list(violations), "replaced": list(tamper_log)}
        with write_open(results_path, "a", encoding="utf-8") as out:
            out.write("\n" + token + " " + dumps(frame) + "\n")

    site = [p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p]
    package = os.path.dirname(os.path.dirname(sys.modules["seqlab"].__file__))  # preimported
    read_roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__), package, *site}
    hook, switch, no_threads = _make_guard(workdir, read_roots, violations)

    # stand-ins go in before the snapshot, so that the snapshot is the world the tests expect
    os._exit = _exit_stand_in
    import posix
    import threading

    posix._exit = _exit_stand_in
    _thread.start_new_thread = threading._start_new_thread = no_threads
    env: dict = {"__name__": "__main__", "__builtins__": builtins, "get_ipython": MagicMock()}
    saved = _snapshot(_watched())
    library = os.path.realpath(os.path.dirname(sys.modules["torch"].__file__))
    run, run_case, check_world = _make_runner(env, limits, switch, tamper_log, saved, library)
    global _ERR_FD
    _ERR_FD = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = sys.stderr = _Discard()
    sys.addaudithook(hook)

    cell_problems = _run_cells(cells, run, limits)
    check_world()
    emit("cells", {"problems": cell_problems})
    _grade_questions(questions, run_case, check_world, emit)
    emit("done", {})
    real_exit(0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--server"]:
        serve()
        sys.exit(0)
    try:
        main()
    except BaseException:  # noqa: BLE001 - the grader itself failed; the parent reads stderr
        os.write(_ERR_FD, traceback.format_exc().encode())
        _REAL_EXIT(3)

"""python3 -m irtrace: the command-line face of the Python package.

    python3 -m irtrace trace [-o FILE] MODULE.py FUNCTION [ARG...]

runs FUNCTION of the Python file MODULE.py on arguments written as irt-trace
takes them (literals, or @FILE.npy) and writes its trace. Exit status 0 (the
function returned), 1 (it failed: its trace is still written; or the module,
an argument file or the output could not be used), 2 (usage). Diagnostics are
one line on standard error, "irtrace: error: ...", naming the file; see
`man irtrace-python`.
"""
import argparse
import importlib.machinery
import importlib.util
import inspect
import os
import shutil
import stat
import sys
import tempfile
import types

PROG = "python3 -m irtrace"
NAME = "irtrace"


class UsageError(Exception):
    """Exit status 2."""


class Failure(Exception):
    """Exit status 1."""


def _error(msg):
    sys.stderr.write(f"{NAME}: error: {msg}\n")


class _Parser(argparse.ArgumentParser):
    """argparse with the tools' diagnostics: "irtrace: error: ..." and a
    pointer to --help, exit status 2."""

    def error(self, message):
        raise UsageError(message)


def _count(text):
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'")
    return int(text)


def _version():
    from . import __version__
    return f"{PROG} (irtrace) {__version__}"


def _parser():
    p = _Parser(prog=PROG, description="Record Python functions as irtrace traces.",
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="Run '%s trace --help' for the trace command.\n\n"
                       "See irtrace-python(1)." % PROG)
    p.add_argument("--version", action="version", version=_version(),
                   help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    t = sub.add_parser(
        "trace", prog=PROG + " trace",
        usage="%(prog)s [options] MODULE.py FUNCTION [ARG ...]",
        help="run a function of a Python file and write its trace",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run FUNCTION of the Python file MODULE.py on the given arguments and\n"
                    "write its trace (an extended Wengert list) to standard output or FILE.",
        epilog="A failing function still leaves its complete trace (exit status 1).\n"
               "Exit status: 0 ok, 1 failure, 2 usage.\n\n"
               "See irtrace-python(1).")
    t.add_argument("module", metavar="MODULE.py", nargs="?",
                   help="the Python file that defines FUNCTION")
    t.add_argument("function", metavar="FUNCTION", nargs="?", help="the function to call (a dotted name "
                   "reaches a class's static method or a submodule's function)")
    t.add_argument("args", metavar="ARG", nargs="*",
                   help="arguments as irt-trace reads them: literals (2, 2.0, true, \"s\", "
                        "[1.0, 2.0], [1 2; 3 4], (1, 2.0), nothing) or @FILE.npy for a NumPy "
                        "array; put -- before the arguments if one starts with '-' and is not "
                        "a number")
    t.add_argument("-o", "--output", metavar="FILE", default="-",
                   help="write the trace to FILE (default: standard output); FILE.zst is "
                        "zstd-compressed")
    t.add_argument("--seed", metavar="N", type=_count,
                   help="seed Python's random and numpy.random before the run (default: "
                        "their own seeding)")
    t.add_argument("--max-depth", metavar="N", type=_count, default=0,
                   help="record calls at nesting level N or deeper (the root is level 1) as "
                        "primitives")
    t.add_argument("--primitive", metavar="NAME", action="append", default=[],
                   help="record calls of the module's function NAME as primitives (repeatable)")
    t.add_argument("--tag-random", action="store_true",
                   help="tag random draws with metadata random = \"uniform\"/\"normal\"")
    t.add_argument("--version", action="version", version=_version(),
                   help="print the version and exit")
    t.add_argument("-f", "--force", action="store_true",
                   help="write the binary trace to standard output even when it is a terminal")
    return p


def _load_module(path):
    try:
        st = os.stat(path)
    except OSError as e:
        raise Failure(f"'{path}': {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise Failure(f"'{path}': is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise Failure(f"'{path}': not a regular file")
    name = os.path.splitext(os.path.basename(path))[0]
    if not name.isidentifier() or name in sys.modules:
        name = "__irtrace_module__"
    # As `python3 MODULE.py` would: its directory comes first on the path.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise Failure(f"{path}:{e.lineno}:{e.offset}: SyntaxError: {e.msg}") from None
    except Exception as e:  # the module's own top-level code failed
        raise Failure(f"'{path}': importing it raised {_describe(e)}") from None
    return module


def _describe(e):
    msg = str(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _function(module, path, dotted):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            defined = sorted(k for k, v in vars(module).items()
                             if isinstance(v, types.FunctionType) and v.__module__ == module.__name__)
            also = f" (it defines {', '.join(defined)})" if defined else ""
            raise UsageError(f"'{path}' defines no function '{dotted}'{also}")
    if not isinstance(obj, types.FunctionType):
        raise UsageError(f"'{path}': '{dotted}' is not a Python function")
    return obj


def _check_arity(f, name, n):
    params = inspect.signature(f).parameters.values()
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(1 for p in positional if p.default is p.empty)
    most = len(positional)
    if any(p.kind == p.KEYWORD_ONLY and p.default is p.empty for p in params):
        raise UsageError(f"function '{name}' has keyword-only parameters without defaults")
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        if n >= required:
            return
        takes, plural = f"at least {required}", "" if required == 1 else "s"
    elif required <= n <= most:
        return
    else:
        takes = str(most) if required == most else f"{required} to {most}"
        plural = "" if most == 1 else "s"
    raise UsageError(f"function '{name}' takes {takes} argument{plural}, {n} given")


def _arguments(texts):
    from . import _native
    out = []
    for i, text in enumerate(texts, 1):
        try:
            out.append(_native.parse_argument(text))
        except ValueError as e:
            raise UsageError(f"argument {i}: {e}") from None
        except _native.TraceError as e:
            raise Failure(f"argument {i}: {e}") from None
    return out


def _where(e, trace_path, module_path):
    """FILE:LINE of the statement that raised: the file of the innermost
    traced function (the globals its instrumented code runs with), the line
    of the trace's innermost Error node."""
    where = module_path
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<irtrace "):
            where = tb.tb_frame.f_globals.get("__file__") or where
        tb = tb.tb_next
    if os.path.abspath(where) == os.path.abspath(module_path):
        where = module_path  # as the command line names it
    line = _error_line(trace_path)
    return f"{where}:{line}" if line else f"'{where}'"


def _error_line(trace_path):
    """The source line of the innermost failure of a failed trace: down from
    the root through each call that ends in an Error node right after a
    failed nested call at the same place (loops only, no recursion)."""
    import irtrace
    try:
        node = irtrace.load(trace_path).root
        while True:
            kids = node.children
            if not kids or kids[-1].kind != "Error":
                return None
            last = kids[-1]
            prev = kids[-2] if len(kids) > 1 else None
            if (prev is not None and prev.is_call and prev.children[-1].kind == "Error"
                    and prev.location == last.location):
                node = prev
                continue
            return last.location["line"] or None
    except Exception:  # a line number is a courtesy, not a reason to fail
        return None


class _Target:
    """Where the trace goes. A regular file (or a new one) is recorded under
    a temporary name in its directory and renamed into place; standard
    output, a FIFO or a device are written after the run, from a temporary
    file (the trace is read back before it is handed on)."""

    def __init__(self, output, force):
        self.output = output
        self.stream = None
        if output == "-":
            if sys.stdout.isatty() and not force:
                raise UsageError("refusing to write a binary trace to a terminal; use -o FILE, "
                                 "a pipe, or --force")
            self.stream = sys.stdout.buffer
            self.dir = tempfile.mkdtemp(prefix="irtrace-")
            self.name = "trace.fb"
        else:
            try:
                st = os.stat(output)
            except OSError:
                st = None
            if st is not None and stat.S_ISDIR(st.st_mode):
                raise Failure(f"'{output}': is a directory")
            base = os.path.basename(output)
            self.name = base if base else "trace.fb"
            if st is not None and not stat.S_ISREG(st.st_mode):
                self.dir = tempfile.mkdtemp(prefix="irtrace-")
                self.stream = output
            else:
                parent = os.path.dirname(output) or "."
                try:
                    self.dir = tempfile.mkdtemp(prefix=".irtrace-", dir=parent)
                except OSError as e:
                    raise Failure(f"'{output}': cannot create: {e.strerror}") from None
        self.path = os.path.join(self.dir, self.name)

    def written(self):
        return os.path.exists(self.path)

    def commit(self):
        try:
            if self.stream is None:
                os.replace(self.path, self.output)
            elif isinstance(self.stream, str):
                with open(self.path, "rb") as src, open(self.stream, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            else:
                with open(self.path, "rb") as src:
                    shutil.copyfileobj(src, self.stream)
                self.stream.flush()
        except BrokenPipeError:
            # The reader went away (as with `| head`): it has what it wanted.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise Failure(None) from None
        except OSError as e:
            raise Failure(f"'{self.output}': {e.strerror}") from None

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def _trace(opts):
    import irtrace
    if opts.function is None:
        raise UsageError("MODULE.py and FUNCTION are required")
    module = _load_module(opts.module)
    f = _function(module, opts.module, opts.function)
    _check_arity(f, opts.function, len(opts.args))
    primitives = []
    for name in opts.primitive:
        try:
            primitives.append(_function(module, opts.module, name))
        except UsageError:
            raise UsageError(f"'{opts.module}' defines no function '{name}' to treat as "
                             "primitive") from None
    context = irtrace.Context(max_depth=opts.max_depth, primitives=primitives,
                              tag_random=opts.tag_random)
    args = _arguments(opts.args)
    target = _Target(opts.output, opts.force)
    if opts.seed is not None:
        import random
        import numpy
        random.seed(opts.seed)
        numpy.random.seed(opts.seed % 2**32)
    try:
        try:
            irtrace.track(f, *args, out=target.path, context=context)
            failed = None
        except irtrace.UnsupportedSyntax as e:
            first, _, rest = str(e).partition("\n")
            raise Failure(first + ("\n" + rest.rstrip("\n") if rest else "")) from None
        except irtrace.TraceError as e:
            raise Failure(str(e)) from None
        except Exception as e:
            if not target.written():
                raise Failure(f"'{opts.module}': {opts.function}: {_describe(e)}") from None
            failed = (e, _where(e, target.path, opts.module))
        target.commit()
        if failed is not None:
            raise Failure(f"{failed[1]}: {_describe(failed[0])} (the trace of {opts.function} "
                          f"is written)")
    finally:
        target.cleanup()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = _parser().parse_args(argv)
        if opts.command is None:
            raise UsageError("a command is required: trace")
        _trace(opts)
        return 0
    except UsageError as e:
        _error(str(e))
        _error(f"run '{PROG}{' trace' if 'trace' in argv else ''} --help' for usage")
        return 2
    except Failure as e:
        if e.args[0] is not None:
            _error(e.args[0])
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

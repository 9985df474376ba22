"""What a compiler command line will do: link, compile only, or only print information.

Why: a build system calls its compiler in many shapes (CMake links its probes with `-v`,
autoconf preprocesses with `-E`, asks `--version` and `-print-*`, passes `@rsp` response
files), and the wrapper must add the tracer's link flags exactly when clang runs the linker,
the compile flags whenever it compiles or preprocesses, and nothing when it only prints.
"""

from __future__ import annotations

import shlex
from enum import Enum
from pathlib import Path


class Mode(Enum):
    LINK = "link"         # clang runs the linker: compile flags and the tracer libraries
    COMPILE = "compile"   # compile, preprocess, assemble, dependencies: compile flags only
    INFO = "info"         # nothing is compiled (--version, -print-*, no input): unchanged


# Options after which clang stops before the linker.
_STOP_BEFORE_LINK = {"-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "--precompile", "--analyze", "-r",
                     "-emit-ast"}
# Options that make clang print something and compile nothing, whatever else is given.
_INFO_ONLY = {"--version", "--help", "--help-hidden", "-help", "-dumpversion", "-dumpmachine",
              "-dumpfullversion"}
_INFO_PREFIXES = ("-print-", "--print-")
# Options whose value is the next argument (clang's "Separate" spellings people use).
_TAKES_VALUE = {
    "-o", "-x", "-MF", "-MT", "-MQ", "-MJ", "-I", "-D", "-U", "-L", "-l", "-include", "-imacros",
    "-isystem", "-idirafter", "-iquote", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot",
    "-cxx-isystem", "-Xlinker", "-Xclang", "-Xassembler", "-Xpreprocessor", "-Xoffload-linker",
    "-Xopenmp-target", "-Xarch_host", "-Xarch_device", "-target", "-arch", "-T", "-u", "-z", "-e",
    "-mllvm", "-F", "-framework", "-serialize-diagnostics", "-dependency-file", "-aux-triple",
    "-rpath", "--param", "--sysroot", "-working-directory", "-B", "-A",
}
_HEADER_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".H", ".h++"}
_MAX_RSP_DEPTH = 16


def expand_response_files(args: list[str], depth: int = 0) -> list[str]:
    """`@file` arguments replaced by the arguments the file holds (GNU quoting, nested files).

    Only for classifying: the command clang runs keeps the `@file` itself. A missing file
    stays as `@file` (clang then treats it as an input file name, and so do we)."""
    out: list[str] = []
    for a in args:
        if a.startswith("@") and len(a) > 1 and depth < _MAX_RSP_DEPTH:
            try:
                text = Path(a[1:]).read_text(errors="replace")
            except OSError:
                out.append(a)
                continue
            out += expand_response_files(shlex.split(text, posix=True), depth + 1)
        else:
            out.append(a)
    return out


def inputs(args: list[str]) -> list[tuple[str, str]]:
    """The input files (sources, objects, libraries, `-` for stdin) with the `-x` language in
    force for each ("" when none was given); `-lNAME` counts as an input of the linker."""
    found: list[tuple[str, str]] = []
    lang = ""
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in _TAKES_VALUE:
            skip = True
            if a == "-x" and i + 1 < len(args):
                lang = "" if args[i + 1] == "none" else args[i + 1]
            elif a == "-l" and i + 1 < len(args):
                found.append(("-l" + args[i + 1], ""))
            continue
        if a.startswith("-x") and len(a) > 2 and a[2] != "-":
            lang = "" if a[2:] == "none" else a[2:]
            continue
        if a.startswith("-l") and len(a) > 2:
            found.append((a, ""))
        elif a == "-" or not a.startswith("-"):
            found.append((a, lang))
    return found


def _is_header(name: str, lang: str) -> bool:
    return lang.endswith("-header") or (not lang and Path(name).suffix in _HEADER_SUFFIXES)


def mode(args: list[str]) -> Mode:
    """What clang will do with this command line (response files expanded first)."""
    full = expand_response_files(args)
    if any(a in _INFO_ONLY or a.startswith(_INFO_PREFIXES) for a in full):
        return Mode.INFO
    files = inputs(full)
    if not files:
        return Mode.INFO   # `-v` alone, `-dM` without a file: clang prints or complains, compiles nothing
    if any(a in _STOP_BEFORE_LINK for a in full):
        return Mode.COMPILE
    if all(_is_header(name, lang) for name, lang in files):
        return Mode.COMPILE   # a precompiled header
    return Mode.LINK

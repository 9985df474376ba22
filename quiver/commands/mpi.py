"""Typer commands `trace mpicc` and `trace mpicxx` (registered by quiver/cli.py)."""

from __future__ import annotations

import typer

from quiver.tracer import mpicc as mpiccmod

_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": ["--help"]}


def mpicc(ctx: typer.Context) -> None:
    """Compile an MPI C program like mpicc (on clang-19), with load/store instrumentation and the PMPI tracer.

    Every argument goes to mpicc.mpich unchanged, e.g. `trace mpicc -g prog.c -o prog`;
    then `trace record -n 3 -o run.arrow -- ./prog`.
    """
    raise typer.Exit(mpiccmod.run("cc", list(ctx.args)))


def mpicxx(ctx: typer.Context) -> None:
    """Compile an MPI C++ program like mpicxx (on clang++-19), with load/store instrumentation and the PMPI tracer.

    Every argument goes to mpicxx.mpich unchanged.
    """
    raise typer.Exit(mpiccmod.run("cxx", list(ctx.args)))


mpicc.context_settings = _PASS_THROUGH
mpicxx.context_settings = _PASS_THROUGH

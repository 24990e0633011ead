"""nox sessions: the test suite on every supported Python, lint, and the documentation site.

    pip install -e '.[dev]'          # or: pip install nox
    nox                              # tests on 3.11, 3.12, 3.13, then lint and docs
    nox -s tests-3.13                # one interpreter
    nox -s tests-3.12 -- -x -k cli   # arguments after -- go to pytest
    nox -s mutation -- bbox_lark/checks/lines.py   # opt-in: mutation testing (docs/testing.md)

nox looks for ``python3.11``, ``python3.12`` and ``python3.13`` on PATH. Interpreters that
pyenv installed are used without selecting them: ``$PYENV_ROOT/versions/X.Y.*/bin`` (default
``~/.pyenv``) is put at the front of PATH here, ahead of pyenv's shims, which answer only for
the selected versions. A missing interpreter skips its session; ``nox
--error-on-missing-interpreters`` makes it fail instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

PYTHONS = ["3.11", "3.12", "3.13"]

nox.options.sessions = ["tests", "lint", "docs"]
nox.options.reuse_existing_virtualenvs = True


def _add_pyenv_interpreters() -> None:
    # pyenv's shims on PATH answer `python3.12` only for the versions selected with `pyenv
    # global`/`local` (otherwise: "command not found"), so put the installed ones first.
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for version in PYTHONS:
        found = sorted(root.glob(f"{version}.*/bin/python{version}"))
        if found:
            os.environ["PATH"] = str(found[-1].parent) + os.pathsep + os.environ["PATH"]


_add_pyenv_interpreters()


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The whole test suite."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", *(session.posargs or ["-n", "auto"]))


@nox.session(python=PYTHONS[0])
def lint(session: nox.Session) -> None:
    """ruff (check and format) and mypy --strict, as CI runs them."""
    session.install("-e", ".[test]")
    paths = ["bbox_lark", "tests", "tools", "noxfile.py"]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)
    session.run("mypy", "bbox_lark")


@nox.session(python=PYTHONS[0])
def docs(session: nox.Session) -> None:
    """The documentation site, built strictly into site/ (``-- serve`` serves it instead)."""
    session.install("-e", ".[docs]")
    session.env["NO_MKDOCS_2_WARNING"] = "1"
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", *session.posargs[1:])
    else:
        session.run("mkdocs", "build", "--strict", *session.posargs)


@nox.session(python=PYTHONS[0])
def mutation(session: nox.Session) -> None:
    """Opt-in (never in the default run nor CI's): mutmut on the modules named after ``--``, one
    at a time, each against only the tests that guard it; prints each module's score and its
    surviving mutants. ``-- --help`` lists the options (docs/testing.md, "Mutation testing")."""
    if not session.posargs:
        session.error("name the modules: nox -s mutation -- bbox_lark/checks/lines.py bbox_lark/fix")
    session.install("-e", ".[dev]")
    # CPU-heavy: every core, for minutes per module; nice keeps the machine usable meanwhile.
    session.run("nice", "-n", "10", "python", "tools/mutation.py", *session.posargs, external=True)

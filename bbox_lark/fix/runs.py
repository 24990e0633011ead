"""What ``fmt``, ``fix`` and ``redact --list`` tell of each input, and of the whole run.

Each run wraps one of :mod:`bbox_lark.fix.rewrite`'s streams of results (:func:`fmt_inputs`,
:func:`fix_inputs`, :func:`list_inputs`): iterating it gives each result with what is shown of
it (a :class:`~bbox_lark.files.said.Told`: the diff, the notes and findings, the
:class:`~bbox_lark.files.said.Said` lines), in the inputs' order; then :meth:`summary` and
:attr:`exit_code`. So each message is written here, once, and the command line only renders
(``bbox_lark.cli.commands.rewriting``). A bad combination of options raises
:class:`~bbox_lark.errors.ConfigError` (exit 2). Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from bbox_lark.checks.workflow import EXIT_OK, EXIT_USAGE
from bbox_lark.errors import ConfigError
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.runner import Jobs
from bbox_lark.files.said import Said, Told
from bbox_lark.fix.framework import Fixer
from bbox_lark.fix.rewrite import Fixing, Formatting, Listing, fix_inputs, fmt_inputs, list_inputs
from bbox_lark.syntax.source import shown_text


class FmtRun:
    """A ``fmt`` run (:func:`fmt_run`)."""

    def __init__(
        self, inputs: Sequence[FoundInput], *, check: bool, diff: bool, force: bool, jobs: Jobs | None
    ) -> None:
        self._inputs = inputs
        self._check, self._diff, self._force, self._jobs = check, diff, force, jobs
        #: Files changed, unchanged and refused so far.
        self.counts = {"changed": 0, "unchanged": 0, "refused": 0}
        #: The worst exit code so far (:attr:`Formatting.exit_code`).
        self.exit_code = EXIT_OK

    def __iter__(self) -> Iterator[tuple[Formatting, Told]]:
        """Each result, and what is told of it; the formatted bytes of standard input (or a
        pipe) are in :attr:`Formatting.output`, for standard output after what is told."""
        for done in fmt_inputs(
            self._inputs, check=self._check, diff=self._diff, force=self._force, jobs=self._jobs
        ):
            self.exit_code = max(self.exit_code, done.exit_code)
            yield done, self._told(done)

    def _told(self, done: Formatting) -> Told:
        shown = shown_text(done.item.shown)
        if done.read_error is not None:
            return Told(shown, (Said(done.read_error, "error"),))
        verdict = done.verdict
        if verdict is None:  # --check, --diff
            self.counts["changed" if done.changed else "unchanged"] += 1
            would = (Said(f"would reformat {shown}"),) if done.changed and self._check else ()
            return Told(shown, would, diff=done.diff)
        if verdict.refused:
            self.counts["refused"] += 1
            return Told(shown, (verdict.said(shown, "not formatted"),), findings=verdict.errors)
        self.counts["changed" if done.changed else "unchanged"] += 1
        said: list[Said] = []
        if verdict.refusing:
            said.append(Said(f"{shown}: {len(verdict.refusing)} error(s); formatted anyway (--force)", "!"))
        if done.output is None and done.write_error is not None:
            said.append(Said(done.write_error, "error"))
        elif done.output is None and done.wrote:
            said.append(Said(f"reformatted {shown}"))
        return Told(shown, tuple(said), findings=verdict.errors)

    def summary(self) -> tuple[Said, ...]:
        """The last line: how many files were (or would be) reformatted, unchanged, refused."""
        counts = self.counts
        would = "would be " if self._check or self._diff else ""
        line = f"{counts['changed']} file(s) {would}reformatted, {counts['unchanged']} unchanged"
        if counts["refused"]:
            line += f", {counts['refused']} not formatted (errors)"
        return (Said(line),)


def fmt_run(
    inputs: Sequence[FoundInput],
    *,
    check: bool = False,
    diff: bool = False,
    force: bool = False,
    jobs: Jobs | None = 1,
) -> FmtRun:
    """``bbox-lark fmt`` over ``inputs`` (:func:`~bbox_lark.fix.rewrite.fmt_inputs`), with what
    it tells of each and in the end."""
    return FmtRun(inputs, check=check, diff=diff, force=force, jobs=jobs)


def fix_options(fixers: Sequence[Fixer], paths: Iterable[str], *, write: bool, output: Path | None) -> None:
    """Raise :class:`ConfigError` when ``fix``'s options do not go together (no fixer chosen,
    ``--write`` with ``--output``, ``--write`` with standard input)."""
    from bbox_lark.fix import FIXERS

    if not fixers:
        raise ConfigError("choose at least one fixer: " + ", ".join(f"--{name}" for name in FIXERS))
    if write and output is not None:
        raise ConfigError("--write and --output exclude each other; give one or neither")
    if write and "-" in paths:
        raise ConfigError("--write rewrites FILE in place; with - (stdin) use --output PATH")


class FixRun:
    """A ``fix`` run (:func:`fix_run`)."""

    def __init__(
        self,
        inputs: Sequence[FoundInput],
        fixers: Sequence[Fixer],
        *,
        write: bool,
        output: Path | None,
        force: bool,
        jobs: Jobs | None,
    ) -> None:
        if output is not None and len(inputs) != 1:
            given = f"{len(inputs)} inputs were given"
            raise ConfigError(f"--output writes one file, but {given}; --write rewrites each in place")
        self._inputs, self._fixers = inputs, list(fixers)
        self._write, self._output, self._force, self._jobs = write, output, force, jobs
        #: What each fixer changed so far, over every input.
        self.totals = {fixer.name: 0 for fixer in self._fixers}
        #: A dry run would change a file.
        self.dry_changes = False
        #: The worst exit code so far (:attr:`Fixing.exit_code`).
        self.exit_code = EXIT_OK

    def __iter__(self) -> Iterator[tuple[Fixing, Told]]:
        """Each result, and what is told of it."""
        for done in fix_inputs(
            self._inputs,
            self._fixers,
            write=self._write,
            output=self._output,
            force=self._force,
            jobs=self._jobs,
        ):
            self.exit_code = max(self.exit_code, done.exit_code)
            yield done, self._told(done)

    def _told(self, done: Fixing) -> Told:
        shown = shown_text(done.item.shown)
        if done.read_error is not None:
            return Told(shown, (Said(done.read_error, "error"),))
        outcome, verdict, target = done.outcome, done.verdict, done.target
        if outcome is None or verdict is None:  # a fixer failed
            return Told(shown, (Said(f"{shown}: {done.fix_error}; nothing written", "error"),))
        if target is not None and verdict.refused:
            return Told(shown, (verdict.said(shown, "not written"),), findings=verdict.errors)
        for name, changed in outcome.changes.items():
            self.totals[name] += changed
        said: list[Said] = []
        if len(self._inputs) == 1:
            said += [Said(fixer.summary(outcome.changes[fixer.name]), "done") for fixer in self._fixers]
        if target is None:
            self.dry_changes = self.dry_changes or outcome.changed
            if verdict.refused:
                said.append(verdict.said(shown, "--write would not write it"))
            return Told(shown, tuple(said), diff=outcome.diff, notes=outcome.notes, findings=verdict.errors)
        if verdict.refusing:
            said.append(Said(f"{shown}: {len(verdict.refusing)} error(s); written anyway (--force)", "!"))
        if self._write and not outcome.changed:
            said.append(Said(f"{shown}: nothing to change; not rewritten"))
        elif done.write_error is not None:
            said.append(Said(done.write_error, "error"))
        else:
            said.append(Said(f"wrote {target}"))
        return Told(shown, tuple(said), notes=outcome.notes, findings=verdict.errors)

    def summary(self) -> tuple[Said, ...]:
        """Each fixer's total over many inputs, and that a dry run wrote nothing."""
        said: list[Said] = []
        if len(self._inputs) > 1:
            count = len(self._inputs)
            said += [
                Said(f"{fixer.summary(self.totals[fixer.name])} in {count} files", "done")
                for fixer in self._fixers
            ]
        if not self._write and self._output is None and self.dry_changes:
            said.append(Said("Dry run: nothing written; --write or --output PATH applies it", "!"))
        return tuple(said)


def fix_run(
    inputs: Sequence[FoundInput],
    fixers: Iterable[Fixer],
    *,
    write: bool = False,
    output: Path | None = None,
    force: bool = False,
    jobs: Jobs | None = 1,
) -> FixRun:
    """``bbox-lark fix`` over ``inputs`` (:func:`~bbox_lark.fix.rewrite.fix_inputs`), with what it
    tells of each and in the end; :class:`ConfigError` when ``output`` is given for other than
    one input."""
    return FixRun(inputs, list(fixers), write=write, output=output, force=force, jobs=jobs)


class ListRun:
    """A ``redact --list`` run (:func:`list_run`): iterating it gives each input's result and
    what is said of it (the lines themselves are the output, :attr:`Listing.lines`)."""

    def __init__(self, inputs: Sequence[FoundInput], *, jobs: Jobs | None) -> None:
        self._inputs, self._jobs = inputs, jobs
        #: 2 when an input could not be read, else 0.
        self.exit_code = EXIT_OK

    def __iter__(self) -> Iterator[tuple[Listing, tuple[Said, ...]]]:
        for listed in list_inputs(self._inputs, jobs=self._jobs):
            if listed.read_error is None:
                yield listed, ()
                continue
            self.exit_code = EXIT_USAGE
            yield listed, (Said(listed.read_error, "error"),)


def list_options(*, write: bool, output: Path | None) -> None:
    """Raise :class:`ConfigError` when ``redact --list`` is given ``--write`` or ``--output``
    (a listing writes nothing)."""
    if write or output is not None:
        raise ConfigError("--list writes nothing; leave out --write and --output")


def list_run(inputs: Sequence[FoundInput], *, jobs: Jobs | None = 1) -> ListRun:
    """``bbox-lark redact --list`` over ``inputs`` (:func:`~bbox_lark.fix.rewrite.list_inputs`)."""
    return ListRun(inputs, jobs=jobs)


__all__ = ["FixRun", "FmtRun", "ListRun", "fix_options", "fix_run", "fmt_run", "list_options", "list_run"]

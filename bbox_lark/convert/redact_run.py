"""``bbox-lark redact`` on files in other formats, over many files: each rewritten in its own
format (:func:`bbox_lark.convert.redact.redact_path`) in place, to ``--output`` or shown as a
diff, or refused; what is told of each (a :class:`~bbox_lark.files.said.Told`) and the exit code
are decided here, the command line only renders them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from bbox_lark.checks.workflow import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, write_file
from bbox_lark.convert.redact import ForeignRedactError, redact_path
from bbox_lark.files.said import Said, Told
from bbox_lark.secrets.redaction import redact_file_settings
from bbox_lark.syntax.source import encode


class ForeignRedactRun:
    """``redact`` on files in other formats (:func:`redact_foreign_paths`): iterating it
    rewrites each file and gives what is told of it, in order; then :attr:`exit_code`."""

    def __init__(
        self,
        files: dict[str, str],
        *,
        write: bool,
        output: Path | None,
        diff: Callable[[str, str, str], str],
    ) -> None:
        self._files, self._write, self._output, self._diff = files, write, output, diff
        #: 1 when a file was refused, 2 when one could not be written, else 0.
        self.exit_code = EXIT_OK

    def __iter__(self) -> Iterator[Told]:
        for path, fmt in self._files.items():
            yield self._one(path, fmt)

    def _one(self, path: str, fmt: str) -> Told:
        try:
            old, done = redact_path(path, fmt, allowed=redact_file_settings(Path(path)))
        except (ForeignRedactError, OSError) as error:
            self.exit_code = max(self.exit_code, EXIT_FINDINGS)
            why = getattr(error, "strerror", None) or error
            return Told(path, (Said(f"{path}: {why}; not redacted", "error"),))
        before = [
            Said(f"{path}:{line}:{col}: note redacted {secret.kind} {secret.masked}")
            for line, col, secret in done.secrets
        ]
        before.append(Said(f"redact: {len(done.secrets)} secret(s) replaced ({fmt}, in place)", "done"))
        target = Path(path) if self._write else self._output
        if target is None:
            return Told(path, before=tuple(before), diff=self._diff(old, done.text, path))
        if not (done.changed or self._output is not None):
            return Told(path, before=tuple(before))
        problem = write_file(target, encode(done.text))
        if problem is not None:
            self.exit_code = max(self.exit_code, EXIT_USAGE)
            return Told(path, (Said(problem, "error"),), before=tuple(before))
        return Told(path, (Said(f"wrote {target}"),), before=tuple(before))


def redact_foreign_paths(
    files: dict[str, str],
    *,
    write: bool = False,
    output: Path | None = None,
    diff: Callable[[str, str, str], str],
) -> ForeignRedactRun:
    """``redact`` on ``files`` (each path mapped to its format, not bbox): each rewritten in its
    own format, in place (``write``), to ``output``, or shown as ``diff(old, new, label)`` (the
    caller's unified diff: ``bbox_lark.fix.framework.unified_diff``, a layer above this one);
    a file that cannot be redacted is refused (exit 1)."""
    return ForeignRedactRun(files, write=write, output=output, diff=diff)


__all__ = ["ForeignRedactRun", "redact_foreign_paths"]

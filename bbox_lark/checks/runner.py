"""Findings the runner reports itself: a file whose checking failed inside bbox-lark."""

from __future__ import annotations

from bbox_lark.checks.base import describe, example

FAMILY = "runner"

describe(
    "E016",
    "internal-error",
    "error",
    "bbox-lark itself failed while reading or checking this file (a bug, not the file's fault).",
    "One file's failure never costs the other files their report: the run goes on and ends"
    " with exit code 2. Please report it as a bug, with the file (or the smallest part of it"
    " that still fails) and the message.",
    "No document is meant to trigger it; when checking a file raises an unexpected exception,"
    " `bbox-lark check` reports",
    example("a: hello\n"),
    fix="Nothing to change in the file: report the bug to bbox-lark with the file and the message.",
    family=FAMILY,
    internal=True,
)

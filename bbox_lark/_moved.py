"""The modules that moved after 0.2.0 (the layout by stage, docs/design.md "Layout"), reachable
under their old names for one release.

``import bbox_lark.scan`` still works: a finder on :data:`sys.meta_path` answers for each old
name in :data:`MOVED` with the module at its new name (the same module object, so an attribute
set through one name is seen through the other), and warns with a :class:`DeprecationWarning`
naming the new place. Nothing in the package, its tests or its tools uses an old name
(``tools/layers.py`` reports any that does). The old names go in 0.3.0.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

#: Old module name -> new module name (both under ``bbox_lark.``).
MOVED: dict[str, str] = {
    "ansi": "cli.ansi",
    "ast": "syntax.nodes",
    "atomic": "files.atomic",
    "blobs": "files.blobs",
    "build": "syntax.build",
    "check_output": "cli.check_output",
    "command_options": "cli.options",
    "commands": "cli.commands",
    "config": "files.config",
    "console": "cli.console",
    "conversion": "convert.files",
    "correlate": "syntax.correlate",
    "decoded": "secrets.decoded",
    "discover": "files.discover",
    "docsgen": "cli.docsgen",
    "export": "numbers.export",
    "foreign_redact": "convert.redact",
    "globs": "files.globs",
    "grammar": "syntax.grammar",
    "header": "syntax.header",
    "inputs": "files.inputs",
    "jsonout": "syntax.jsonout",
    "lightbox": "convert.lightbox.chain",
    "parallel": "checks.parallel",
    "parser": "syntax.parser",
    "printer": "syntax.printer",
    "pygments_lexer": "syntax.pygments_lexer",
    "query": "numbers.query",
    "redaction": "secrets.redaction",
    "render": "cli.render",
    "review": "numbers.review",
    "rewrite": "fix.rewrite",
    "scan": "syntax.scan",
    "send": "convert.otlp.send",
    "shape": "syntax.shape",
    "source": "syntax.source",
    "stats": "numbers.stats",
    "stats_run": "numbers.stats_run",
    "tables": "numbers.tables",
    "text": "syntax.text",
    "transform": "syntax.transform",
    "values": "syntax.values",
    "workflow": "checks.workflow",
    "writepolicy": "files.writepolicy",
    "writer": "write.writer",
    "writer_values": "write.values",
}


class _Alias:
    """Loads an old name as the module at its new name."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    # A loader and a finder by protocol: importing importlib.abc would cost start-up.
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system has just set the alias's spec on the module: give it back its own.
        module.__spec__ = self.spec


class _MovedFinder:
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("bbox_lark."):
            return None
        new = MOVED.get(fullname[len("bbox_lark.") :])
        if new is None:
            return None
        warnings.warn(
            f"{fullname} moved to bbox_lark.{new}; the old name goes in 0.3.0",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", _Alias(f"bbox_lark.{new}")))


def install() -> None:
    """Put the finder on :data:`sys.meta_path` (once)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())

"""The facade: bbox_lark's __all__ is the whole public surface, sorted and importable."""

from __future__ import annotations

import bbox_lark


def test_all_is_sorted_and_unique() -> None:
    assert list(bbox_lark.__all__) == sorted(set(bbox_lark.__all__))


def test_every_name_in_all_exists() -> None:
    for name in bbox_lark.__all__:
        assert hasattr(bbox_lark, name), name


def test_core_api_is_public() -> None:
    for name in ("parse", "check", "Document", "Event", "Diagnostic", "Result", "registry"):
        assert name in bbox_lark.__all__


def test_parse_never_raises_and_check_returns_diagnostics() -> None:
    for text in ("", "\x00", b"\xff\xfe", "---\n", "@", 't:"', "  x", "---\n- a\n---\n"):
        doc = bbox_lark.parse(text)
        assert isinstance(doc, bbox_lark.Document)
        assert all(isinstance(d, bbox_lark.Diagnostic) for d in bbox_lark.check(text))


def test_select_and_ignore_take_comma_separated_codes() -> None:
    text = "a: first step=2\na: second step=1 ts=nope\n"
    assert {d.code for d in bbox_lark.check(text, select=["W004,w005"])} == {"W004", "W005"}
    assert {d.code for d in bbox_lark.check(text, select=["W004"], ignore=["e,W005"])} == {"W004"}


def test_nodes_and_emit_are_public() -> None:
    for name in ("emit", "Call", "Comment", "Lifecycle", "Message", "Observation", "Unknown"):
        assert name in bbox_lark.__all__


def test_builders_and_reparse_are_public() -> None:
    """Nodes are data; the builders and the re-reading of an edited line are functions
    beside them (``bbox_lark.syntax.build``, ``bbox_lark.reparse``), never methods that reach up."""
    for name in ("build", "reparse"):
        assert name in bbox_lark.__all__
    for name in (
        "call",
        "comment",
        "edited",
        "head",
        "lifecycle",
        "message",
        "observation",
        "result",
        "unknown",
    ):
        assert callable(getattr(bbox_lark.syntax.build, name)), name
    for name in ("build", "with_", "with_source"):
        assert not hasattr(bbox_lark.Call, name), name


def test_public_names_are_listed_once_and_the_rest_is_written_from_them() -> None:
    """``_PUBLIC`` is the one list; the ``TYPE_CHECKING`` imports and ``__all__`` are written
    from it by ``tools/gen_public.py`` and must be current."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, str(root / "tools" / "gen_public.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert sorted([*bbox_lark._PUBLIC, "__version__"]) == list(bbox_lark.__all__)


def test_every_public_name_resolves_to_what_the_table_says() -> None:
    from importlib import import_module

    for name, target in bbox_lark._PUBLIC.items():
        module, _, attribute = target.partition(":")
        expected = getattr(import_module(module), attribute) if attribute else import_module(module)
        assert getattr(bbox_lark, name) is expected, name


def test_old_module_paths_still_import_and_warn() -> None:
    """The layout by stage moved modules; their old names answer for one release."""
    import importlib
    import sys
    import warnings

    from bbox_lark._moved import MOVED

    for old, new in MOVED.items():
        sys.modules.pop(f"bbox_lark.{old}", None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(f"bbox_lark.{old}")
        assert module is importlib.import_module(f"bbox_lark.{new}"), old
        assert module.__spec__ is not None and module.__spec__.name == f"bbox_lark.{new}"
        assert any(
            issubclass(w.category, DeprecationWarning) and f"bbox_lark.{new}" in str(w.message)
            for w in caught
        ), old


def test_nothing_in_the_project_imports_an_old_module_path() -> None:
    import re
    from pathlib import Path

    from bbox_lark._moved import MOVED

    root = Path(__file__).resolve().parent.parent
    old = re.compile(r"\b(?:from|import)\s+bbox_lark\.(" + "|".join(map(re.escape, MOVED)) + r")\b(?!\.)")
    bare = re.compile(r"\bfrom\s+bbox_lark\s+import\s+(" + "|".join(map(re.escape, MOVED)) + r")\b")
    found = []
    for folder in ("bbox_lark", "tests", "tools"):
        for path in (root / folder).rglob("*.py"):
            if path.name == "_moved.py":
                continue
            text = path.read_text(encoding="utf-8")
            for pattern in (old, bare):
                found += [f"{path.relative_to(root)}: {m.group(0)}" for m in pattern.finditer(text)]
    # `from bbox_lark import build` is the public name (bbox_lark.build, in __all__), not the old path.
    found = [f for f in found if not f.endswith("from bbox_lark import build")]
    assert found == [], found


def test_one_name_per_idea_across_the_public_functions() -> None:
    """The document a function reads is ``source``; the values the secret checks keep quiet
    on are ``allowed_secrets``, taken by every function that scans for secrets."""
    import inspect

    for name in ("parse", "check", "iter_check", "apply_fixes", "convert_text", "redact"):
        first = next(iter(inspect.signature(getattr(bbox_lark, name)).parameters))
        assert first == "source", name
    for name in ("parse", "check", "iter_check", "apply_fixes", "find_secrets", "redact"):
        assert "allowed_secrets" in inspect.signature(getattr(bbox_lark, name)).parameters, name


def test_check_takes_allowed_secrets_as_parse_does() -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = f"u: my token is {key}\n"
    assert any(d.code == "S001" for d in bbox_lark.check(text))
    assert bbox_lark.check(text, allowed_secrets=[key]) == list(
        bbox_lark.parse(text, allowed_secrets=[key]).diagnostics
    )
    assert not any(d.code == "S001" for d in bbox_lark.check(text, allowed_secrets=[key]))


def test_the_old_keyword_names_still_work_and_warn() -> None:
    import pytest

    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.warns(DeprecationWarning, match="allowed_secrets"):
        assert bbox_lark.find_secrets(f"token {key}", allowed=[key]) == []
    with pytest.warns(DeprecationWarning, match="source"):
        assert bbox_lark.parse(text="u: hi\n").events[0].text == "hi"
    with pytest.warns(DeprecationWarning, match="source"):
        assert bbox_lark.redact(text="u: hi\n").text == "u: hi\n"
    with pytest.raises(TypeError, match="both"), pytest.warns(DeprecationWarning):
        bbox_lark.check(source="u: hi\n", text="u: hi\n")

"""Mutation testing, one module at a time: mutmut on the module, only the tests that guard it.

    python tools/mutation.py bbox_lark/checks/lines.py bbox_lark/convert/jsonl
    python tools/mutation.py --tests tests/test_fix.py bbox_lark/fix/arrows.py
    nox -s mutation -- bbox_lark/checks/lines.py     # the same, in nox's own virtualenv

For each module (a file, a dotted name or a folder of modules) this

1. picks the tests that guard it from ``tools/guards.py``'s map (``python tools/guards.py
   build`` first), or takes ``--tests``;
2. lays out a scratch copy of the project in ``.mutation/<module>/`` (links to ``bbox_lark``,
   ``tests``, ``tools``, ``corpus``..., and to ``../shared`` so that the tests reading the
   external corpus run as they do in the project), with a ``pyproject.toml`` whose
   ``[tool.mutmut]`` is the project's plus ``only_mutate`` (this module) and
   ``pytest_add_cli_args_test_selection`` (these tests);
3. runs ``mutmut run`` there (mutmut maps each mutated function to the tests that call it
   and runs only those per mutant), then prints the module's score (killed / mutants) and
   every surviving mutant with its diff.

mutmut keeps its results in ``.mutation/<module>/mutants/``: a second run re-tests only the
mutants whose function changed, or the survivors with ``--again`` (after tests were added:
it forgets what mutmut kept that would hide them, :func:`forget`). Run it under ``nice``;
it uses every core unless ``--max-children`` says otherwise. docs/testing.md tells more.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / ".mutation"

#: What the scratch copy links to: the package, the tests and what the tests read.
LINKED = ["bbox_lark", "tests", "tools", "corpus", "grammar", "docs", "examples", "mkdocs.yml", "README.md"]

#: mutmut's words for a mutant's fate: which count as caught. "timeout" is caught (the
#: mutant made the tests hang); "no tests" is not (no guarding test runs the function).
CAUGHT = {"killed", "timeout", "caught by type check"}
NOT_COUNTED = {"skipped", "not checked"}

sys.path.insert(0, str(ROOT / "tools"))
import guards  # noqa: E402  (tools/guards.py, beside this file)


def slug(files: list[str]) -> str:
    common = os.path.commonpath(files) if len(files) > 1 else files[0]
    return re.sub(r"[^A-Za-z0-9_]+", "-", common.removesuffix(".py")).strip("-")


def toml_value(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def pyproject_for(files: list[str], tests: list[str]) -> str:
    """The project's pyproject.toml with ``[tool.mutmut]`` narrowed to ``files`` and ``tests``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    settings = dict(tomllib.loads(text).get("tool", {}).get("mutmut", {}))
    settings["only_mutate"] = files
    settings["pytest_add_cli_args_test_selection"] = tests
    # The project's section is dropped (it ends at the next table header) and written anew.
    text = re.sub(r"(?ms)^\[tool\.mutmut\]\n.*?(?=^\[|\Z)", "", text)
    section = "\n".join(f"{key} = {toml_value(value)}" for key, value in settings.items())
    return text.rstrip("\n") + "\n\n[tool.mutmut]\n" + section + "\n"


def lay_out(folder: Path, files: list[str], tests: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        link = folder / name
        if not link.is_symlink() and (ROOT / name).exists():
            link.symlink_to(ROOT / name)
    shared = ROOT.parent / "shared"
    if shared.is_dir() and not (folder / "mutants").exists():
        # The tests find ../shared from their repository root, which is mutants/ in the run.
        (folder / "shared").unlink(missing_ok=True)
        (folder / "shared").symlink_to(shared)
    wanted = pyproject_for(files, tests)
    target = folder / "pyproject.toml"
    if not target.is_file() or target.read_text(encoding="utf-8") != wanted:
        target.write_text(wanted, encoding="utf-8")


def mutmut(folder: Path, *args: str, capture: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mutmut", *args]
    return subprocess.run(command, cwd=folder, text=True, capture_output=capture, check=False)


def results(folder: Path) -> dict[str, str]:
    """Each mutant's name and status, from ``mutmut results --all=true``."""
    done = mutmut(folder, "results", "--all=true", capture=True)
    found = {}
    for line in done.stdout.splitlines():
        match = re.fullmatch(r"\s+(\S+): (.+)", line)
        if match:
            found[match[1]] = match[2].strip()
    return found


def score(statuses: dict[str, str]) -> tuple[int, int]:
    counted = [status for status in statuses.values() if status not in NOT_COUNTED]
    return sum(status in CAUGHT for status in counted), len(counted)


def forget(folder: Path, survivors: list[str]) -> None:
    """Make a re-run of ``survivors`` see the tests as they are now. mutmut keeps three things
    between runs that hide tests added since (docs/testing.md, "Mutation testing"): its
    copy of ``tests/`` (made when the mutants were laid out), its map of which test calls
    which function (``mutmut-stats.json``: a new test is missing from it or mapped wrongly),
    and each mutant's verdict (``exit_code_by_key`` in ``<module>.py.meta``)."""
    mutants = folder / "mutants"
    if not mutants.is_dir():
        return
    shutil.copytree(ROOT / "tests", mutants / "tests", dirs_exist_ok=True)
    (mutants / "mutmut-stats.json").unlink(missing_ok=True)
    wanted = set(survivors)
    for meta in mutants.rglob("*.py.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes = data.get("exit_code_by_key", {})
        if wanted & codes.keys():
            data["exit_code_by_key"] = {key: None if key in wanted else code for key, code in codes.items()}
            meta.write_text(json.dumps(data, indent=4), encoding="utf-8")


def run_one(name: str, tests: list[str] | None, max_children: int | None, again: bool, diffs: bool) -> int:
    files = guards.resolve(name)
    if tests is None:
        if not guards.MAP.is_file():
            print("no map of the guarding tests yet: building it (python tools/guards.py build)")
            guards.build([])
        tests = guards.guards([name])
    if not tests:
        print(f"{name}: no guarding tests found (build the map: python tools/guards.py build)")
        return 1
    folder = SCRATCH / slug(files)
    lay_out(folder, files, tests)
    print(f"== {name}: {len(files)} file(s), {len(tests)} guarding test file(s) ({folder.relative_to(ROOT)})")
    args = ["run"] + ([f"--max-children={max_children}"] if max_children else [])
    if again:
        survivors = [mutant for mutant, status in results(folder).items() if status not in CAUGHT]
        if not survivors:
            print("   nothing left to re-test")
        forget(folder, survivors)
        args += survivors
    if not again or len(args) > 1 + bool(max_children):
        done = mutmut(folder, *args)
        if done.returncode != 0:
            print(f"{name}: mutmut exited {done.returncode}")
            return done.returncode
    if again:
        # A function changed since the last run has all its mutants reset to "not checked"
        # while the survivors run; a run by name tests only the names given, so test those too.
        unchecked = [mutant for mutant, status in results(folder).items() if status == "not checked"]
        if unchecked:
            done = mutmut(folder, *args[: 1 + bool(max_children)], *unchecked)
            if done.returncode != 0:
                print(f"{name}: mutmut exited {done.returncode}")
                return done.returncode
    statuses = results(folder)
    killed, total = score(statuses)
    survivors = sorted(mutant for mutant, status in statuses.items() if status not in CAUGHT | NOT_COUNTED)
    counts = Counter(statuses.values())
    detail = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    ratio = f"{killed / total:.1%}" if total else "n/a"
    print(f"SCORE {name}: {killed}/{total} killed ({ratio}); {detail}")
    for mutant in survivors:
        print(f"  survived: {mutant} ({statuses[mutant]})")
        if diffs:
            shown = mutmut(folder, "show", mutant, capture=True).stdout
            print("\n".join("      " + line for line in shown.splitlines()[1:] if line.strip()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("modules", nargs="+", help="bbox_lark/x.py, bbox_lark.x or a folder")
    parser.add_argument("--tests", nargs="+", help="these test files instead of the guards map's")
    parser.add_argument("--max-children", type=int, help="parallel mutants (default: every core)")
    parser.add_argument("--again", action="store_true", help="re-test the survivors of the last run")
    parser.add_argument("--no-diffs", action="store_true", help="name the survivors, without their diffs")
    parser.add_argument("--clean", action="store_true", help="forget earlier results first")
    args = parser.parse_args(argv)
    worst = 0
    for name in args.modules:
        if args.clean:
            shutil.rmtree(SCRATCH / slug(guards.resolve(name)), ignore_errors=True)
        worst = max(worst, run_one(name, args.tests, args.max_children, args.again, not args.no_diffs))
    return worst


if __name__ == "__main__":
    raise SystemExit(main())

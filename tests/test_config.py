"""Configuration (docs/configuration.md): files found upward from each checked path, their
precedence, command-line overrides, --config and --isolated, every bad-configuration case
(one line naming the value and the file, exit 2), per-file-ignores, and the JSON Schema of
the table."""

from __future__ import annotations

import json
import pathlib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner, Result

from bbox_lark.cli import app
from bbox_lark.files.config import (
    DEFAULT_EXCLUDE,
    KEYS,
    ConfigError,
    Overrides,
    Resolver,
    Settings,
    cli_overrides,
    find_config,
    load_config,
    merge,
    resolve,
)
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "docs" / "schema" / "config.schema.json"
runner = CliRunner()

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
#: W013 (ASCII arrow, line 7) and W004 (step decreasing, line 8): two warnings, no error.
WARNINGS = HEADER + "t:read a.rs step=2 -> [1 lines]\na: done step=1\n"


def invoke(args: list[str]) -> Result:
    result = runner.invoke(app, args)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def codes(result: Result) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": " in line]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with ``logs/a.bbox`` (W013 and W004), the current folder."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.bbox").write_text(WARNINGS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- finding the file --------------------------------------------------------------------


def test_no_configuration_gives_the_defaults(project: Path) -> None:
    assert resolve("logs/a.bbox") == Settings()
    assert codes(invoke(["check", "logs"])) == ["W013", "W004"]


def test_bbox_lark_toml_is_found_upward(project: Path) -> None:
    write(project / "bbox-lark.toml", 'ignore = ["W013"]\n')
    assert codes(invoke(["check", "logs/a.bbox"])) == ["W004"]
    assert codes(invoke(["check", "logs"])) == ["W004"]
    assert resolve("logs/a.bbox").config == project / "bbox-lark.toml"


def test_pyproject_table_is_found_upward(project: Path) -> None:
    write(project / "pyproject.toml", '[project]\nname = "x"\n\n[tool.bbox-lark]\nselect = ["W004"]\n')
    assert codes(invoke(["check", "logs"])) == ["W004"]


def test_a_pyproject_without_the_table_is_passed_over(project: Path) -> None:
    write(project / "bbox-lark.toml", 'ignore = ["W004"]\n')
    write(project / "logs" / "pyproject.toml", "[tool.ruff]\nline-length = 100\n")
    assert find_config(project / "logs") == project / "bbox-lark.toml"
    assert codes(invoke(["check", "logs"])) == ["W013"]


def test_precedence_in_one_folder(project: Path) -> None:
    write(project / "pyproject.toml", '[tool.bbox-lark]\nignore = ["W004"]\n')
    assert find_config(project) == project / "pyproject.toml"
    write(project / "bbox-lark.toml", 'ignore = ["W013"]\n')
    assert find_config(project) == project / "bbox-lark.toml"
    write(project / ".bbox-lark.toml", "ignore = []\n")
    assert find_config(project) == project / ".bbox-lark.toml"
    assert codes(invoke(["check", "logs"])) == ["W013", "W004"]


def test_the_nearest_file_wins_and_files_are_not_merged(project: Path) -> None:
    write(project / "bbox-lark.toml", 'select = ["W013"]\nstrict = true\n')
    write(project / "logs" / "bbox-lark.toml", 'ignore = ["W013"]\n')
    write(project / "other" / "b.bbox", WARNINGS)
    result = invoke(["check", "logs", "other"])
    assert codes(result) == ["W004", "W013"]  # logs: everything but W013; other: only W013
    assert result.exit_code == 1  # other/ is strict, its warning fails


def test_each_file_gets_its_own_folders_settings(project: Path) -> None:
    write(project / "logs" / "bbox-lark.toml", "max-line = 5\n")
    resolver = Resolver()
    assert resolver.for_path("logs/a.bbox").max_line == 5
    assert resolver.for_path("logs").max_line == 5
    assert resolver.for_path("a.bbox").max_line == DEFAULT_MAX_LINE
    assert resolver.for_path("-").max_line == DEFAULT_MAX_LINE


def test_stdin_uses_the_current_folders_configuration(project: Path) -> None:
    write(project / "bbox-lark.toml", 'ignore = ["W0"]\n')
    result = runner.invoke(app, ["check", "-"], input=WARNINGS)
    assert result.exit_code == 0 and result.stdout == ""


# -- the command line over the file ------------------------------------------------------


def test_select_on_the_command_line_replaces_select_and_ignore(project: Path) -> None:
    write(project / "bbox-lark.toml", 'select = ["W013"]\nignore = ["W004"]\n')
    assert codes(invoke(["check", "logs"])) == ["W013"]
    assert codes(invoke(["check", "--select", "W004", "logs"])) == ["W004"]


def test_ignore_on_the_command_line_adds_to_the_files(project: Path) -> None:
    write(project / "bbox-lark.toml", 'ignore = ["W013"]\n')
    assert codes(invoke(["check", "--ignore", "w004", "logs"])) == []


def test_strict_from_the_file_and_its_override(project: Path) -> None:
    write(project / "bbox-lark.toml", "strict = true\n")
    assert invoke(["check", "logs"]).exit_code == 1  # warnings fail
    assert invoke(["check", "--no-strict", "logs"]).exit_code == 0
    assert invoke(["check", "--isolated", "logs"]).exit_code == 0
    assert invoke(["check", "--strict", "--isolated", "logs"]).exit_code == 1


def test_max_line_from_the_file_and_its_override(project: Path) -> None:
    write(project / "bbox-lark.toml", "max-line = 20\n")
    result = invoke(["check", "logs"])
    assert result.exit_code == 1
    assert codes(result) == ["E003"]  # line 7 (31 characters) is not parsed, so no W013 or W004
    assert codes(invoke(["check", "--max-line", "100", "logs"])) == ["W013", "W004"]
    assert invoke(["stats", "logs/a.bbox"]).exit_code == 1  # stats reads max-line too
    assert invoke(["stats", "--max-line", "100", "logs/a.bbox"]).exit_code == 0


def test_json_output_says_when_the_configuration_made_the_run_strict(project: Path) -> None:
    write(project / "bbox-lark.toml", "strict = true\n")
    value = json.loads(invoke(["check", "--format", "json", "logs"]).stdout)
    assert value["strict"] is True and value["exit_code"] == 1


def test_isolated_reads_no_file(project: Path) -> None:
    write(project / "bbox-lark.toml", 'ignore = ["W"]\n')
    assert codes(invoke(["check", "--isolated", "logs"])) == ["W013", "W004"]
    write(project / "bbox-lark.toml", "bogus = 1\n")
    result = invoke(["check", "--isolated", "logs"])  # the bad file is not read
    assert (result.exit_code, codes(result)) == (0, ["W013", "W004"])


def test_config_names_one_file_for_every_path(project: Path) -> None:
    write(project / "logs" / "bbox-lark.toml", 'ignore = ["W"]\n')
    shared = write(project / "conf" / "lint.toml", 'ignore = ["W004"]\n')
    assert codes(invoke(["check", "--config", str(shared), "logs"])) == ["W013"]
    assert codes(invoke(["check", "--config", "conf/lint.toml", "logs"])) == ["W013"]
    pyproject = write(project / "conf" / "pyproject.toml", '[tool.bbox-lark]\nignore = ["W013"]\n')
    assert codes(invoke(["check", "--config", str(pyproject), "logs"])) == ["W004"]


def test_config_patterns_are_relative_to_the_config_files_folder(project: Path) -> None:
    write(
        project / "conf" / "lint.toml",
        'extend-exclude = ["/logs/"]\n\n[per-file-ignores]\n"/a.bbox" = ["W"]\n',
    )
    write(project / "conf" / "a.bbox", WARNINGS)
    result = invoke(["check", "--config", "conf/lint.toml", "conf", "logs/a.bbox"])
    # conf/a.bbox: its warnings ignored; logs/a.bbox: named, so read despite the exclude
    # (which is relative to conf/, so it would not match it anyway).
    assert codes(result) == ["W013", "W004"]
    assert "logs/a.bbox:7" in result.stdout


# -- bad configuration: one line naming the value and the file, exit 2 -------------------


BAD_FILES = [
    ("bbox-lark.toml", "selct = []\n", "bbox-lark.toml: unknown key 'selct' (did you mean 'select'?)"),
    (
        "bbox-lark.toml",
        "colour = true\n",
        "bbox-lark.toml: unknown key 'colour' (known keys: allowed-secrets, exclude, extend-exclude,"
        " ignore, jobs, max-line, per-file-ignores, select, strict)",
    ),
    (
        "pyproject.toml",
        '[tool.bbox-lark]\nselect = "W004"\n',
        'pyproject.toml: [tool.bbox-lark] select: must be an array of codes (e.g. ["W004", "I0"]),'
        ' not a string ("W004")',
    ),
    (
        "bbox-lark.toml",
        'select = ["W999"]\n',
        "bbox-lark.toml: select: unknown code or prefix 'W999';"
        " `bbox-lark explain` and docs/checks.md list every code",
    ),
    (
        "bbox-lark.toml",
        'ignore = ["W0013"]\n',
        "bbox-lark.toml: ignore: unknown code or prefix 'W0013'; did you mean W013?",
    ),
    ("bbox-lark.toml", 'ignore = ["W0,I0"]\n', 'bbox-lark.toml: ignore: one code per item, not "W0,I0"'),
    ("bbox-lark.toml", 'strict = "yes"\n', 'bbox-lark.toml: strict: must be true or false, not "yes"'),
    ("bbox-lark.toml", "max-line = 0\n", "bbox-lark.toml: max-line: must be an integer of at least 1, not 0"),
    (
        "bbox-lark.toml",
        "max-line = 16777217\n",
        "bbox-lark.toml: max-line: at most 16,777,216 characters (a longer line costs gigabytes),"
        " not 16,777,217",
    ),
    (
        "bbox-lark.toml",
        "max-line = true\n",
        "bbox-lark.toml: max-line: must be an integer of at least 1, not true",
    ),
    ("bbox-lark.toml", "jobs = 0\n", 'bbox-lark.toml: jobs: must be a positive integer or "auto", not 0'),
    (
        "bbox-lark.toml",
        'jobs = "all"\n',
        'bbox-lark.toml: jobs: must be a positive integer or "auto", not "all"',
    ),
    (
        "bbox-lark.toml",
        'exclude = ["a\\\\"]\n',
        "bbox-lark.toml: exclude: \"a\\\\\": invalid pattern (Invalid git pattern: 'a\\\\')",
    ),
    (
        "bbox-lark.toml",
        'extend-exclude = [""]\n',
        'bbox-lark.toml: extend-exclude: "": an empty pattern matches nothing',
    ),
    (
        "bbox-lark.toml",
        '[per-file-ignores]\n"logs/[z-a].bbox" = ["W004"]\n',
        'bbox-lark.toml: per-file-ignores: "logs/[z-a].bbox":'
        " invalid pattern (bad character range z-a at position 7)",
    ),
    (
        "bbox-lark.toml",
        '[per-file-ignores]\n"*.bbox" = ["X1"]\n',
        "bbox-lark.toml: per-file-ignores: \"*.bbox\": unknown code or prefix 'X1';"
        " `bbox-lark explain` and docs/checks.md list every code",
    ),
    (
        "bbox-lark.toml",
        'per-file-ignores = ["W004"]\n',
        "bbox-lark.toml: per-file-ignores: must be a table of pattern = [codes], not an array",
    ),
    (
        "bbox-lark.toml",
        "select = [W004\n",
        "bbox-lark.toml: not valid TOML: Invalid value (at line 1, column 11)",
    ),
    (
        "pyproject.toml",
        "[tool]\nbbox-lark = 3\n",
        "pyproject.toml: [tool.bbox-lark] must be a table, not an integer",
    ),
    (
        "bbox-lark.toml",
        '[tool.bbox-lark]\nselect = ["W004"]\n',
        "bbox-lark.toml: unknown key 'tool'"
        " (in bbox-lark.toml the keys are at the top level, without [tool.bbox-lark])",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "message"), BAD_FILES, ids=[m.split(": ", 1)[1][:40] for *_, m in BAD_FILES]
)
@pytest.mark.parametrize("command", ["check", "fmt", "stats", "fix"])
def test_a_bad_configuration_file_is_a_usage_error(
    project: Path, name: str, text: str, message: str, command: str
) -> None:
    write(project / name, text)
    before = (project / "logs" / "a.bbox").read_bytes()
    args = [command, "logs"] + (["--arrows", "--write"] if command == "fix" else [])
    result = invoke(args)
    assert result.exit_code == 2
    assert result.stderr == f"error: {message}\n"
    assert result.stdout == ""
    assert (project / "logs" / "a.bbox").read_bytes() == before  # nothing written


def test_a_bad_file_below_a_named_folder_stops_the_run_before_any_output(project: Path) -> None:
    write(project / "logs" / "deep" / "bbox-lark.toml", "max-line = -1\n")
    write(project / "logs" / "deep" / "b.bbox", WARNINGS)
    result = invoke(["check", "logs"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (
        result.stderr
        == "error: logs/deep/bbox-lark.toml: max-line: must be an integer of at least 1, not -1\n"
    )


def test_an_unreadable_or_undecodable_file(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = write(project / "bbox-lark.toml", "")
    config.write_bytes(b'select = ["\xff"]\n')
    result = invoke(["check", "logs"])
    assert (result.exit_code, result.stderr) == (
        2,
        "error: bbox-lark.toml: not valid TOML: not UTF-8 (byte 11)\n",
    )
    read_bytes = pathlib.Path.read_bytes

    def refuse(self: pathlib.Path) -> bytes:
        if self.name == "bbox-lark.toml":
            raise PermissionError(13, "Permission denied", str(self))
        return read_bytes(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", refuse)
    result = invoke(["check", "logs"])
    assert (result.exit_code, result.stderr) == (2, "error: bbox-lark.toml: cannot read: Permission denied\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--select", "W999"],
            "--select: unknown code or prefix 'W999'; `bbox-lark explain` and docs/checks.md list every code",
        ),
        (
            ["--ignore", "W004,Q1"],
            "--ignore: unknown code or prefix 'Q1'; `bbox-lark explain` and docs/checks.md list every code",
        ),
        (["--max-line", "0"], "--max-line: must be an integer of at least 1, not 0"),
        (["--max-line", "-3"], "--max-line: must be an integer of at least 1, not -3"),
        (
            ["--max-line", "100000000"],
            "--max-line: at most 16,777,216 characters (a longer line costs gigabytes), not 100,000,000",
        ),
        (["--blobs", "nowhere"], "--blobs nowhere: no such directory"),
        (["--blobs", "logs/a.bbox"], "--blobs logs/a.bbox: not a directory"),
        (["--exclude", "a\\"], "--exclude: \"a\\\\\": invalid pattern (Invalid git pattern: 'a\\\\')"),
        (
            ["--extend-exclude", "[z-a]"],
            '--extend-exclude: "[z-a]": invalid pattern (bad character range z-a at position 10)',
        ),
        (["--config", "nope.toml"], "--config nope.toml: no such file"),
        (["--config", "logs"], "--config logs: is a directory, not a configuration file"),
        (["--config", "x.toml", "--isolated"], "--config and --isolated exclude each other; give one"),
    ],
)
def test_a_bad_option_value_is_a_usage_error(project: Path, args: list[str], message: str) -> None:
    write(project / "x.toml", "")
    result = invoke(["check", *args, "logs"])
    assert (result.exit_code, result.stderr, result.stdout) == (2, f"error: {message}\n", "")


def test_a_bad_config_file_named_by_config(project: Path) -> None:
    write(project / "lint.toml", "max-line = 0\n")
    result = invoke(["check", "--config", "lint.toml", "logs"])
    assert result.stderr == "error: --config lint.toml: max-line: must be an integer of at least 1, not 0\n"


@pytest.mark.parametrize("command", [["parse"], ["convert", "--to", "compact"]])
def test_max_line_below_1_for_commands_without_configuration(project: Path, command: list[str]) -> None:
    result = invoke([*command, "--max-line", "0", "logs/a.bbox"])
    assert (result.exit_code, result.stderr) == (
        2,
        "error: --max-line: must be an integer of at least 1, not 0\n",
    )


# -- per-file-ignores --------------------------------------------------------------------


def test_per_file_ignores_match_relative_to_the_config_files_folder(project: Path) -> None:
    write(project / "other" / "a.bbox", WARNINGS)
    write(project / "logs" / "b.bbox", WARNINGS)
    write(
        project / "bbox-lark.toml",
        '[per-file-ignores]\n"logs/a.bbox" = ["W013"]\n"b.bbox" = ["W004"]\n"!logs/**" = ["W0"]\n',
    )
    result = invoke(["check", "."])
    lines = sorted(f"{line.split(':')[0]} {line.split(': ')[1][:4]}" for line in result.stdout.splitlines())
    # logs/a.bbox: W013 ignored by path; logs/b.bbox: W004 ignored by name (at any depth);
    # other/a.bbox: outside logs/, so the negated pattern ignores every W0.
    assert lines == ["logs/a.bbox W004", "logs/b.bbox W013"]


def test_per_file_ignores_apply_from_the_library_too(project: Path) -> None:
    write(project / "bbox-lark.toml", '[per-file-ignores]\n"*.bbox" = ["W013"]\n')
    settings = resolve("logs/a.bbox")
    assert settings.ignore_for("logs/a.bbox") == ("W013",)
    assert settings.ignore_for("logs/a.rlog") == ()
    assert settings.ignore_for("-") == ()
    assert not settings.enabled("W013", "logs/a.bbox") and settings.enabled("W004", "logs/a.bbox")


# -- the library -------------------------------------------------------------------------


def test_merge_and_overrides() -> None:
    assert merge(None) == Settings()
    overrides = cli_overrides(select=["w0,I007"], ignore=["W004"], strict=True, max_line=9, jobs="3")
    assert overrides == Overrides(select=("W0", "I007"), ignore=("W004",), strict=True, max_line=9, jobs=3)
    settings = merge(None, overrides)
    assert (settings.select, settings.ignore, settings.strict, settings.max_line, settings.jobs) == (
        ("W0", "I007"),
        ("W004",),
        True,
        9,
        3,
    )
    assert [g.pattern for g in settings.exclude] == list(DEFAULT_EXCLUDE)
    with pytest.raises(ConfigError, match="--jobs: must be a positive integer"):
        cli_overrides(jobs="0")


def test_load_config_normalizes_every_key(tmp_path: Path) -> None:
    path = write(
        tmp_path / "bbox-lark.toml",
        'select = ["w0", "E"]\nignore = ["W004"]\nstrict = true\nexclude = ["old/"]\n'
        'extend-exclude = ["*.tmp.bbox"]\nmax-line = 4096\njobs = "auto"\n'
        'allowed-secrets = ["AKIAIOSFODNN7EXAMPLE"]\n\n'
        '[per-file-ignores]\n"imports/**" = ["W009"]\n',
    )
    config = load_config(path)
    assert config is not None
    settings = merge(config)
    assert settings.select == ("W0", "E") and settings.ignore == ("W004",) and settings.strict
    assert [(g.pattern, g.base) for g in settings.exclude] == [("old/", tmp_path)]
    assert [g.pattern for g in settings.extend_exclude] == ["*.tmp.bbox"]
    assert (settings.max_line, settings.jobs, settings.config) == (4096, "auto", path)
    assert [(e.glob.pattern, e.codes) for e in settings.per_file_ignores] == [("imports/**", ("W009",))]
    assert settings.allowed_secrets == ("AKIAIOSFODNN7EXAMPLE",)
    assert sorted(key.replace("_", "-") for key in config.values) == sorted(KEYS)


def test_an_empty_bbox_lark_toml_is_a_configuration(tmp_path: Path) -> None:
    write(tmp_path / "bbox-lark.toml", "")
    write(tmp_path / "pyproject.toml", "[tool.bbox-lark]\nstrict = true\n")
    assert find_config(tmp_path) == tmp_path / "bbox-lark.toml"
    assert Resolver(cwd=tmp_path).for_path(tmp_path).strict is False


# -- the JSON Schema of the table --------------------------------------------------------


def config_schema() -> Draft202012Validator:
    document = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def test_schema_keys_are_the_keys_the_loader_accepts() -> None:
    document = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert sorted(document["properties"]) == sorted(KEYS)
    assert document["additionalProperties"] is False


EXAMPLE_TABLES = [
    {},
    {"select": ["W0", "E"], "ignore": ["W004"], "strict": True},
    {"exclude": ["old/"], "extend-exclude": ["*.tmp.bbox", "/scratch"], "max-line": 4096},
    {"per-file-ignores": {"imports/**": ["W009", "I004"], "!keep/**": ["W"]}, "jobs": "auto"},
    {"jobs": 4},
    {"allowed-secrets": ["AKIAIOSFODNN7EXAMPLE", "sk-ant-api03-FAKE"]},
]


@pytest.mark.parametrize("table", EXAMPLE_TABLES)
def test_example_tables_are_valid_for_the_schema_and_the_loader(
    table: dict[str, object], tmp_path: Path
) -> None:
    errors = [e.message for e in config_schema().iter_errors(table)]
    assert errors == []
    path = tmp_path / "pyproject.toml"
    path.write_text(_toml({"tool": {"bbox-lark": table}}), encoding="utf-8")
    assert load_config(path) is not None


#: Bad tables the schema rejects too (it checks the shape of codes and patterns; only the
#: loader knows the registry and what pathspec accepts).
SHAPE_ERRORS = [case for case in BAD_FILES[:12] if "W999" not in case[1] and "a\\\\" not in case[1]]


@pytest.mark.parametrize(("name", "text", "message"), SHAPE_ERRORS, ids=[m[:50] for *_, m in SHAPE_ERRORS])
def test_bad_tables_are_invalid_for_the_schema_too(name: str, text: str, message: str) -> None:
    import tomllib

    table = tomllib.loads(text)
    if name == "pyproject.toml":
        table = table["tool"]["bbox-lark"]
    assert list(config_schema().iter_errors(table)), message


def test_the_documented_examples_are_valid(tmp_path: Path) -> None:
    """Every ```toml block of docs/configuration.md loads (and its table fits the schema)."""
    import re
    import tomllib

    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", page, re.S)
    assert len(blocks) >= 2
    for block in blocks:
        document = tomllib.loads(block)
        table = document["tool"]["bbox-lark"] if "tool" in document else document
        assert [e.message for e in config_schema().iter_errors(table)] == [], block
        path = tmp_path / ("pyproject.toml" if "tool" in document else "bbox-lark.toml")
        path.write_text(block, encoding="utf-8")
        load_config(path)


def _toml(value: dict[str, object], prefix: str = "") -> str:
    """A tiny TOML writer for the example tables (strings, booleans, ints, lists, tables)."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, object]]] = []
    for key, item in value.items():
        if isinstance(item, dict):
            tables.append(
                (f"{prefix}{json.dumps(key) if '.' in key or '*' in key or '!' in key else key}", item)
            )
        else:
            lines.append(f"{json.dumps(key)} = {json.dumps(item)}")
    out = ("\n".join(lines) + "\n") if lines else ""
    for name, table in tables:
        out += f"\n[{name}]\n" + _toml(table, name + ".")
    return out

"""The leak harness (issue 25, DECISIONS §13 "Nothing made for others carries a secret
silently"): a fake key of every provider kind, planted in every string position of every
input format bbox-lark reads, behind every escape form, through every command that writes
something. With the default options and with ``--redact``, no output holds the key, its
escaped forms or its base64; without either flag ``convert`` and ``export`` refuse.

The keys are made at run time from a fixed seed and from pieces (no file holds one whole).
The hosts: bbox lines of every kind (header values, messages, arguments, field values,
results, ``o:`` lines, comments, continuation lines), the same session written by each
writer (JSON Lines, ATIF, Lightbox: the key where each writer puts that text), and every
string value of the project's own Claude Code and BB-7 fixtures and, when present, of the
seeds in ``../shared/corpus-external``.

The default run takes a deterministic sample of the placements (every host, every escape
form and every kind at least once); ``BBOX_LARK_LEAKS=full`` runs the whole cross product.
The count of placements × commands is printed (``-s``) and checked to be what was run.
"""

from __future__ import annotations

import base64
import json
import os
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from printer_support import EXTERNAL

from bbox_lark import build
from bbox_lark.secrets.scanner import find_secrets
from bbox_lark.syntax.printer import format_line

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
FULL = os.environ.get("BBOX_LARK_LEAKS") == "full"
SEED = 25

_B62 = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits


def _body(rng: random.Random, size: int, alphabet: str = _B62) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def make_keys(seed: int = SEED) -> dict[str, tuple[str, str]]:
    """One fake key per provider kind: kind -> (prefix shown, key). Built from pieces."""
    rng = random.Random(seed)
    dash, under = "-", "_"
    parts = {
        "anthropic_key": ("sk" + dash + "ant" + dash, "api03" + dash + _body(rng, 93)),
        "openai_key": ("sk" + dash + "proj" + dash, _body(rng, 74)),
        "aws_access_key": ("AK" + "IA", _body(rng, 16, _UPPER)),
        "github_token": ("gh" + "p" + under, _body(rng, 36)),
        "slack_token": ("xo" + "xb" + dash, _body(rng, 12, string.digits) + dash + _body(rng, 24)),
        "google_api_key": ("AI" + "za", _body(rng, 35)),
        "stripe_key": ("sk" + under + "live" + under, _body(rng, 24)),
        "huggingface_token": ("hf" + under, _body(rng, 34)),
        "jwt": (
            "ey" + "J",
            _body(rng, 20) + ".ey" + "J" + _body(rng, 30) + "." + _body(rng, 30),
        ),
    }
    return {kind: (shown, shown + rest) for kind, (shown, rest) in parts.items()}


KEYS = make_keys()


def _escape_at(key: str) -> int:
    """Where an escape form hides a character: the first ``-`` or ``_``, else the fourth."""
    at = min((key.find(c) for c in "-_" if c in key), default=-1)
    return at if at > 0 else 3


#: Each escape form: the text a reader gets back, holding the key.
FORMS: dict[str, Callable[[str], str]] = {
    "plain": lambda k: f"use {k} now",
    "newline": lambda k: "line1\n" + k,
    "json": lambda k: json.dumps({"out": "ok\n" + k}),
    "u002d": lambda k: k[: _escape_at(k)] + f"\\u{ord(k[_escape_at(k)]):04x}" + k[_escape_at(k) + 1 :],
    "pct": lambda k: k[: _escape_at(k)] + f"%{ord(k[_escape_at(k)]):02X}" + k[_escape_at(k) + 1 :],
    "underscore": lambda k: "Bash_" + k,
    "split": lambda k: k[: len(k) // 2] + "\n" + k[len(k) // 2 :],
}


def leaks(output: str, kind: str) -> list[str]:
    """What of the key ``output`` holds: any ten characters of its secret part (so an
    escaped or wrapped key is found too), or its base64 (standard or URL-safe, any
    alignment)."""
    shown, key = KEYS[kind]
    secret = key[len(shown) :]
    found = [
        f"{kind} chars {at}" for at in range(0, len(secret) - 10 + 1, 5) if secret[at : at + 10] in output
    ]
    for pad in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            needle = encode(("x" * pad + key).encode()).decode()[4:-4]
            if needle and needle in output:
                found.append(f"{kind} base64")
    return found


# -- hosts ------------------------------------------------------------------------------------

HEADER = "---\nformat: bbox/1\nid: leak-test\nrepo_sha: 215db51\nrunner: local\n{extra}---\n"
BODY = "u: Start.\n{line}\na: Done.\n"


def _yaml_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _bbox_positions() -> dict[str, Callable[[str], str]]:
    """Each position of a bbox file that holds text: the whole file with ``text`` there."""

    def body(line: str) -> str:
        return HEADER.format(extra="") + BODY.format(line=line)

    def continuation(text: str) -> str:
        lines = text.replace("\\n", "\n").split("\n") if "\n" in text else [text]
        return body("t:bash 'cat out.txt' id=c5 → [ok]\n" + "\n".join("  " + line for line in lines))

    return {
        "header-value": lambda t: (
            HEADER.format(extra=f"cwd: {_yaml_quoted(t)}\n") + BODY.format(line="u: hi")
        ),
        "user": lambda t: body(format_line(build.message("u", t, exact=True))),
        "agent": lambda t: body(format_line(build.message("a", t, exact=True))),
        "thinking": lambda t: body(format_line(build.message("th", t, exact=True))),
        "argument": lambda t: body(
            format_line(build.call("tool", "bash", [t], fields={"id": "c1"}, result=build.result("ok")))
        ),
        "field-value": lambda t: body(
            format_line(
                build.call("tool", "read", [], fields={"id": "c2", "path": t}, result=build.result("ok"))
            )
        ),
        "result": lambda t: body(
            format_line(
                build.call("tool", "bash", ["ls"], fields={"id": "c3"}, result=build.result("text", text=t))
            )
        ),
        "o-line": lambda t: body(
            "t:bash 'ls' id=c4\n"
            + format_line(build.observation(fields={"id": "c4"}, result=build.result("text", text=t)))
        ),
        "comment": lambda t: body("# note " + t.replace("\n", " ")),
        "continuation": continuation,
    }


@dataclass(frozen=True)
class Placement:
    """One key of one kind, behind one escape form, at one position of one host."""

    host: str  # the input format
    position: str
    kind: str
    form: str
    name: str  # the file name to write it under
    content: str | dict[str, str]  # a file's text, or a folder's files

    @property
    def id(self) -> str:
        return f"{self.host}:{self.position}:{self.form}:{self.kind}"


def _string_paths(value: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    """The path of every string value in a JSON value (keys are names, not values)."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_paths(item, (*path, index))


def _planted(value: object, path: tuple[object, ...], text: str) -> object:
    if not path:
        assert isinstance(value, str)
        return f"{value} {text}"
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: _planted(v, rest, text) if k == head else v for k, v in value.items()}
    assert isinstance(value, list)
    return [_planted(v, rest, text) if i == head else v for i, v in enumerate(value)]


def _json_hosts() -> dict[str, tuple[str, Path]]:
    """Read-only JSON formats' hosts: name -> (format, file). The project's own fixtures,
    and the shared seeds when present."""
    hosts = {
        "claude-code:tool-ids": ("claude-code", FIXTURES / "claude-code" / "tool-ids.jsonl"),
        "bb7:v2_parts": ("bb7", FIXTURES / "bb7" / "v2_parts.json"),
    }
    for folder, fmt in (("claude-code", "claude-code"), ("bb7", "bb7"), ("atif", "atif")):
        for path in sorted((EXTERNAL / folder).glob("*.json*")) if EXTERNAL.is_dir() else ():
            if "INVALID" not in path.name and "MALFORMED" not in path.name:
                hosts[f"{fmt}:{path.stem}"] = (fmt, path)
    return hosts


def _json_placements(host: str, fmt: str, path: Path) -> Iterator[tuple[str, Callable[[str], str]]]:
    """Each string value of a JSON or JSON Lines host, as (position, file with text there)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        for number, record in enumerate(records):
            for where in _string_paths(record):

                def planted(t: str, number: int = number, where: tuple[object, ...] = where) -> str:
                    lines = [json.dumps(r) for r in records]
                    lines[number] = json.dumps(_planted(records[number], where, t))
                    return "\n".join(lines) + "\n"

                yield f"{number + 1}:{'.'.join(map(str, where))}", planted
        return
    document = json.loads(text)
    for where in _string_paths(document):

        def planted_doc(t: str, where: tuple[object, ...] = where) -> str:
            return json.dumps(_planted(document, where, t), indent=2)

        yield ".".join(map(str, where)), planted_doc


def all_placements() -> list[Placement]:
    """The whole cross product, in a fixed order."""
    kinds = list(KEYS)
    out: list[Placement] = []
    for position, make in _bbox_positions().items():
        for form, hide in FORMS.items():
            if form == "split" and position != "continuation":
                continue  # only a continuation line can be wrapped onto the next one
            for kind in kinds:
                content = make(hide(KEYS[kind][1]))
                out.append(Placement("bbox", position, kind, form, "session.bbox", content))
    for host, (fmt, path) in _json_hosts().items():
        for position, make in _json_placements(host, fmt, path):
            for form, hide in FORMS.items():
                if form == "split":
                    continue
                for kind in kinds:
                    name = "chat.json" if fmt == "bb7" else path.name
                    out.append(Placement(host, position, kind, form, name, make(hide(KEYS[kind][1]))))
    return out


def _written(placement: Placement, to: str, tmp: Path) -> Placement:
    """The placement's bbox session written by another writer (the key where that writer
    puts the text), kept as it is (``keep_secrets``): a host in that format."""
    from bbox_lark.convert.files import convert_file

    tmp.mkdir(parents=True, exist_ok=True)
    source = tmp / "source.bbox"
    source.write_text(str(placement.content), encoding="utf-8")
    if to == "lightbox":
        folder = tmp / "lightbox-host"
        convert_file(str(source), to=to, output=folder, options={"keep_secrets": True})
        files = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()}
        name = next(n for n in files if n.endswith("events.jsonl"))
        return Placement("lightbox", placement.position, placement.kind, placement.form, name, files)
    out = tmp / f"host.{to}"
    convert_file(str(source), to=to, output=out, options={"keep_secrets": True})
    name = {"jsonl": "session.jsonl", "atif": "trajectory.json"}[to]
    return Placement(
        to, placement.position, placement.kind, placement.form, name, out.read_text(encoding="utf-8")
    )


def sample(placements: list[Placement]) -> list[Placement]:
    """A deterministic sample: for each host and escape form, three positions, each with
    the next kind in turn (so every kind, form and host is met)."""
    if FULL:
        return placements
    chosen: list[Placement] = []
    turn = 0
    groups: dict[tuple[str, str], list[Placement]] = {}
    for placement in placements:
        groups.setdefault((placement.host.split(":")[0], placement.form), []).append(placement)
    rng = random.Random(SEED)
    kinds = list(KEYS)
    for (_, _), group in sorted(groups.items()):
        positions = sorted({p.position for p in group})
        for position in rng.sample(positions, min(3, len(positions))):
            kind = kinds[turn % len(kinds)]
            turn += 1
            chosen += [p for p in group if p.position == position and p.kind == kind]
    return chosen


PLACEMENTS = sample(all_placements())
#: The bbox placements also written by the other writers (their hosts).
WRITTEN_AS = ("jsonl", "atif", "lightbox")
CONVERT_TO = ("bbox", "compact", "atif", "jsonl", "lightbox")
#: Commands per placement: convert to each format and export, with the default options and
#: with --redact; report (masked by default); redact.
COMMANDS = [
    *(f"convert:{to}:{mode}" for to in CONVERT_TO for mode in ("default", "redact")),
    "export:default",
    "export:redact",
    "report:default",
    "redact",
]
RUN: dict[str, int] = {"placements": 0, "runs": 0}


def _materialise(placement: Placement, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(placement.content, dict):
        for name, text in placement.content.items():
            (folder / name).write_text(text, encoding="utf-8")
    else:
        (folder / placement.name).write_text(placement.content, encoding="utf-8")
    return folder / placement.name


def _read_all(path: Path) -> str:
    if path.is_dir():
        return "".join(_read_all(p) for p in sorted(path.iterdir()))
    return path.read_bytes().decode("utf-8", "replace") if path.exists() else ""


def _run(command: str, source: Path, fmt: str, tmp: Path) -> tuple[str, bool]:
    """Run ``command`` on ``source``: (everything it wrote, whether it refused)."""
    from bbox_lark.convert.files import convert_file

    name, *rest = command.split(":")
    tmp.mkdir(parents=True, exist_ok=True)
    if name == "convert":
        to, mode = rest
        out = tmp / f"out-{to}-{mode}"
        done = convert_file(str(source), to=to, output=out, options={"redact": mode == "redact"})
        if done.secrets_refused:
            assert not out.exists(), f"{command}: refused, yet wrote {out}"
        return _read_all(out), done.secrets_refused
    if name == "export":
        pytest.importorskip("pyarrow")
        from bbox_lark.numbers.export import export_tables

        mode = rest[0]
        out = tmp / f"export-{mode}"
        summary = export_tables(
            [str(source)], out, format="csv", secrets="redact" if mode == "redact" else "refuse"
        )
        refused = bool(summary.refused)
        if refused:
            assert summary.exit_code == 1
            assert all(not "".join(_read_all(p).splitlines(True)[1:]) for p in out.iterdir())
        return _read_all(out), refused
    if name == "report":
        from bbox_lark.report import write_report

        out = tmp / "report.html"
        write_report(str(source), out)
        return _read_all(out), False
    assert name == "redact"
    if fmt == "lightbox":
        from bbox_lark.convert.redact import ForeignRedactError, redact_path

        with pytest.raises(ForeignRedactError):
            redact_path(str(source), fmt)
        return "", True
    if fmt == "bbox":
        from bbox_lark.secrets.redaction import redact

        return redact(source.read_text(encoding="utf-8")).text, False
    from bbox_lark.convert.redact import redact_path

    return redact_path(str(source), fmt)[1].text, False


def _check(placement: Placement, tmp: Path) -> None:
    source = _materialise(placement, tmp / "in")
    fmt = placement.host.split(":")[0]
    assert leaks(_read_all(source), placement.kind), f"{placement.id}: the host does not hold its key"
    RUN["placements"] += 1
    for command in COMMANDS:
        if command == "redact" and placement.form == "split" and fmt != "bbox":
            continue  # redact scans each JSON string on its own: a wrapped key is joined by convert
        RUN["runs"] += 1
        written, refused = _run(command, source, fmt, tmp / command.replace(":", "-"))
        assert not leaks(written, placement.kind), (
            f"{placement.id} through {command}: {leaks(written, placement.kind)}"
        )
        if command.startswith(("convert", "export")) and command.endswith(":redact"):
            assert not refused, f"{placement.id} through {command}: refused with --redact"


@pytest.mark.parametrize("placement", PLACEMENTS, ids=lambda p: p.id)
def test_no_output_holds_a_planted_key(placement: Placement, tmp_path: Path) -> None:
    _check(placement, tmp_path)


#: The bbox placements written by the other writers: a sample of their own.
WRITTEN = [p for i, p in enumerate(PLACEMENTS) if p.host == "bbox" and (FULL or i % 4 == 0)]


@pytest.mark.parametrize("to", WRITTEN_AS)
@pytest.mark.parametrize("placement", WRITTEN, ids=lambda p: p.id)
def test_no_output_holds_a_key_written_by_another_writer(
    placement: Placement, to: str, tmp_path: Path
) -> None:
    host = _written(placement, to, tmp_path / "host")
    if not leaks(_read_all(_materialise(host, tmp_path / "probe")), host.kind):
        pytest.skip(f"the {to} writer does not carry text from {placement.position}")
    _check(host, tmp_path)


@pytest.mark.parametrize("kind", list(KEYS))
@pytest.mark.parametrize(
    "position", ["user", "argument", "field-value", "result", "continuation", "header-value"]
)
def test_convert_and_export_refuse_a_file_with_a_key(kind: str, position: str, tmp_path: Path) -> None:
    """Without --redact or --keep-secrets, nothing is written for a file with a credential;
    with --keep-secrets it is written as it is."""
    from bbox_lark.convert.files import convert_file

    placement = Placement(
        "bbox",
        position,
        kind,
        "plain",
        "session.bbox",
        _bbox_positions()[position](FORMS["plain"](KEYS[kind][1])),
    )
    source = _materialise(placement, tmp_path / "in")
    for to in CONVERT_TO:
        out = tmp_path / f"out-{to}"
        done = convert_file(str(source), to=to, output=out)
        assert done.secrets_refused and done.exit_code == 1 and not out.exists(), to
        assert done.credentials or done.verdict.errors
        assert not leaks("\n".join(done.credentials), kind)
        kept = convert_file(
            str(source), to=to, output=tmp_path / f"kept-{to}", options={"keep_secrets": True}
        )
        assert not kept.secrets_refused, to
        if to in ("bbox", "jsonl"):  # lossless: the key is there as it was
            assert leaks(_read_all(tmp_path / f"kept-{to}"), kind), to


def test_the_keys_are_found_as_their_kind() -> None:
    for kind, (_, key) in KEYS.items():
        assert [m.kind for m in find_secrets(key)] == [kind]
        for form, hide in FORMS.items():
            text = hide(key).replace("\n", "\n  ") if form == "split" else hide(key)  # continuation lines
            found = find_secrets(text)
            assert found and found[0].kind == kind, (kind, form)


def test_the_count_of_placements_and_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """The count the lead quotes: placements × commands in this run (and in the full one)."""
    total = len(all_placements())
    runs = len(PLACEMENTS) * len(COMMANDS)
    written = len(WRITTEN) * len(WRITTEN_AS) * len(COMMANDS)
    with capsys.disabled():
        print(
            f"\nleak harness: {len(PLACEMENTS)} placements × {len(COMMANDS)} commands = {runs} runs"
            f" (+ {len(WRITTEN)} × {len(WRITTEN_AS)} hosts by other writers × {len(COMMANDS)} = {written});"
            f" the full product: {total} placements × {len(COMMANDS)} = {total * len(COMMANDS)}"
            f" ({'full' if FULL else 'sampled; BBOX_LARK_LEAKS=full runs it all'});"
            f" the Writer: {len(WRITER_CASES)} place × form × kind cases, 12 secrets known by their name"
        )
    assert len(PLACEMENTS) >= len(KEYS) and {p.kind for p in PLACEMENTS} == set(KEYS)
    assert {p.form for p in PLACEMENTS} == set(FORMS)


# -- the Writer ---------------------------------------------------------------------------------

WRITER_HEADER = {"id": "leak-test", "repo_sha": "215db51"}

#: Each place the Writer takes text: (name, how to put ``text`` there).
WRITER_PLACES: dict[str, Callable[[object, str], object]] = {
    "header-value": lambda w, t: None,  # given to the Writer's constructor (below)
    "user": lambda w, t: w.user(t),  # type: ignore[attr-defined]
    "agent": lambda w, t: w.agent(t),  # type: ignore[attr-defined]
    "thinking": lambda w, t: w.thinking(t),  # type: ignore[attr-defined]
    "comment": lambda w, t: w.comment(t),  # type: ignore[attr-defined]
    "message-field": lambda w, t: w.user("hi", note=t),  # type: ignore[attr-defined]
    "call-argument": lambda w, t: w.call("bash", t).finish(),  # type: ignore[attr-defined]
    "call-field": lambda w, t: w.call("read", path=t).finish(),  # type: ignore[attr-defined]
    "result": lambda w, t: w.call("bash", "env").finish(t),  # type: ignore[attr-defined]
    "result-field": lambda w, t: w.call("bash", "env").finish(None, note=t),  # type: ignore[attr-defined]
    "progress": lambda w, t: w.call("bash", "env").progress(t),  # type: ignore[attr-defined]
}


def _write(place: str, text: str) -> str:
    import io

    from bbox_lark import Writer

    out = io.StringIO()
    header = {**WRITER_HEADER, "cwd": text} if place == "header-value" else WRITER_HEADER
    writer = Writer(out, header)
    WRITER_PLACES[place](writer, text)
    writer.close()
    return out.getvalue()


WRITER_CASES = [
    (place, form, kind)
    for i, (place, form, kind) in enumerate(
        (p, f, k) for p in WRITER_PLACES for f in FORMS if f != "split" for k in KEYS
    )
    if FULL or i % 7 == 0
]


@pytest.mark.parametrize(("place", "form", "kind"), WRITER_CASES)
def test_the_writer_writes_no_planted_key(place: str, form: str, kind: str) -> None:
    RUN["runs"] += 1
    written = _write(place, FORMS[form](KEYS[kind][1]))
    assert not leaks(written, kind), written


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("password", "Fk9q2LmZ7vXw4RtY8pQs" + "x7"),
        ("aws_secret_access_key", "FAKEfakeFAKEfake/0123456789+notARealKey" + "0"),
        ("api_key", "Qx7Lm2Pz9Kw4Rt8Yv3Nb6Hd" + "1J"),
    ],
)
@pytest.mark.parametrize(
    "how",
    [
        "message-field",
        "call-field",
        "result-field",
        "argument-assignment",
    ],
)
def test_the_writer_judges_a_value_by_its_name(how: str, name: str, value: str) -> None:
    """A secret that only its name makes one (``password=…``, ``aws_secret_access_key=…``):
    as a field of the Writer's lines, and written inside an argument (``name=value``)."""
    import io

    from bbox_lark import Writer

    out = io.StringIO()
    writer = Writer(out, WRITER_HEADER)
    if how == "message-field":
        writer.user("hi", **{name: value})
    elif how == "call-field":
        writer.call("deploy", **{name: value}).finish()
    elif how == "result-field":
        writer.call("deploy").finish(None, **{name: value})
    else:
        writer.call("bash", f"export {name}={value}").finish()
    writer.close()
    assert value not in out.getvalue()


def _with_key_as_name(value: object, key: str, nested: bool) -> object:
    """``value`` (a JSON host's record or document) with ``key`` as an object's key: at its
    top level, or (``nested``) in its first object-valued member too."""
    assert isinstance(value, dict)
    out: dict[str, object] = {**value, key: "named"}
    if nested:
        inner = next((name for name, item in value.items() if isinstance(item, dict)), None)
        if inner is not None:
            out[inner] = {**value[inner], key: "named"}
    return out


#: The JSON hosts a key is planted as an object's key in: the project's own, and every
#: external one with ``BBOX_LARK_LEAKS=full``.
NAME_HOSTS = sorted(_json_hosts()) if FULL else ["bb7:v2_parts", "claude-code:tool-ids"]


@pytest.mark.parametrize("nested", [False, True], ids=["top", "nested"])
@pytest.mark.parametrize("kind", list(KEYS))
@pytest.mark.parametrize("host", NAME_HOSTS)
def test_no_output_holds_a_key_planted_as_an_object_s_key(
    host: str, kind: str, nested: bool, tmp_path: Path
) -> None:
    """A key as a name, not a value (``{"sk-ant-…": 1}``): no converter, export or report
    writes it, and ``redact``, which rewrites string values in place, refuses the file
    (DECISIONS §13: never carried silently into anything we write)."""
    from bbox_lark.convert.redact import ForeignRedactError, redact_path

    fmt, path = _json_hosts()[host]
    key = KEYS[kind][1]
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        records[0] = _with_key_as_name(records[0], key, nested)
        content = "\n".join(json.dumps(r) for r in records) + "\n"
    else:
        content = json.dumps(_with_key_as_name(json.loads(text), key, nested), indent=2)
    source = _materialise(Placement(fmt, "object-key", kind, "plain", path.name, content), tmp_path / "in")
    assert leaks(_read_all(source), kind)
    for command in COMMANDS:
        if command == "redact":
            with pytest.raises(ForeignRedactError) as refused:
                redact_path(str(source), fmt)
            assert not leaks(str(refused.value), kind)
            continue
        written, _ = _run(command, source, fmt, tmp_path / command.replace(":", "-"))
        assert not leaks(written, kind), f"{host}:{kind} through {command}: {leaks(written, kind)}"

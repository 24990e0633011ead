"""``--to atif`` and ``--from atif`` (docs/formats/atif.md).

The judge is the ``atif`` package (the ATIF v1.8 Pydantic models, a test dependency only):
every trajectory written here must load with ``atif.Trajectory``. Round trips:

- bbox → ATIF → bbox keeps every line's values (kind, name, arguments, fields, result,
  metrics, continuation lines) for the corpus, the examples, the external bbox logs (when
  ``../shared/corpus-external`` is there) and generated documents;
- ATIF → bbox → ATIF gives a trajectory equal to the input, once loaded with the models, for
  every valid external trajectory and for generated ones; the bbox in between has no errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import atif
import pytest
from conftest import CORPUS_MAX_LINE
from hypothesis import given
from hypothesis import strategies as st
from printer_support import documents, fuzz_settings
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from typer.testing import CliRunner

import bbox_lark
from bbox_lark.cli import app
from bbox_lark.convert import RefusedInputError, convert, detect_format, get_format
from bbox_lark.convert.atif import step_problems, trajectory_problems

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
EXTERNAL = ROOT.parent / "shared" / "corpus-external"
ATIF_DIR = EXTERNAL / "atif"
HEADER = (
    "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\nagent: claude-code\nversion: 1.0.3\nmodel: opus\n---\n"
)
BIG = 1 << 22

runner = CliRunner()


def bbox_paths() -> list[Path]:
    found = sorted(CORPUS.rglob("*.bbox")) + sorted((ROOT / "examples").rglob("*.bbox"))
    for folder in ("bbox-docs", "rlog-real"):
        base = EXTERNAL / folder
        if base.is_dir():
            found += sorted(p for p in base.iterdir() if p.suffix in (".bbox", ".rlog"))
    return found


def atif_paths(valid: bool) -> list[Path]:
    if not ATIF_DIR.is_dir():
        return []
    return sorted(p for p in ATIF_DIR.glob("*.json") if (".INVALID-" in p.name) != valid)


def path_id(path: Path) -> str:
    return path.name


def to_atif(text: bytes | str, **options: Any) -> tuple[dict[str, Any], Any]:
    result = convert(text, "bbox", to="atif", max_line=BIG, **options)
    data = json.loads(result.text)
    atif.Trajectory.model_validate(data)
    return data, result


def faithful(doc: bbox_lark.Document) -> bool:
    """A document ``convert`` reads faithfully (no unterminated quote in a call part: such a
    line is printed as written, never from its values; DECISIONS §11)."""
    return not any(event.quote_faults for event in doc.events)


def values(doc: bbox_lark.Document) -> list[Any]:
    return [event.values() for event in doc.events]


# -- bbox → ATIF ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", bbox_paths(), ids=path_id)
def test_bbox_export_validates_and_comes_back(path: Path) -> None:
    data = path.read_bytes()
    trajectory, result = to_atif(data)
    assert trajectory["schema_version"] == "ATIF-v1.8"
    doc = bbox_lark.parse(data, max_line=BIG)
    back = convert(result.text, "atif", to="bbox", max_line=BIG)
    if faithful(doc):
        assert not back.skipped
        assert values(bbox_lark.parse(back.text, max_line=BIG)) == values(doc)
        # Line kinds, blank lines included, come back in order.
        kinds = [n.kind for n in doc.lines if n.kind != "continuation"]
        assert [
            n.kind for n in bbox_lark.parse(back.text, max_line=BIG).lines if n.kind != "continuation"
        ] == kinds


def test_mapping_of_a_small_session() -> None:
    text = HEADER + (
        "u: Fix the login bug step=1 ts=2025-01-02T10:00:00Z\n"
        "th: the session code is suspect\n"
        "a: I'll look step=2 ts=2025-01-02T10:00:05Z\n"
        "t:read src/auth.rs id=c1 → [120 lines]\n"
        't!:Bash id=c2 cmd="cargo test" → [running]\n'
        "# a plain comment\n"
        "@checkpoint id=k1\n"
        "o: id=c2 → [ok] 12 passed\n"
        "  all green\n"
        "# metrics step=2 prompt_tokens=100 completion_tokens=20 cached=40 cost_usd=0.01 reasoning=7\n"
        'x:explore id=x1 "find callers" → session_id=sub-1 path=subs/sub-1.json\n'
        "t:fetch → @blob sha256=" + "ab" * 32 + " bytes=10\n"
        "a: done ts=yesterday\n"
    )
    trajectory, result = to_atif(text)
    steps = trajectory["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "agent"]
    assert [s["step_id"] for s in steps] == [1, 2, 3]
    assert trajectory["session_id"] == "s1"
    assert trajectory["agent"] == {"name": "claude-code", "version": "1.0.3", "model_name": "opus"}
    assert trajectory["extra"]["bbox"]["header"]["repo_sha"] == "215db51"
    user, agent, last = steps
    assert user["message"] == "Fix the login bug"
    assert user["timestamp"] == "2025-01-02T10:00:00Z"
    assert agent["reasoning_content"] == "the session code is suspect"
    assert agent["message"] == "I'll look"
    calls = {c["tool_call_id"]: c for c in agent["tool_calls"]}
    assert calls["c1"]["arguments"] == {"args": ["src/auth.rs"]}
    assert calls["c2"]["arguments"] == {"cmd": "cargo test"}
    results = {r["source_call_id"]: r for r in agent["observation"]["results"]}
    assert results["c1"]["content"] == "[120 lines]"
    # The deferred o: folds back into its call's step, continuation lines with it.
    assert results["c2"]["content"] == "[ok] 12 passed\nall green"
    assert agent["metrics"] == {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "cached_tokens": 40,
        "cost_usd": 0.01,
        "extra": {"reasoning": "7"},
    }
    assert results["x1"]["subagent_trajectory_ref"] == [
        {"trajectory_path": "subs/sub-1.json", "session_id": "sub-1"}
    ]
    blob = next(r for r in agent["observation"]["results"] if "blob" in r.get("extra", {}))
    assert blob["extra"]["blob"] == {"sha256": "ab" * 32, "bytes": "10", "mime": None}
    assert "timestamp" not in last and last["extra"]["bbox"]["ts"] == "yesterday"
    # Comments and lifecycle lines are in the step's records.
    kinds = [r["kind"] for r in agent["extra"]["bbox"]["lines"]]
    assert "comment" in kinds and "lifecycle" in kinds
    report = {(e.action, e.what): e.count for e in result.fidelity.entries}
    assert report[("synthesized", "step_ids")] == 3
    assert report[("extra", "lifecycle lines")] == 1
    assert report[("extra", "malformed ts= values")] == 1
    assert report[("extra", "blob pointers (with their hash)")] == 1


def test_a_session_id_alone_goes_to_extra() -> None:
    trajectory, result = to_atif(HEADER + "x:explore id=x1 → session_id=sub-1\n")
    assert result.fidelity.count("extra", "x: session_id= without path= (no valid reference since v1.7)") == 1
    observed = trajectory["steps"][0]["observation"]["results"][0]
    assert "subagent_trajectory_ref" not in observed
    assert observed["extra"]["session_id"] == "sub-1"


def test_reused_ids_get_unique_tool_call_ids() -> None:
    text = HEADER + (
        "a: go\n"
        "t!:Bash id=toolu_01 → [running]\n"
        "t!:Read id=toolu_01 → [running]\n"
        "o: id=toolu_01 → [ok]\n"
        "o: id=toolu_01 → [ok]\n"
    )
    trajectory, result = to_atif(text)
    step = trajectory["steps"][0]
    ids = [c["tool_call_id"] for c in step["tool_calls"]]
    assert len(set(ids)) == 2 and ids[0] == "toolu_01"
    assert step["tool_calls"][1]["extra"]["id"] == "toolu_01"
    # Each o: closes the oldest open call, as correlate pairs them.
    assert [r["source_call_id"] for r in step["observation"]["results"]] == ids
    assert (
        result.fidelity.count("synthesized", "unique tool_call_ids (an id reused while a call was open)") == 1
    )


def test_real_logs_with_reused_ids_validate() -> None:
    base = EXTERNAL / "rlog-real"
    if not base.is_dir():
        pytest.skip("no external corpus")
    reused = 0
    for path in sorted(base.glob("*.rlog"))[:20]:
        trajectory, result = to_atif(path.read_bytes())
        for step in trajectory["steps"]:
            ids = [c["tool_call_id"] for c in step.get("tool_calls", ())]
            assert len(ids) == len(set(ids))
        reused += result.fidelity.count(
            "synthesized", "unique tool_call_ids (an id reused while a call was open)"
        )
    assert reused > 0


def test_usage_on_event_lines_gives_step_metrics_and_final_metrics() -> None:
    """DECISIONS §12: one response's usage, restated on each of its lines, counts once (the
    largest tokens_out); ATIF's prompt_tokens include the cached tokens; final_metrics are
    the numbers stats reports, with the stated cost."""
    text = HEADER + (
        "u: go\n"
        "a: I'll look. tokens_in=2 tokens_out=2 tokens_cached=100\n"
        "t!:read id=A → [running] tokens_in=2 tokens_out=216 tokens_cached=100\n"
        "o: id=A → [ok]\n"
        "a: done tokens_in=5 tokens_out=40 tokens_cached=300\n"
        "@end cost_usd=0.25\n"
    )
    trajectory, result = to_atif(text)
    metrics = [step.get("metrics") for step in trajectory["steps"]]
    assert metrics == [
        None,
        {"prompt_tokens": 102, "completion_tokens": 216, "cached_tokens": 100},
        {"prompt_tokens": 305, "completion_tokens": 40, "cached_tokens": 300},
    ]
    assert trajectory["final_metrics"] == {
        "total_prompt_tokens": 407,
        "total_completion_tokens": 256,
        "total_cached_tokens": 400,
        "total_cost_usd": 0.25,
        "total_steps": 3,
    }
    from bbox_lark.numbers.session import document_numbers

    usage = document_numbers(bbox_lark.parse(text), estimate=False).totals.usage
    assert (usage.input_with_cache, usage.tokens_out, usage.tokens_cached) == (407, 256, 400)
    back = convert(result.text, "atif", to="bbox", max_line=BIG)
    assert values(bbox_lark.parse(back.text)) == values(bbox_lark.parse(text))


def test_metrics_comments_win_over_event_line_usage() -> None:
    text = HEADER + (
        "a: one step=1 tokens_in=9 tokens_out=9 # metrics prompt_tokens=50 completion_tokens=5\n"
        "a: two step=2 tokens_in=7 tokens_out=7\n"
    )
    trajectory, _ = to_atif(text)
    assert [step.get("metrics") for step in trajectory["steps"]] == [
        {"prompt_tokens": 50, "completion_tokens": 5},
        None,
    ]
    assert trajectory["final_metrics"]["total_prompt_tokens"] == 50


def test_client_version_is_the_agent_version() -> None:
    header = (
        "---\nformat: bbox/1\nid: s\nrepo_sha: unknown\nagent: claude-code\nclient_version: 2.0.76\n---\n"
    )
    trajectory, _ = to_atif(header + "u: hi\n")
    assert trajectory["agent"]["version"] == "2.0.76"
    trajectory, _ = to_atif(header.replace("client_version: 2.0.76\n", "version: 1.0\n") + "u: hi\n")
    assert trajectory["agent"]["version"] == "1.0"


def test_real_logs_carry_step_metrics() -> None:
    base = EXTERNAL / "rlog-real"
    if not base.is_dir():
        pytest.skip("no external corpus")
    from bbox_lark.numbers.session import read_session

    for path in sorted(base.glob("*.rlog"))[:5]:
        trajectory, _ = to_atif(path.read_bytes())
        with_metrics = [s for s in trajectory["steps"] if s.get("metrics")]
        totals = read_session(path.read_bytes(), estimate=False).totals
        assert 0 < len(with_metrics) <= totals.responses  # a step may take several responses
        final = trajectory["final_metrics"]
        assert final["total_completion_tokens"] == totals.usage.tokens_out
        assert sum(s["metrics"]["completion_tokens"] for s in with_metrics) == totals.usage.tokens_out


def test_empty_id_leaves_session_id_out_and_comes_back() -> None:
    text = "---\nformat: bbox/1\nid:\nrepo_sha: 215db51\n---\nu: hi\n"
    trajectory, result = to_atif(text)
    assert "session_id" not in trajectory
    assert trajectory["agent"] == {"name": "unknown", "version": "unknown"}
    assert result.fidelity.count("synthesized", "agent name (the header has no agent:)") == 1
    back = convert(result.text, "atif", to="bbox")
    assert back.text == text


def test_a_document_without_steps_is_one_system_step() -> None:
    trajectory, _ = to_atif(HEADER + "# just a comment\n@start\n")
    assert [s["source"] for s in trajectory["steps"]] == ["system"]


def test_atif_version_option() -> None:
    trajectory, _ = to_atif(HEADER + "u: hi\n", atif_version="1.7")
    assert trajectory["schema_version"] == "ATIF-v1.7"
    trajectory, _ = to_atif(HEADER + "u: hi\n", atif_version="ATIF-v1.8")
    assert trajectory["schema_version"] == "ATIF-v1.8"
    result = runner.invoke(app, ["convert", "-", "--to", "atif", "--atif-version", "2.0"], input=HEADER)
    assert result.exit_code == 2 and "--atif-version" in result.output


def test_v17_output_has_no_audio_parts() -> None:
    source = {
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {
                "step_id": 1,
                "source": "user",
                "message": [{"type": "audio", "source": {"media_type": "audio/wav", "path": "a.wav"}}],
            }
        ],
    }
    bbox = convert(json.dumps(source), "atif", to="bbox").text
    out = convert(bbox, "bbox", to="atif", atif_version="1.7")
    data = json.loads(out.text)
    assert data["steps"][0]["message"] == [{"type": "text", "text": "[audio: a.wav]"}]
    assert out.fidelity.count("dropped") == 1


# -- ATIF → bbox ---------------------------------------------------------------------------


def check_errors(text: str) -> list[Any]:
    return [d for d in bbox_lark.check(text, max_line=BIG) if d.severity == "error"]


@pytest.mark.parametrize("path", atif_paths(valid=True), ids=path_id)
def test_external_trajectory_round_trip(path: Path) -> None:
    data = path.read_bytes()
    assert detect_format(path, data) == "atif"
    imported = convert(data, "atif", to="bbox", path=path, max_line=BIG)
    assert not imported.skipped
    assert check_errors(imported.text) == []
    header = bbox_lark.parse(imported.text).header
    assert header["atif"] == json.loads(data)["schema_version"]
    assert header["repo_sha"] == "unknown"
    back = convert(imported.text, "bbox", to="atif", max_line=BIG)
    # A trajectory that names its continuation (continued_trajectory_ref) is read with it, as
    # one session (issue 29): what comes back is the chain, merged.
    from bbox_lark.convert.atif.lines import merge_chain
    from bbox_lark.convert.base import Input

    merged = merge_chain(Input(path))
    original = atif.Trajectory.model_validate_json(data if merged is None else merged)
    assert atif.Trajectory.model_validate_json(back.text) == original
    assert json.loads(back.text)["schema_version"] == original.schema_version


@pytest.mark.parametrize("path", atif_paths(valid=False), ids=path_id)
def test_invalid_trajectories_are_refused(path: Path) -> None:
    with pytest.raises(Exception) as raised:
        atif.Trajectory.model_validate_json(path.read_bytes())
    assert raised.type.__name__ == "ValidationError"  # the judge refuses it too
    with pytest.raises(RefusedInputError, match="agent: required"):
        convert(path.read_bytes(), "atif", to="bbox")
    result = runner.invoke(app, ["convert", str(path), "--to", "bbox"])
    assert result.exit_code == 2
    assert "not a valid ATIF trajectory: agent: required" in result.output
    assert "Traceback" not in result.output


def test_repo_sha_option() -> None:
    source = {"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": []}
    out = convert(json.dumps(source), "atif", to="bbox", repo_sha="0123abcd").text
    assert bbox_lark.parse(out).header["repo_sha"] == "0123abcd"
    assert bbox_lark.parse(out).header["id"].startswith("imported-")


def test_import_is_natural_bbox() -> None:
    source = {
        "schema_version": "ATIF-v1.8",
        "session_id": "run-7",
        "agent": {"name": "bot", "version": "2", "model_name": "m1"},
        "steps": [
            {
                "step_id": 1,
                "source": "user",
                "message": "Read a.rs\n\nplease",
                "timestamp": "2025-01-01T00:00:00Z",
            },
            {
                "step_id": 2,
                "source": "agent",
                "message": "ok",
                "reasoning_content": "easy",
                "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "read", "arguments": {"path": "a.rs"}},
                    {"tool_call_id": "c2", "function_name": "edit", "arguments": {"n": 3}},
                ],
                "observation": {"results": [{"source_call_id": "c1", "content": "fn main() {}  "}]},
                "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.5},
            },
        ],
    }
    out = convert(json.dumps(source), "atif", to="bbox").text
    body = out.split("---\n", 2)[2]
    assert body == (
        "u: step=1 ts=2025-01-01T00:00:00Z\n"
        "  | Read a.rs\n"
        "  |\n"
        "  | please\n"
        "th: step=2\n"
        "  | easy\n"
        "a: step=2\n"
        "  | ok\n"
        "t:read id=c1 path=a.rs\n"
        "t:edit id=c2\n"
        '  +arguments {"n": 3}\n'
        "o: id=c1 →\n"
        "  | fn main() {}  \n"
        "# metrics step=2 prompt_tokens=10 completion_tokens=2 cost_usd=0.5\n"
    )
    assert check_errors(out) == []
    assert atif.Trajectory.model_validate_json(convert(out, "bbox", to="atif").text) == atif.Trajectory(
        **source
    )


# -- bad input -----------------------------------------------------------------------------


def invoke(*args: str, input: str | None = None) -> Any:
    result = runner.invoke(app, ["convert", *args], input=input)
    assert "Traceback" not in result.output
    return result


def test_malformed_json_names_line_and_column() -> None:
    result = invoke(
        "-", "--from", "atif", "--to", "bbox", input='{"schema_version": "ATIF-v1.8",\n  "agent": }\n'
    )
    assert result.exit_code == 2
    assert "not valid JSON at line 2, column 12: Expecting value" in result.output


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("[1, 2]", "must be a JSON object"),
        (
            '{"schema_version": "v1", "agent": {"name": "a", "version": "1"}, "steps": []}',
            "does not start with",
        ),
        ('{"schema_version": "ATIF-v1.8", "agent": {"name": "a"}, "steps": []}', "agent.version: required"),
        ('{"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}}', "steps: required"),
        (
            '{"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": [], "x": 1}',
            "unknown key 'x'",
        ),
        ("\xff\xfe", "not UTF-8"),
        ("[" * 100_000, "nested too deeply"),
        (
            '{"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": ['
            + "9" * 5000
            + "]}",
            "not valid JSON at line 1, column 83: a number too long",
        ),
    ],
)
def test_refused_documents(data: str, message: str) -> None:
    with pytest.raises(RefusedInputError, match=message):
        convert(data.encode("latin-1") if data.startswith("\xff") else data, "atif", to="bbox")


def test_a_refusal_names_where_the_problem_is() -> None:
    data = '{"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": [], "x": 1}'
    with pytest.raises(RefusedInputError) as caught:
        convert(data, "atif", to="bbox")
    assert str(caught.value) == "not a valid ATIF trajectory: the document: unknown key 'x'"


def test_bad_steps_are_skipped_with_their_place() -> None:
    source = {
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "a", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {"step_id": 2, "source": "robot", "message": "?"},
            {
                "step_id": 3,
                "source": "agent",
                "message": "x",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "f", "arguments": {}}],
                "observation": {"results": [{"source_call_id": "c9", "content": "lost"}]},
            },
            {"step_id": 4, "source": "agent", "message": "bye"},
        ],
    }
    text = json.dumps(source, indent=2)
    result = convert(text, "atif", to="bbox")
    skipped = {s.message.split(":")[0]: s for s in result.skipped}
    assert set(skipped) == {
        "steps[1] (step_id 2).source",
        "steps[2] (step_id 3).observation.results[0].source_call_id",
    }
    lines = text.split("\n")
    for entry in result.skipped:
        assert '"step_id"' in lines[entry.line - 1]
    assert (
        "'c9' matches no tool call"
        in skipped["steps[2] (step_id 3).observation.results[0].source_call_id"].message
    )
    # The rest is converted (the comment holds `+session_id null`: the source has none).
    doc = bbox_lark.parse(result.text)
    assert [e.kind for e in doc.events] == ["comment", "user", "agent"]
    cli = invoke("-", "--from", "atif", "--to", "bbox", input=text)
    assert cli.exit_code == 1
    assert "skipped: steps[1] (step_id 2).source: 'robot' is not one of system, user, agent" in cli.output


def test_structure_checks_name_the_problem() -> None:
    assert step_problems({"step_id": 1, "source": "user", "message": "x", "metrics": {}}, 0) == [
        "steps[0] (step_id 1).metrics: only valid on agent steps"
    ]
    assert step_problems({"step_id": 1, "source": "agent", "message": [{"type": "image"}]}, 0) == [
        "steps[0] (step_id 1).message[0]: an image part needs a `source` with a string `path`"
    ]
    ref = {"subagent_trajectory_ref": [{"session_id": "s"}]}
    step = {"step_id": 1, "source": "system", "message": "", "observation": {"results": [ref]}}
    assert "a session_id alone is no reference" in step_problems(step, 0)[0]
    sub = {"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": []}
    root = {**sub, "subagent_trajectories": [sub]}
    assert trajectory_problems(root) == [
        "subagent_trajectories[0]: an embedded trajectory must set trajectory_id"
    ]


def test_sniffing() -> None:
    fmt = get_format("atif")
    assert fmt.sniff('{\n  "schema_version": "ATIF-v1.7", "steps": [') == 3
    assert fmt.sniff('{"messages": []}') == 0
    assert fmt.sniff("---\nformat: bbox/1\n") == 0


def test_the_converter_needs_no_atif_package() -> None:
    code = (
        "import sys; sys.modules['atif'] = None\n"
        "from bbox_lark.convert import convert\n"
        "head = '---\\nformat: bbox/1\\nid: s\\nrepo_sha: abcdef1\\n---\\n'\n"
        "t = convert(head + 'u: hi\\n', 'bbox', to='atif').text\n"
        "print(convert(t, 'atif', to='bbox').text, end='')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("u: hi\n")


# -- generated documents -------------------------------------------------------------------


@fuzz_settings(60)
@given(documents())
def test_generated_documents_export_and_come_back(text: str) -> None:
    doc = bbox_lark.parse(text, max_line=CORPUS_MAX_LINE)
    _, result = to_atif(text)
    if faithful(doc):
        back = convert(result.text, "atif", to="bbox", max_line=BIG)
        assert not back.skipped
        assert values(bbox_lark.parse(back.text, max_line=BIG)) == values(doc)


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_WORD = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_WORD, inner, max_size=3),
    max_leaves=6,
)
_PART = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(lambda p: {"type": "image", "source": {"media_type": "image/png", "path": p}}, _WORD),
    st.builds(lambda p: {"type": "audio", "source": {"media_type": "audio/mpeg", "path": p}}, _WORD),
)
_CONTENT = st.one_of(_TEXT, st.lists(_PART, max_size=2))
_STAMP = st.sampled_from(
    ["2025-10-11T10:30:00Z", "2025-10-11T10:30:00.123+02:00", "2025-10-11 10:30", "2025-10-11"]
)


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def trajectories(draw: st.DrawFn) -> dict[str, Any]:
    """Valid ATIF trajectories: every step kind, text with blank lines, trailing spaces and
    control characters, multimodal parts, arguments of every JSON type, metrics, extras."""
    steps = []
    for number in range(1, draw(st.integers(1, 5)) + 1):
        source = draw(st.sampled_from(["system", "user", "agent"]))
        step: dict[str, Any] = {"step_id": number, "source": source, "message": draw(_CONTENT)}
        for key, strategy in (
            ("timestamp", _STAMP),
            ("extra", st.dictionaries(_WORD, _JSON, max_size=2)),
            ("is_copied_context", st.booleans()),
            ("llm_call_count", st.integers(1, 3)),
        ):
            value = draw(_optional(strategy))
            if value is not None:
                step[key] = value
        calls: list[dict[str, Any]] = []
        if source == "agent":
            for key, strategy in (
                ("model_name", _WORD),
                ("reasoning_content", _TEXT),
                ("reasoning_effort", st.one_of(_WORD, st.floats(0, 1))),
            ):
                value = draw(_optional(strategy))
                if value is not None:
                    step[key] = value
            for n in range(draw(st.integers(0, 3))):
                call = {
                    "tool_call_id": draw(st.sampled_from([f"call_{number}_{n}", f"id with space {n}"])),
                    "function_name": draw(st.sampled_from(["read", "Bash", "mcp__github__get", "a b"])),
                    "arguments": draw(
                        st.dictionaries(st.sampled_from(["path", "id", "n", "x-y", "1a"]), _JSON, max_size=3)
                    ),
                }
                if draw(st.booleans()):
                    call["extra"] = {"k": draw(_JSON)}
                calls.append(call)
            if calls or draw(st.booleans()):
                step["tool_calls"] = calls
            if draw(st.booleans()):
                metrics = {
                    "prompt_tokens": draw(st.integers(0, 10**6)),
                    "cost_usd": draw(st.floats(0, 10, allow_nan=False)),
                }
                if draw(st.booleans()):
                    metrics["logprobs"] = [-0.5, -0.25]
                    metrics["extra"] = {"reasoning_tokens": 3}
                step["metrics"] = metrics
        results = []
        for call in calls:
            if draw(st.booleans()):
                result: dict[str, Any] = {"source_call_id": call["tool_call_id"]}
                content = draw(_optional(_CONTENT))
                if content is not None:
                    result["content"] = content
                results.append(result)
        if draw(st.booleans()):
            results.append(
                {
                    "content": draw(_TEXT),
                    "subagent_trajectory_ref": [{"trajectory_id": "sub", "extra": {"n": 1}}],
                }
            )
        if results or draw(st.booleans()):
            step["observation"] = {"results": draw(st.permutations(results))}
        steps.append(step)
    # Audio parts are new in v1.8 (a v1.7 output names them in text parts instead).
    audio = '"type": "audio"' in json.dumps(steps)
    trajectory: dict[str, Any] = {
        "schema_version": "ATIF-v1.8" if audio else draw(st.sampled_from(["ATIF-v1.7", "ATIF-v1.8"])),
        "agent": {"name": draw(_WORD), "version": draw(st.sampled_from(["1.0", "0", "2.1.178", " x"]))},
        "steps": steps,
    }
    for key, strategy in (
        ("session_id", st.one_of(_WORD, st.just(""))),
        ("trajectory_id", _WORD),
        ("notes", _TEXT),
        ("final_metrics", st.builds(lambda n: {"total_steps": n, "extra": {"a": [1]}}, st.integers(0, 9))),
        ("extra", st.dictionaries(_WORD, _JSON, max_size=2)),
    ):
        value = draw(_optional(strategy))
        if value is not None:
            trajectory[key] = value
    if draw(st.booleans()):
        trajectory["agent"]["model_name"] = draw(_TEXT)
        trajectory["agent"]["tool_definitions"] = [{"type": "function", "function": {"name": "read"}}]
    return trajectory


@fuzz_settings(60)
@given(trajectories())
def test_generated_trajectories_come_back_equal(source: dict[str, Any]) -> None:
    original = atif.Trajectory.model_validate(source)
    imported = convert(json.dumps(source), "atif", to="bbox")
    assert not imported.skipped
    assert check_errors(imported.text) == []
    back = convert(imported.text, "bbox", to="atif")
    assert atif.Trajectory.model_validate_json(back.text) == original


# -- snapshots -----------------------------------------------------------------------------


class JsonSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "json"


@pytest.mark.parametrize(
    "path", [ROOT / "examples" / "demo.bbox", CORPUS / "valid" / "metrics-inline.bbox"], ids=path_id
)
def test_snapshot(path: Path, snapshot: SnapshotAssertion) -> None:
    result = convert(path.read_bytes(), "bbox", to="atif")
    atif.Trajectory.model_validate_json(result.text)
    assert result.text == snapshot.use_extension(JsonSnapshotExtension)


def test_blank_lines_between_continuation_lines_come_back_in_place() -> None:
    text = (
        "---\nformat: bbox/1\nid: s\nrepo_sha: abcdef1\n---\n"
        "u: hello\na: first\n  one\n\n  two\nt:read a.rs → [ok]\n  out1\n\n\n  out2\na: done\n"
    )
    exported = convert(text, "bbox", to="atif").text
    back = convert(exported, "atif", to="bbox").text
    assert back == text


def test_subagent_threads_become_embedded_trajectories() -> None:
    """A Claude Code session with two subagents (their logs beside it): each subagent's
    thread is an embedded trajectory the Task's result references by trajectory_id; the
    document still comes back whole from the parent's records."""
    path = Path(__file__).parent / "fixtures" / "claude-code-subagents" / "sess-sub.jsonl"
    text = convert(path.read_bytes(), "claude-code", to="bbox", path=path).text
    trajectory, result = to_atif(text)
    embedded = trajectory["subagent_trajectories"]
    assert [t["trajectory_id"] for t in embedded] == ["a1", "b2"]
    refs = [
        ref["trajectory_id"]
        for step in trajectory["steps"]
        for r in (step.get("observation") or {}).get("results", ())
        for ref in r.get("subagent_trajectory_ref") or ()
    ]
    assert refs == ["a1", "b2"]
    steps = len(trajectory["steps"]) + sum(len(t["steps"]) for t in embedded)
    calls = sum(len(s.get("tool_calls") or ()) for t in [trajectory, *embedded] for s in t["steps"])
    assert (len(trajectory["steps"]), steps, calls) == (3, 9, 4)
    assert all(s["step_id"] == n for t in embedded for n, s in enumerate(t["steps"], 1))
    assert trajectory["agent"]["version"] == "2.0.76"
    assert trajectory["final_metrics"]["total_completion_tokens"] == 80  # subagents included
    back = convert(result.text, "atif", to="bbox", max_line=BIG)
    assert back.text == text


def test_one_agent_step_per_model_response() -> None:
    """A response that holds only a tool call (a Claude Code API message of tool_use blocks)
    is a step of its own with its own usage; it was folded into the previous step (issue 25)."""
    body = (
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
        "u: go\n"
        "a: Reading. tokens_in=10 tokens_out=5 tokens_cached=100\n"
        "t!:Read id=toolu_1 a.rs → [running] tokens_in=10 tokens_out=7 tokens_cached=100\n"
        "t!:Bash id=toolu_2 ls → [running] tokens_in=12 tokens_out=3 tokens_cached=110\n"
        "o: id=toolu_1 → [ok] text\n"
        "o: id=toolu_2 → [ok] listing\n"
    )
    trajectory, _ = to_atif(body)
    agents = [s for s in trajectory["steps"] if s["source"] == "agent"]
    assert [[tc["function_name"] for tc in s.get("tool_calls", [])] for s in agents] == [["Read"], ["Bash"]]
    assert [s["metrics"] for s in agents] == [
        {"prompt_tokens": 110, "completion_tokens": 7, "cached_tokens": 100},
        {"prompt_tokens": 122, "completion_tokens": 3, "cached_tokens": 110},
    ]


# -- the JSON text: jsontext writes exactly what json.dumps(indent=2) writes -------------------

_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_JSON_KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(_JSON_KEYS, inner, max_size=4)
    ),
    max_leaves=30,
)


@given(_JSON_VALUES, st.booleans())
def test_jsontext_is_json_dumps_indent_2(value: Any, ascii_only: bool) -> None:
    from bbox_lark.convert.atif.jsontext import dumps, pieces

    expected = json.dumps(value, indent=2, ensure_ascii=ascii_only)
    assert dumps(value, ensure_ascii=ascii_only) == expected
    assert "".join(pieces(value, ensure_ascii=ascii_only)) == expected


def test_jsontext_refuses_what_json_refuses() -> None:
    from bbox_lark.convert.atif.jsontext import dumps

    with pytest.raises(TypeError):
        dumps({"a": [object()]})
    with pytest.raises(TypeError):
        dumps({("tuple", "key"): 1})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        dumps({"a": loop})


def test_jsontext_one_piece_per_step() -> None:
    from bbox_lark.convert.atif.jsontext import pieces

    trajectory = {
        "schema_version": "ATIF-v1.7",
        "steps": [{"step_id": n, "extra": {"x": [n]}} for n in (1, 2, 3)],
    }
    parts = pieces(trajectory)
    assert "".join(parts) == json.dumps(trajectory, indent=2)
    steps = [part for part in parts if part.lstrip().startswith("{") and '"step_id"' in part]
    assert len(steps) == 3 and all(
        json.loads(part)["extra"] == {"x": [json.loads(part)["step_id"]]} for part in steps
    )

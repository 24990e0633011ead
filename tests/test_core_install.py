"""The core install, as a user makes it: ``pip install`` of this project with no extra, into a
fresh virtual environment (pip's cache reused), through the GitHub Actions example's own
``run:`` steps (docs/integrations.md), with a copy of the checkout in place of its git URL.

There, ``check``, ``fmt``, ``convert``, ``report`` and ``export --format csv`` work, and every
command that needs an extra says so in one line naming the extra and exits 2 (no traceback).
pip needs a package index or a wheel cache for the dependencies: without one the module is
skipped, saying so.
The install takes 15 to 60 s (marked ``network``).
"""

from __future__ import annotations

import os
import re
import subprocess
import venv
from pathlib import Path

import pytest
import yaml
from install_support import snapshot

# One worker starts this module's core install once (pytest -n auto --dist loadgroup).
pytestmark = [pytest.mark.network, pytest.mark.xdist_group("core_install")]

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "integrations.md"
CLEAN = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: ci\n---\nu: hi\na: done → [ok]\n"
USAGE = (
    "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: ci\nmodel: claude-sonnet-4-5\n---\n"
    "a: hi tokens_in=100 tokens_out=20\n"
)
BROKEN = "t:read a.rs → [ok]\n"  # no header: E004


def _run(
    args: list[str], cwd: Path, bin_dir: Path | None = None, timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if bin_dir is not None:
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(bin_dir.parent)
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _workflow_steps() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, flags=re.M | re.S)
    workflow = yaml.safe_load(next(block for block in blocks if "jobs:" in block))
    return [step["run"] for step in workflow["jobs"]["check"]["steps"] if "run" in step]


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh environment made by the workflow's install step."""
    work = tmp_path_factory.mktemp("core")
    source = snapshot(work / "bbox-lark")
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    (install,) = [step for step in _workflow_steps() if step.startswith("pip install ")]
    url = re.search(r"git\+https://\S+?@[0-9a-f]{40}", install)
    assert url is not None, f"the workflow installs from a pinned commit: {install}"
    command = install.replace(url[0], source.as_uri())
    done = _run(["bash", "-c", f"{command} --quiet --disable-pip-version-check"], work, bin_dir)
    if done.returncode != 0:
        probe = _run(
            [str(bin_dir / "python"), "-m", "pip", "download", "--no-deps", "--dest", str(work), "lark"],
            work,
        )
        if probe.returncode != 0:
            pytest.skip(f"no package index or wheel cache reachable: {probe.stderr.strip()[-200:]}")
        raise AssertionError(f"the core install failed:\n{done.stderr[-2000:]}")
    return bin_dir


def _one_line_naming(stderr: str, extra: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert f"bbox-lark[{extra}]" in lines[0], stderr
    assert "Traceback" not in stderr


def test_the_core_install_has_no_extra(core: Path, tmp_path: Path) -> None:
    extras = "'pyarrow', 'duckdb', 'dask', 'genai_prices', 'pytest'"
    probe = f"import importlib.util as u; print([m for m in ({extras}) if u.find_spec(m)])"
    done = _run([str(core / "python"), "-c", probe], tmp_path)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
    version = _run([str(core / "bbox-lark"), "--version"], tmp_path)
    assert re.fullmatch(r"bbox-lark \d+\.\d+\.\d+ \(pure Python\)\n", version.stdout), version.stdout


def test_the_github_actions_steps_run(core: Path, tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "s.bbox").write_text(CLEAN, encoding="utf-8")
    steps = [step for step in _workflow_steps() if not step.startswith("pip install ")]
    assert steps and all(step.startswith("bbox-lark ") for step in steps)
    for step in steps:
        done = _run(["bash", "-c", step], tmp_path, core)
        assert done.returncode == 0, f"{step}: {done.stdout}{done.stderr}"
    (tmp_path / "logs" / "broken.bbox").write_text(BROKEN, encoding="utf-8")
    check = _run(["bash", "-c", steps[0]], tmp_path, core)
    assert check.returncode == 1  # fails the job
    assert "::error file=logs/broken.bbox,line=1,col=1,title=E004" in check.stdout, check.stdout


def test_check_fmt_convert_and_report_need_no_extra(core: Path, tmp_path: Path) -> None:
    (tmp_path / "s.bbox").write_text(CLEAN, encoding="utf-8")
    bbox_lark = str(core / "bbox-lark")
    for args in (
        ["check", "s.bbox"],
        ["fmt", "--check", "s.bbox"],
        ["convert", "s.bbox", "--to", "jsonl", "-o", "s.jsonl", "-q"],
        ["convert", "s.jsonl", "--to", "bbox", "-o", "back.bbox", "-q"],
        ["report", "s.bbox", "-o", "s.html"],
        ["stats", "s.bbox"],
        ["docs", "--out", "site"],
        # CSV is written with the standard library (numbers/csvtable.py); Parquet needs pyarrow.
        ["export", "s.bbox", "-o", "tables", "--format", "csv"],
    ):
        done = _run([bbox_lark, *args], tmp_path)
        assert done.returncode == 0, f"{args}: {done.stderr}"
    assert (tmp_path / "back.bbox").read_text(encoding="utf-8") == CLEAN
    events = (tmp_path / "tables" / "events.csv").read_text(encoding="utf-8").splitlines()
    assert events[0].startswith('"session_id","path","line","kind"') and len(events) == 3
    assert (tmp_path / "s.html").stat().st_size > 0


#: Each command that needs an extra, and the extra (otel's commands join this table).
NEEDS_EXTRA = [
    (["export", "s.bbox", "-o", "tables"], "scale"),
    (["query", "s.bbox", "--sql", "SELECT count(*) FROM sessions"], "scale"),
    (["convert", "s.bbox", "--to", "otlp", "-o", "tables"], "otel"),
    (["send", "s.bbox", "--endpoint", "http://127.0.0.1:9/v1/traces"], "otel"),
]


@pytest.mark.parametrize(("args", "extra"), NEEDS_EXTRA, ids=[" ".join(a[:1]) for a, _ in NEEDS_EXTRA])
def test_a_command_that_needs_an_extra_names_it(
    core: Path, tmp_path: Path, args: list[str], extra: str
) -> None:
    (tmp_path / "s.bbox").write_text(CLEAN, encoding="utf-8")
    done = _run([str(core / "bbox-lark"), *args], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    _one_line_naming(done.stderr, extra)
    assert not (tmp_path / "tables").exists()


def test_read_bbox_names_the_extra(core: Path, tmp_path: Path) -> None:
    (tmp_path / "s.bbox").write_text(CLEAN, encoding="utf-8")
    code = (
        "from bbox_lark.dask import read_bbox\n"
        "from bbox_lark.numbers.tables import MissingExtra\n"
        "try:\n    read_bbox('s.bbox')\nexcept MissingExtra as error:\n    print(error)\n"
    )
    done = _run([str(core / "python"), "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "bbox-lark[scale]" in done.stdout


def test_stats_without_prices_says_how_to_get_the_estimate(core: Path, tmp_path: Path) -> None:
    (tmp_path / "s.bbox").write_text(USAGE, encoding="utf-8")
    done = _run([str(core / "bbox-lark"), "stats", "--json", "s.bbox"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"estimated_cost_usd": null' in done.stdout
    assert "bbox-lark[prices]" in done.stdout

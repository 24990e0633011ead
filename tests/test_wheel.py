"""Works installed: the wheel, installed (not editable) in a fresh virtual environment and
run outside the checkout, checks, converts and checks the generated docs.

The wheel is built with ``pip wheel --no-deps`` (pip fetches the build backend from the
package index, or its cache); the test is skipped when that cannot be done. The new
environment gets the wheel alone (``--no-deps``) and reads the dependencies (Lark, PyYAML,
Typer, Rich) from the test run's own environment through a path file, so no package index
is needed for them and the project's source tree is never on the path: what runs is what
the wheel holds. Building and installing take 10 to 30 s (marked ``network``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from install_support import snapshot

# One worker starts this module's wheel build and install once (pytest -n auto --dist loadgroup).
pytestmark = pytest.mark.xdist_group("wheel")

REPO = Path(__file__).resolve().parent.parent
CLEAN = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\nu: hi\na: done → [ok]\n"


def _run(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh environment with the wheel installed."""
    work = tmp_path_factory.mktemp("wheel")
    source = snapshot(work / "bbox-lark")
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "--timeout",
            "30",
            "-w",
            str(work),
            str(source),
        ],
        cwd=work,
    )
    wheels = sorted(work.glob("bbox_lark-*.whl"))
    if built.returncode != 0 or not wheels:
        pytest.skip(
            f"cannot build the wheel (no package index for the build backend?): {built.stderr[-300:]}"
        )
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    done = _run([str(python), "-m", "pip", "install", "--no-deps", "--quiet", str(wheels[0])], cwd=work)
    assert done.returncode == 0, done.stderr
    # The dependencies: this environment's site-packages, as a plain path (its .pth files,
    # the editable install's among them, are not read from there).
    target = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work)
    Path(target.stdout.strip(), "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bin_dir


def test_the_wheel_holds_what_the_package_reads(installed: Path, tmp_path: Path) -> None:
    where = _run(
        [str(installed / "python"), "-c", "import bbox_lark; print(bbox_lark.__file__)"], cwd=tmp_path
    )
    assert where.returncode == 0, where.stderr
    assert not Path(where.stdout.strip()).is_relative_to(REPO), "the checkout was imported, not the wheel"


@pytest.mark.network
def test_check_and_convert_work_installed(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "s.bbox").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "t.rlog").write_text(CLEAN, encoding="utf-8")
    check = _run([str(installed / "bbox-lark"), "check", "s.bbox"], cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    typer_path = _run(
        [str(installed / "bbox-lark"), "check", "--output-format=json", "s.bbox", "-q"], cwd=tmp_path
    )
    assert typer_path.returncode == 0, typer_path.stderr
    convert = _run([str(installed / "bbox-lark"), "convert", "s.bbox", "--to", "jsonl"], cwd=tmp_path)
    assert convert.returncode == 0, convert.stderr
    assert convert.stdout.count("\n") >= 3
    many = _run(
        [str(installed / "bbox-lark"), "convert", "s.bbox", "logs", "--to", "compact", "-o", "out", "-q"],
        cwd=tmp_path,
    )
    assert many.returncode == 0, many.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["s.cbox", "t.cbox"]


@pytest.mark.network
def test_docs_check_works_installed(installed: Path, tmp_path: Path) -> None:
    current = _run(
        [str(installed / "bbox-lark"), "docs", "--check", "--out", str(REPO / "docs")], cwd=tmp_path
    )
    assert current.returncode == 0, current.stderr
    nowhere = _run([str(installed / "bbox-lark"), "docs", "--check"], cwd=tmp_path)
    assert nowhere.returncode == 1
    assert "docs: no such folder" in nowhere.stderr and "Traceback" not in nowhere.stderr
    written = _run([str(installed / "bbox-lark"), "docs", "--out", "site"], cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    again = _run([str(installed / "bbox-lark"), "docs", "--check", "--out", "site"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr

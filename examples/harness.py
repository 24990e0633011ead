"""A toy agent harness that logs its session with bbox_lark.Writer, then checks the log."""

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bbox_lark import Writer, check

FAKE_KEY = "sk-ant-api03-" + "x7Qm2Lp9Rt4Vb8Nc1Zk6" * 4 + "AA"  # a made-up key, redacted below
LINES = {"src/auth.rs": 186, "src/token.rs": 74}


def run(path: Path) -> list[str]:
    header = {"id": "sess_demo", "repo_sha": "215db51", "runner": "examples/harness.py"}
    with Writer(path, header, auto_step=True) as log:
        log.user("The login fails twice.\nFix it, and keep the old API.")
        log.thinking("Read auth first; grep for the token check → then test.")
        log.agent("Looking at the auth module and the token check.", tokens_in=1200, tokens_out=40)
        reads = [log.call("read", name, tid="turn_1") for name in ("src/auth.rs", "src/token.rs")]
        with ThreadPoolExecutor() as pool:  # parallel tool calls, finished from threads
            list(pool.map(lambda call: call.finish(f"{LINES[call.args[0]]} lines"), reads))
        test = log.call("bash", "cargo test", tid="turn_2")  # a slow call: its result comes later
        log.agent("Tests are running; meanwhile the config:")
        log.call("read", ".env").finish(f"ANTHROPIC_API_KEY={FAKE_KEY}")
        test.progress("64/128 passed")
        test.finish("[ok] 128 passed")  # reads as text, not as the [ok] status
        shot = log.blob(b"\x89PNG\r\n\x1a\n...", mime="image/png")
        log.call("screenshot", "http://localhost:8080/login").finish(shot)
        log.metrics(prompt_tokens=5200, completion_tokens=310, cost_usd=0.021)
        log.agent("Fixed: the token check compared `exp` in ms with seconds.")
    return [d.format(str(path)) for d in check(path.read_text(), path=path) if d.severity != "info"]


if __name__ == "__main__":
    problems = run(Path(sys.argv[1] if len(sys.argv) > 1 else "session.bbox"))
    print("\n".join(problems) or "clean")
    sys.exit(1 if problems else 0)

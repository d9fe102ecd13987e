"""CI's check of the built wheel: build it from this checkout, install it into a fresh venv (with constraints.txt,
from the registries ``make install`` uses) and run it from a folder outside the checkout: ``discogym list``, one
reference episode per suite, and ``discogym serve`` answering every suite screen's script and every static file.

Usage: ``python scripts/wheel_smoke.py`` (``make wheel-smoke``); exits non-zero, saying why, at the first failure.
"""

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# One small task per suite: (suite, split, task).
EPISODES = [
    ("autumn", "mfp", "gravity-2"),
    ("crafting", "test.small", "TEST0487"),
    ("petri", "core-v1", "market-101"),
    ("redstone", "A", "A_simultaneous_lights_L1"),
]
SERVE_WAIT_S = 60.0


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run ``argv``, print what it is, and return its stdout; exit with its output if it fails."""
    print("+", " ".join(argv), flush=True)
    started = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"wheel smoke test: {argv[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    print(f"  ({time.monotonic() - started:.1f} s)", flush=True)
    return done.stdout


def build_and_install(work: Path, env: dict[str, str]) -> Path:
    """Build the wheel into ``work/dist``, install it with the web extra into ``work/venv``; the venv's bin."""
    dist = work / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "wheel", "--quiet", "--no-deps", str(REPO), "-w", str(dist)], work, env)
    (wheel,) = dist.glob("discogym-*.whl")
    run([sys.executable, "-m", "venv", str(work / "venv")], work, env)
    bin_dir = work / "venv" / "bin"
    install = ["install", "--quiet", "--disable-pip-version-check", "-c", str(REPO / "constraints.txt")]
    run([str(bin_dir / "python"), "-m", "pip", *install, f"{wheel}[web]"], work, env)
    return bin_dir


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str) -> bytes:
    """The body of a 200 answer to GET ``url`` (any other answer raises)."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        return bytes(answer.read())


def check_serve(discogym: Path, package: Path, work: Path, env: dict[str, str]) -> None:
    """Start ``discogym serve``, fetch the home page, each static file and each suite screen's script (each must
    be the installed file byte for byte), then stop it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [str(discogym), "serve", "--runs", str(work / "runs"), "--port", str(port)]
    print("+", " ".join(argv), flush=True)
    server = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until_up(server, base)
        urls = {f"/static/{path.name}": path for path in (package / "interfaces/web/static").iterdir()}
        urls |= {f"/screens/{path.stem}.js": path for path in package.glob("suites/*/screens/*.js")}
        if not any(url.startswith("/screens/") for url in urls):
            sys.exit("wheel smoke test: the installed package has no suite screen")
        for url, path in sorted(urls.items()):
            if fetch(base + url) != path.read_bytes():
                sys.exit(f"wheel smoke test: {url} is not the installed {path.name}")
            print(f"  served {url}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)


def wait_until_up(server: subprocess.Popen[bytes], base: str) -> None:
    """Wait until the server answers its home page; exit with its stderr if it ends or takes too long."""
    deadline = time.monotonic() + SERVE_WAIT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            said = server.stderr.read().decode(errors="replace") if server.stderr else ""
            sys.exit(f"wheel smoke test: discogym serve ended ({server.returncode}):\n{said}")
        try:
            fetch(base + "/")
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"wheel smoke test: discogym serve did not answer within {SERVE_WAIT_S:g} s")


def main() -> None:
    """Build, install and try the wheel in a temporary folder."""
    started = time.monotonic()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    with tempfile.TemporaryDirectory(prefix="discogym-wheel-") as folder:
        work = Path(folder)
        bin_dir = build_and_install(work, env)
        discogym, python = bin_dir / "discogym", str(bin_dir / "python")
        package = Path(run([python, "-c", "import discogym; print(discogym.__path__[0])"], work, env).strip())
        if REPO in package.parents:
            sys.exit(f"wheel smoke test: discogym was imported from the checkout ({package}), not the wheel")
        listing = run([str(discogym), "list"], work, env)
        for suite, _, _ in EPISODES:
            if suite not in listing:
                sys.exit(f"wheel smoke test: discogym list does not name {suite}")
        for suite, split, task in EPISODES:
            out = work / "runs" / suite
            run([str(discogym), "run", suite, "--agent", "reference", "--split", split, "--tasks", task,
                 "--out", str(out)], work, env)  # fmt: skip
            if not any(out.rglob(f"*{task}*")):
                sys.exit(f"wheel smoke test: discogym run {suite} wrote no episode of {task} in {out}")
        check_serve(discogym, package, work, env)
    print(f"wheel smoke test passed in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()

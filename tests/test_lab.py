"""`make lab` (README, intro): JupyterLab starts on the course's venv, on localhost, in chapters/,
with the widgets extension that renders tqdm's progress bars. The test starts it on a free port,
waits for the server to answer, and stops it."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_widgets_extension_is_installed():
    out = subprocess.run([str(BIN / "jupyter"), "labextension", "list"], capture_output=True, text=True)
    listing = out.stdout + out.stderr
    assert "@jupyter-widgets/jupyterlab-manager" in listing and "enabled" in listing, listing


def test_make_lab_serves_the_chapters_on_localhost(tmp_path):
    port = _free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg")}
    cmd = ["make", "-s", "lab", f"PORT={port}", "NO_BROWSER=1", f"VENV={BIN.parent}"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        deadline, status = time.monotonic() + 120, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2) as r:
                    status = json.load(r)
                break
            except OSError:
                time.sleep(1)
        assert status and "version" in status, "JupyterLab did not answer on 127.0.0.1"
        servers = [json.loads(p.read_text()) for p in tmp_path.glob("jpserver-*.json")]
        assert servers, "no server file written"
        (server,) = [s for s in servers if s["port"] == port]
        assert Path(server["root_dir"]).resolve() == (ROOT / "chapters").resolve()
        assert server["hostname"] in ("127.0.0.1", "localhost")
        token = server["token"]
        url = f"http://127.0.0.1:{port}/api/contents/self_attention.ipynb?content=0&token={token}"
        with urllib.request.urlopen(url, timeout=10) as r:
            assert json.load(r)["type"] == "notebook"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

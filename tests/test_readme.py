"""The README's Python example runs as written."""

import re
import subprocess
import sys

from tests.conftest import REPO, cli_environment


def test_the_python_example_in_the_readme_runs(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    assert len(blocks) == 1
    done = subprocess.run(
        [sys.executable, "-c", blocks[0]],
        cwd=tmp_path,
        env=cli_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    row = r"\| toy \| dev \| [0-9a-f]{12} \| plain \| bisect \| - \| - \| - \| 16 \| 0 \| 1\.000 \|"
    assert re.search(row, done.stdout)
    assert "['probe', 'roll', 'submit']" in done.stdout
    assert "the hidden digit is" in done.stdout
    assert len(list((tmp_path / "runs" / "api" / "episodes").glob("*.json"))) == 32

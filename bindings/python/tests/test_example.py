"""examples/agent.py runs and saves a figure."""

import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "agent.py")


def test_agent_example(tmp_path):
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, EXAMPLE, str(out)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Out[1]:" in p.stdout
    assert "AttributeError" in p.stdout          # the model's mistake came back as text
    assert "Out[3]: 0.316" in p.stdout
    assert (out / "figure_0.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "totals.csv").read_text().splitlines()[-1] == "east,2580"

#!/usr/bin/python3
"""A minimal agent host: the model's "python" tool backed by codeinterp.

The "model" here is a script of cells, as an LLM would send them one tool
call at a time. Each call runs in the same sandboxed session, so variables
carry over; the tool's answer is the text a model would read back (stdout,
stderr, the value, the error), and figures are saved next to it.

    CODEINTERP_LIBRARY=build/libcodeinterp.so.0 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bindings/python/examples/agent.py [OUTDIR]
"""

import os
import sys

import codeinterp

MAX_TOOL_TEXT = 4000  # what the model gets back per call, in characters


def tool_answer(result, outdir, saved):
    """The tool's reply to the model, and figures written to outdir."""
    parts = []
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    if result.value is not None:
        parts.append("Out[%d]: %s" % (result.execution_count, result.value))
    for out in result.outputs:
        if out.mime == "image/png":
            path = os.path.join(outdir, "figure_%d.png" % len(saved))
            with open(path, "wb") as f:
                f.write(out.data)
            saved.append(path)
            parts.append("[figure saved as %s, %d bytes]" % (path, len(out.data)))
    if result.status is not codeinterp.Status.OK:
        err = result.error
        parts.append("[%s] %s: %s" % (result.status, err.name, err.value))
        if err.traceback:
            parts.append(err.traceback.rstrip("\n"))
    if result.files:
        parts.append("[files changed: %s]" % ", ".join(result.files))
    text = "\n".join(parts) or "[no output]"
    return text if len(text) <= MAX_TOOL_TEXT else text[:MAX_TOOL_TEXT] + "\n[...cut]"


# What the model "asks" for, one tool call each.
CELLS = [
    # 1. look at the data the user uploaded
    "import pandas as pd\n"
    "df = pd.read_csv('sales.csv')\n"
    "print(df.shape)\n"
    "df.groupby('region').revenue.sum()",
    # 2. a mistake, as models make them: the error goes back to the model
    "df.groupby('region').revenu.sum()",
    # 3. the fix, a chart and a report file
    "import matplotlib.pyplot as plt\n"
    "totals = df.groupby('region').revenue.sum().sort_values()\n"
    "ax = totals.plot.barh(title='revenue by region')\n"
    "ax.set_xlabel('revenue')\n"
    "totals.to_csv('totals.csv')\n"
    "round(totals.max() / totals.sum(), 3)",
]


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "agent-out"
    os.makedirs(outdir, exist_ok=True)
    csv = "region,month,revenue\n" + "".join(
        "%s,%d,%d\n" % (region, month, base + 10 * month)
        for region, base in (("north", 120), ("south", 90), ("east", 150), ("west", 60))
        for month in range(1, 13))

    saved = []
    with codeinterp.Session(timeout_ms=20_000) as session:
        print("session: worker pid %d, workspace %s" % (session.pid, session.workspace))
        session.put_file("sales.csv", csv.encode())
        for cell in CELLS:
            print("\n>>> tool call: python")
            print("    " + cell.replace("\n", "\n    "))
            result = session.run(cell)
            print("<<< tool answer (%.1f ms)" % (result.wall_time_us / 1000))
            print(tool_answer(result, outdir, saved))
        report = session.get_file("totals.csv")
    with open(os.path.join(outdir, "totals.csv"), "wb") as f:
        f.write(report)
    print("\nsaved: %s" % ", ".join(saved + [os.path.join(outdir, "totals.csv")]))
    return 0 if saved else 1


if __name__ == "__main__":
    sys.exit(main())

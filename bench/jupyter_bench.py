"""make bench: the Jupyter and plain-python side of the benchmark.

    /usr/bin/python3 bench/jupyter_bench.py bench/workload.py > jupyter.tsv

Run with Debian's /usr/bin/python3 and its python3-ipykernel and
python3-jupyter-client (make bench-deps). Writes the same lines as
bench/bench.c (key, n, median, p90, unit, tab-separated) on stdout and
its progress on stderr. It asserts nothing about time.

The kernels talk to this process over TCP on 127.0.0.1 only (the
KernelManager's default ip); nothing else touches the network. Every
kernel is shut down, and the connection files, runtime, config and data
directories are in a temporary directory removed at the end, so no user
configuration or kernelspec changes what is measured.

Without jupyter_client the Jupyter lines are left out (the report says
so); the plain-python lines are measured all the same.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

N_READY = 5
N_TRIVIAL = 500
N_WARMUP = 20
N_COLD = 5
N_WORKLOAD = 10
N_IMPORT = 5  # as bench.c
PACKAGE_LIST = os.environ.get("BENCH_PACKAGE_LIST", "tools/analysis_packages.txt")

FIRST_CELL = "import pandas as pd; pd.DataFrame({'a':[1]}).a.sum()"
# The worker of codeinterp has these loaded before its first cell; a
# kernel gets them in its first cell, so both are ready for the same work.
IMPORTS = "import numpy as np, pandas as pd, matplotlib; import matplotlib.pyplot as plt\n"


def log(msg):
    print("jupyter_bench: " + msg, file=sys.stderr, flush=True)


def emit(key, values, unit):
    v = sorted(values)
    n = len(v)
    if n == 0:
        print(f"{key}\t0\tnan\tnan\t{unit}", flush=True)
        return
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    p90 = v[-(-9 * n // 10) - 1]  # nearest rank: ceil(0.9 n) - 1
    print(f"{key}\t{n}\t{med:.3f}\t{p90:.3f}\t{unit}", flush=True)


def smaps(pid):
    """(Private_Clean + Private_Dirty, Rss) of pid in MiB, from smaps_rollup."""
    priv = rss = 0.0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            k, _, rest = line.partition(":")
            if k in ("Private_Clean", "Private_Dirty"):
                priv += int(rest.split()[0])
            elif k == "Rss":
                rss = int(rest.split()[0])
    return priv / 1024, rss / 1024


def plain_workload(path):
    """In a fresh /usr/bin/python3: the workload, timed without its imports."""
    import numpy  # noqa: F401  (imported before the clock starts)
    import pandas  # noqa: F401
    code = compile(open(path).read(), path, "exec")
    times = []
    for i in range(N_WORKLOAD + 1):  # one untimed warm-up run, as bench.c
        ns = {}
        t0 = time.perf_counter()
        exec(code, ns)
        t1 = time.perf_counter()
        if i > 0:
            times.append((t1 - t0) * 1e3)
    emit("plain_workload", times, "ms")


def cold_import():
    times = []
    for _ in range(N_COLD):
        t0 = time.perf_counter()
        subprocess.run(["/usr/bin/python3", "-c", "import pandas, matplotlib.pyplot"],
                       check=True, env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
        times.append((time.perf_counter() - t0) * 1e3)
    emit("cold_import", times, "ms")


def plain_imports(path):
    """Each module's first import in plain python3, as bench.c times it in
    a session: in a child forked from a process that has the worker's
    preloaded modules and IPython imported, the sessions' zygote's way."""
    for m in ("numpy", "pandas", "matplotlib.pyplot", "IPython"):
        __import__(m)
    mods = [line.split()[0] for line in open(path)
            if line.strip() and not line.startswith("#")]
    times = {m: [] for m in mods}
    for _ in range(N_IMPORT):
        for m in mods:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                t0 = time.perf_counter()
                __import__(m)
                os.write(w, f"{(time.perf_counter() - t0) * 1e3}".encode())
                os._exit(0)
            os.close(w)
            with os.fdopen(r) as f:
                out = f.read()
            os.waitpid(pid, 0)
            if out:
                times[m].append(float(out))
    for m in mods:
        emit(f"plain_import:{m}", times[m], "ms")


def kernel_pid(km):
    prov = getattr(km, "provisioner", None)
    proc = getattr(prov, "process", None) if prov is not None else None
    if proc is not None:
        return proc.pid
    return km.kernel.pid


def run_cell(kc, code, timeout=120):
    reply = kc.execute_interactive(code, output_hook=lambda msg: None, timeout=timeout)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"cell failed: {reply['content']}")


def jupyter(tmp):
    try:
        from jupyter_client import KernelManager
    except ImportError:
        log("jupyter_client is not installed for /usr/bin/python3 (make bench-deps); "
            "Jupyter lines left out")
        return

    ready, priv, rss, triv = [], [], [], []
    log(f"kernel ready, n={N_READY}; trivial cell n={N_TRIVIAL} on the last kernel")
    for i in range(N_READY):
        km = KernelManager(kernel_name="python3",
                           connection_file=os.path.join(tmp, f"kernel-{i}.json"))
        kc = None
        try:
            t0 = time.perf_counter()
            # The kernel's stderr (debugpy's warnings about frozen
            # modules) is dropped; a kernel that fails to start still
            # fails wait_for_ready.
            km.start_kernel(stderr=subprocess.DEVNULL)
            kc = km.blocking_client()
            kc.start_channels()
            kc.wait_for_ready(timeout=120)
            run_cell(kc, IMPORTS + FIRST_CELL)
            ready.append((time.perf_counter() - t0) * 1e3)
            pid = kernel_pid(km)
            exe = os.readlink(f"/proc/{pid}/exe")
            if i == 0:
                log(f"kernel pid {pid} runs {exe}")
            p, r = smaps(pid)
            priv.append(p)
            rss.append(r)
            if i == N_READY - 1:
                for j in range(N_WARMUP + N_TRIVIAL):
                    t0 = time.perf_counter()
                    run_cell(kc, "1+1")
                    if j >= N_WARMUP:
                        triv.append((time.perf_counter() - t0) * 1e6)
        finally:
            if kc is not None:
                kc.stop_channels()
            if km.has_kernel:
                km.shutdown_kernel(now=False)
            km.cleanup_resources()
    emit("jupyter_ready", ready, "ms")
    emit("jupyter_idle_private", priv, "MiB")
    emit("jupyter_idle_rss", rss, "MiB")
    emit("jupyter_trivial", triv, "us")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--plain":
        plain_workload(sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--imports":
        plain_imports(sys.argv[2])
        return
    if len(sys.argv) != 2:
        sys.exit("usage: jupyter_bench.py bench/workload.py")
    workload = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="codeinterp-bench-")
    os.environ.update({
        "PATH": "/usr/bin:/bin",
        "JUPYTER_RUNTIME_DIR": os.path.join(tmp, "runtime"),
        "JUPYTER_CONFIG_DIR": os.path.join(tmp, "config"),
        "JUPYTER_DATA_DIR": os.path.join(tmp, "data"),
        "IPYTHONDIR": os.path.join(tmp, "ipython"),
        "MPLCONFIGDIR": os.path.join(tmp, "mpl"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    })
    try:
        log(f"cold import, n={N_COLD}")
        cold_import()
        log(f"plain workload, n={N_WORKLOAD} (+1 warm-up)")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--plain", workload],
                       check=True)
        log(f"first import of each module of {PACKAGE_LIST}, n={N_IMPORT} each")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--imports",
                        os.path.abspath(PACKAGE_LIST)], check=True)
        jupyter(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

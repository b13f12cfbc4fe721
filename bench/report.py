"""make bench: prints the one table of bench/bench.c's and
bench/jupyter_bench.py's figures, with the machine they come from.

    /usr/bin/python3 bench/report.py codeinterp.tsv jupyter.tsv [baseline.tsv]

Each input line is key, n, median, p90, unit (tab-separated). A figure
that is missing (Jupyter not installed, a step that failed) shows as "-".
baseline.tsv, when given, is bench/bench.c's output from the tree before
the IPython layer (make bench builds it from BENCH_BASELINE), measured in
the same run: a table of what the layer costs follows the first. "met"
compares the median with the target.
"""
import datetime
import os
import platform
import sys
from importlib import metadata


def load(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 5 and parts[1] != "0":
                    out[parts[0]] = (int(parts[1]), float(parts[2]), float(parts[3]), parts[4])
    except OSError:
        pass
    return out


def fmt(v, unit):
    if unit == "us":
        return f"{v:,.0f} µs"
    if unit == "ms":
        return f"{v:,.1f} ms" if v < 10_000 else f"{v / 1000:,.2f} s"
    if unit == "MiB":
        return f"{v:,.1f} MiB"
    return f"{v:,.0f}"


def cell(d, key):
    if key not in d:
        return "-"
    n, med, p90, unit = d[key]
    if n == 1:
        return f"n=1 {fmt(med, unit)}"
    return f"n={n} {fmt(med, unit)} (p90 {fmt(p90, unit)})"


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass

    def ver(p):
        try:
            return metadata.version(p)
        except metadata.PackageNotFoundError:
            return "absent"

    return (f"machine: nproc {os.cpu_count()} ({len(os.sched_getaffinity(0))} usable), "
            f"kernel {platform.release()}, {model}, RAM {mem}\n"
            f"python {platform.python_version()} ({sys.executable}), numpy {ver('numpy')}, "
            f"pandas {ver('pandas')}, matplotlib {ver('matplotlib')}, "
            f"ipykernel {ver('ipykernel')}, jupyter_client {ver('jupyter_client')}")


def table(head, rows):
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head))]
    line = "+".join("-" * (wd + 2) for wd in widths)
    print(line)
    for i, row in enumerate([head] + rows):
        print("|".join(f" {str(c):<{widths[j]}} " for j, c in enumerate(row)))
        if i == 0:
            print(line)
    print(line)


def ipython_layer(ci, base, med):
    """What the IPython layer costs: this tree against the baseline's,
    measured in the same run."""
    rows = []
    for key, label, limit in (("trivial", "trivial cell 1+1, round trip", 1.15),
                              ("ready", "session ready, 50 ms apart", 1.15),
                              ("ready_burst", "  same, back to back", None),
                              ("zygote_first_new", "zygote warm-up (first ci_session_new)", None),
                              ("ready_exec", "ready without the zygote", None)):
        now, before = med(ci, key), med(base, key)
        r = now / before if now is not None and before else None
        met = "-" if r is None or limit is None else ("met" if r <= limit else "not met")
        rows.append((label, cell(ci, key), cell(base, key), f"{r:.3g}x" if r else "-",
                     f"<= {limit}x" if limit else "", met))
    now, before = med(ci, "idle_private"), med(base, "idle_private")
    grew = now - before if now is not None and before is not None else None
    rows.append(("idle unique memory", cell(ci, "idle_private"), cell(base, "idle_private"),
                 f"{grew:+.2f} MiB" if grew is not None else "-", "<= +1.5 MiB",
                 "-" if grew is None else ("met" if grew <= 1.5 else "not met")))
    print("What the IPython layer costs: this tree against the one before it"
          " (BENCH_BASELINE), in the same run")
    table(("measurement", "with IPython", "before (baseline)", "ratio", "target",
           "target met?"), rows)


def imports(ci, ref):
    """Row 8: each module's first import in a new session, slowest first,
    beside plain python3's in a child forked after the same imports."""
    mods = [k.split(":", 1)[1] for k in ci if k.startswith("import:")]
    if not mods:
        return
    mods.sort(key=lambda m: -ci["import:" + m][1])
    rows = []
    for m in mods:
        a, b = ci["import:" + m][1], ref.get("plain_import:" + m, (0, None))[1]
        rows.append((m, cell(ci, "import:" + m), cell(ref, "plain_import:" + m),
                     f"{a - b:+,.1f} ms" if b is not None else "-",
                     cell(ci, "import_mem:" + m)))
    rows.append(("the whole set, in one cell", cell(ci, "import_all"), "", "",
                 cell(ci, "import_all_mem")))
    print("8 first import of each module of the analyst's set in a new session"
          " (tools/analysis_packages.txt)")
    table(("module", "codeinterp: cell round trip", "plain python3, forked",
           "difference", "unique memory added"), rows)


def main():
    ci = load(sys.argv[1])
    ref = load(sys.argv[2])
    rows = []  # (measurement, codeinterp, reference, ratio, target, met)

    def med(d, k):
        return d[k][1] if k in d else None

    def ratio(a, b):
        return f"{a / b:.3g}x" if a is not None and b else "-"

    def target_met(value, limit):
        if value is None:
            return "-"
        return "met" if value <= limit else "not met"

    r = med(ci, "ready")
    rows.append(("1 session ready: new + first pandas cell, 50 ms apart", cell(ci, "ready"),
                 "Jupyter: start_kernel+ready+imports+cell " + cell(ref, "jupyter_ready"),
                 ratio(r, med(ref, "jupyter_ready")), "<= 5 ms", target_met(r, 5)))
    rows.append(("  same, vs cold python3 import", cell(ci, "ready"),
                 "python3 -c 'import pandas, matplotlib.pyplot' " + cell(ref, "cold_import"),
                 ratio(r, med(ref, "cold_import")), "", ""))
    rows.append(("  of which ci_session_new", cell(ci, "ready_new"), "", "", "", ""))
    rows.append(("  of which the first cell", cell(ci, "ready_first_cell"), "", "", "", ""))
    if "ready_burst" in ci:
        rows.append(("  same, back to back (no pause)", cell(ci, "ready_burst"), "", "", "", ""))
    rows.append(("  the process's first ci_session_new (zygote warm-up)",
                 cell(ci, "zygote_first_new"), "", "", "", ""))
    rows.append(("  ready without the zygote (fork+exec)", cell(ci, "ready_exec"),
                 "Jupyter " + cell(ref, "jupyter_ready"),
                 ratio(med(ci, "ready_exec"), med(ref, "jupyter_ready")), "", ""))
    t = med(ci, "trivial")
    rows.append(("2 trivial cell 1+1, round trip", cell(ci, "trivial"),
                 "Jupyter: execute_interactive " + cell(ref, "jupyter_trivial"),
                 ratio(t, med(ref, "jupyter_trivial")), "<= 100 µs",
                 target_met(t, 100)))
    m = med(ci, "idle_private")
    rows.append(("3 idle unique memory (Private_Clean+Dirty)", cell(ci, "idle_private"),
                 "Jupyter kernel " + cell(ref, "jupyter_idle_private"),
                 ratio(m, med(ref, "jupyter_idle_private")), "<= 10 MiB",
                 target_met(m, 10)))
    rows.append(("  idle RSS", cell(ci, "idle_rss"),
                 "Jupyter kernel " + cell(ref, "jupyter_idle_rss"),
                 ratio(med(ci, "idle_rss"), med(ref, "jupyter_idle_rss")), "", ""))

    n = med(ci, "conc_sessions")
    started, answered = med(ci, "conc_started"), med(ci, "conc_answered")
    if n is None:
        alive, met = "-", "-"
    else:
        alive = f"{started:.0f}/{n:.0f} started, {answered:.0f}/{n:.0f} answered a cell"
        if n >= 1000:
            met = "met" if started == n and answered == n else "not met"
        else:
            met = f"not tested ({n:.0f} < 1000)"
    rows.append(("4 concurrent sessions (BENCH_SESSIONS)", alive, "", "", "1000 alive", met))
    rows.append(("  time to start them all", cell(ci, "conc_start_all"), "", "", "", ""))
    rows.append(("  one session's start, under that load", cell(ci, "conc_start_each"),
                 "", "", "", ""))
    rows.append(("  total private memory", cell(ci, "conc_private_total"), "", "", "", ""))
    rows.append(("  private memory a session", cell(ci, "conc_private_each"), "", "", "", ""))
    each = med(ci, "conc_descriptors_each")
    rows.append(("  host descriptors a session", cell(ci, "conc_descriptors_each"), "", "",
                 "<= 3", "-" if each is None else "met" if each <= 3 else "not met"))
    rows.append(("  host descriptors in all", cell(ci, "conc_descriptors"), "", "", "", ""))

    w, p = med(ci, "workload"), med(ref, "plain_workload")
    if w is not None and p:
        over = (w - p) / p * 100
        ov, wmet = f"{w / p:.2f}x ({over:+.1f}%)", ("met" if over <= 5 else "not met")
    else:
        ov, wmet = "-", "-"
    rows.append(("5 pandas merge+group-by, 1M rows (wall)", cell(ci, "workload"),
                 "plain python3, perf_counter " + cell(ref, "plain_workload"), ov,
                 "overhead <= 5%", wmet))
    for key, label in (("file_put", "6 ci_session_put_file 100 MiB"),
                       ("file_get", "  ci_session_get_file 100 MiB")):
        v = med(ci, key)
        rate = f"{100 / (v / 1000):,.0f} MiB/s" if v else ""
        rows.append((label, cell(ci, key), rate, "", "", ""))

    files = med(ci, "manifest_files")
    rows.append(("7 signed manifest, default set: verify signature (host)",
                 cell(ci, "manifest_verify"),
                 f"{files:,.0f} listed files" if files else "", "", "", ""))
    rows.append(("  made by codeinterp-manifest create", cell(ci, "manifest_create"),
                 "", "", "", ""))
    rows.append(("  hash every listed file (zygote, once)", cell(ci, "manifest_hash"),
                 "", "", "", ""))
    rows.append(("  first ci_session_new with it (zygote start)",
                 cell(ci, "manifest_zygote_first_new"),
                 "without " + cell(ci, "manifest_plain_zygote_first_new"),
                 ratio(med(ci, "manifest_zygote_first_new"),
                       med(ci, "manifest_plain_zygote_first_new")), "", ""))
    mw, mp = med(ci, "manifest_ready_with"), med(ci, "manifest_ready_plain")
    rows.append(("  session ready with it, warm zygote", cell(ci, "manifest_ready_with"),
                 "without, in turns " + cell(ci, "manifest_ready_plain"), ratio(mw, mp),
                 "no effect", f"{(mw - mp) * 1000:+.0f} µs" if mw and mp else "-"))

    st, sr = med(ci, "snapshot_take"), med(ci, "snapshot_restore")
    sb, sp = med(ci, "snapshot_bytes"), med(ci, "snapshot_pickle_bytes")
    rows.append(("9 ci_session_snapshot, 100 MB DataFrame + 1 MiB file", cell(ci, "snapshot_take"),
                 "", "", "<= 2 s", target_met(st, 2000)))
    rows.append(("  ci_session_restore of it", cell(ci, "snapshot_restore"), "", "", "<= 2 s",
                 target_met(sr, 2000)))
    fk = med(ci, "fork")
    rows.append(("  ci_session_fork of it (a snapshot restored at once)", cell(ci, "fork"), "",
                 "", "<= 20 ms", target_met(fk, 20)))
    rows.append(("  parent's trivial cell after a fork", cell(ci, "fork_parent_after"),
                 "before " + cell(ci, "fork_parent_before"),
                 ratio(med(ci, "fork_parent_after"), med(ci, "fork_parent_before")),
                 "no slower", ""))
    rows.append(("  snapshot size", cell(ci, "snapshot_bytes"),
                 "the frame's pickle + the file " + cell(ci, "snapshot_pickle_bytes"),
                 ratio(sb, sp), "<= 1.5x", target_met(sb / sp if sb and sp else None, 1.5)))

    ron, roff = med(ci, "rollback_cell_on"), med(ci, "rollback_cell_off")
    rows.append(("10 trivial cell, rollback on, 100 MB DataFrame", cell(ci, "rollback_cell_on"),
                 "rollback off, in turns " + cell(ci, "rollback_cell_off"), ratio(ron, roff),
                 "<= 5 ms added",
                 f"{(ron - roff) / 1000:+.2f} ms, " + target_met((ron - roff) / 1000, 5)
                 if ron and roff else "-"))
    rows.append(("  fatal cell rolled back, then a cell", cell(ci, "rollback_fatal"),
                 "restart and remake instead " + cell(ci, "rollback_restart_instead"),
                 ratio(med(ci, "rollback_fatal"), med(ci, "rollback_restart_instead")), "", ""))

    head = ("measurement", "codeinterp (sessions forked from the zygote)", "reference",
            "ratio ci/ref", "target", "target met?")
    print(f"codeinterp benchmark, {datetime.datetime.now():%Y-%m-%d %H:%M}; "
          "medians, n runs each, p90 by nearest rank")
    print(machine())
    table(head, rows)
    imports(ci, ref)
    if len(sys.argv) > 3:
        ipython_layer(ci, load(sys.argv[3]), med)
    if "jupyter_ready" not in ref:
        print("Jupyter figures missing: run make bench-deps (python3-ipykernel, "
              "python3-jupyter-client) for /usr/bin/python3.")
    print("Figures of this machine only; a benchmark, it asserts nothing about time.")


if __name__ == "__main__":
    main()

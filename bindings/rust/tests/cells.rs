//! Running cells: state, values, exceptions, limits, rich outputs.
mod common;

use codeinterp::{Config, ErrorKind, OutputKind, RunOptions, Status, Stream, Truncated};
use common::{png_size, session, session_exact, session_with, PNG_SIGNATURE};
use std::time::Duration;

#[test]
fn state_is_kept_across_cells() {
    let mut s = session();
    let r = s.run("x = 6 * 7").unwrap();
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.value, None);
    assert_eq!(r.execution_count, 1);
    assert!(r.error.is_none());

    let r = s.run("print('x is', x)\nx").unwrap();
    assert!(r.is_ok());
    assert_eq!(r.stdout, b"x is 42\n");
    assert_eq!(r.stdout_lossy(), "x is 42\n");
    assert_eq!(r.stderr, b"");
    assert_eq!(r.value.as_deref(), Some("42"));
    assert_eq!(r.execution_count, 2);
    assert!(r.wall_time > Duration::ZERO);
    assert!(r.peak_memory > 10 << 20, "peak memory {}", r.peak_memory);
    assert_eq!(r.truncated, Truncated::default());
    assert!(r.outputs.is_empty() && r.files.is_empty());

    let r = s.run("import numpy as np\nnp.arange(10).mean()").unwrap();
    assert_eq!(r.value.as_deref(), Some("4.5"));
    let r = s.run("y = [x] * 2\ny;").unwrap();
    assert_eq!(r.value, None, "a trailing semicolon hides the value");
    assert_eq!(s.run("y").unwrap().value.as_deref(), Some("[42, 42]"));
}

#[test]
fn exception_is_a_result_not_an_error() {
    let mut s = session();
    let r = s
        .run("def ratio(a, b):\n    return a / b\n\nratio(1, 0)")
        .unwrap();
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.value, None);
    let e = r.error.expect("error");
    assert_eq!(e.name, "ZeroDivisionError");
    assert_eq!(e.value, "division by zero");
    let tb = e.traceback.expect("traceback");
    assert!(tb.contains("<cell 1>"), "traceback: {}", tb);
    assert!(tb.contains("in ratio"), "traceback: {}", tb);
    assert!(tb.contains("ZeroDivisionError: division by zero"), "traceback: {}", tb);
    assert!(!tb.contains("codeinterp"), "worker frames leak: {}", tb);
    // Only the cell's frames: nothing to fold.
    assert_eq!(e.traceback_full.as_deref(), Some(tb.as_str()));

    let r = s.run("int('x')").unwrap();
    assert_eq!(r.error.unwrap().name, "ValueError");
    let r = s.run("def f(:\n    pass").unwrap();
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.error.unwrap().name, "SyntaxError");
    // The session goes on.
    assert_eq!(s.run("ratio(9, 3)").unwrap().value.as_deref(), Some("3.0"));
}

#[test]
fn timeout_of_one_run_keeps_the_session() {
    let mut s = session();
    s.run("before = 'kept'").unwrap();
    let r = s
        .run_with(
            "while True: pass",
            RunOptions::new().timeout(Duration::from_millis(300)),
        )
        .unwrap();
    assert_eq!(r.status, Status::Timeout);
    assert_eq!(r.error.as_ref().unwrap().name, "TimeoutError");
    assert!(r.wall_time >= Duration::from_millis(300), "{:?}", r.wall_time);
    assert!(r.wall_time < Duration::from_secs(3), "{:?}", r.wall_time);
    // The spin's CPU time is counted; on a loaded machine it may get far
    // less than its 300 ms of wall time (81 ms was seen on 2 shared cores).
    assert!(r.cpu_time >= Duration::from_millis(10), "cpu {:?}", r.cpu_time);

    let r = s.run("21 * 2").unwrap();
    assert_eq!(r.value.as_deref(), Some("42"));
    assert_eq!(s.run("before").unwrap().value.as_deref(), Some("'kept'"));

    let e = s
        .run_with("1", RunOptions::new().timeout(Duration::ZERO))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn config_timeout_and_memory_limit() {
    let mut s = session_exact(
        Config::new()
            .timeout(Duration::from_millis(400))
            .memory_limit(512 << 20),
    );
    let r = s.run("x = bytearray(1 << 30)").unwrap();
    assert_eq!(r.status, Status::Memory);
    assert_eq!(r.error.unwrap().name, "MemoryError");
    let r = s.run("import time\ntime.sleep(30)").unwrap();
    assert_eq!(r.status, Status::Timeout);
    assert!(r.wall_time < Duration::from_secs(3), "{:?}", r.wall_time);
    assert_eq!(s.run("len(bytearray(1 << 20))").unwrap().value.as_deref(), Some("1048576"));
}

#[test]
fn figure_is_a_png_output_at_the_configured_dpi() {
    let mut s = session_with(Config::new().figure_dpi(50));
    let r = s
        .run(
            "import matplotlib.pyplot as plt\n\
             fig, ax = plt.subplots()\n\
             ax.plot([1, 2, 3], [4, 1, 9])\n\
             ax.set_title('demo')\n\
             print('plotted')",
        )
        .unwrap();
    assert!(r.is_ok(), "{:?}", r.error);
    assert_eq!(r.stdout_lossy(), "plotted\n");
    // One display_data message: the PNG first, then its text/plain form.
    let mimes: Vec<&str> = r.outputs.iter().map(|o| o.mime.as_str()).collect();
    assert_eq!(mimes, ["image/png", "text/plain"]);
    assert!(r.outputs.iter().all(|o| o.message == 0 && o.kind == OutputKind::DisplayData));
    let plain = r.outputs[1].text().unwrap();
    assert!(plain.contains("Figure"), "{}", plain);
    let png = &r.outputs[0];
    assert_eq!(png.mime, "image/png");
    assert_eq!(png.kind, OutputKind::DisplayData);
    assert_eq!(png.message, 0);
    assert!(png.data.starts_with(PNG_SIGNATURE));
    assert!(!png.is_text() && png.text().is_none());
    // 6.4 x 4.8 inches at 50 dpi, cropped to what is drawn as IPython's
    // inline backend does; the text gives the whole figure's size.
    let (w, h) = png_size(&png.data);
    assert!((200..=340).contains(&w) && (150..=260).contains(&h), "{}x{}", w, h);
    assert_eq!(plain, "<Figure size 320x240 with 1 Axes>");

    // The figure was closed: the next cell has no output.
    assert!(s.run("1").unwrap().outputs.is_empty());
}

/// Needs the worker that sends update_display_data and clear_output
/// (lib/worker/runner.py, proto.h version 2).
#[test]
fn display_update_and_clear_are_outputs() {
    let mut s = session();
    let r = s
        .run(
            "from IPython.display import display, clear_output\n\
             h = display('a', display_id=True)\n\
             h.update('b')\n\
             clear_output(wait=True)",
        )
        .unwrap();
    assert!(r.is_ok(), "{:?}", r.error);
    assert_eq!(r.outputs.len(), 3, "{:?}", r.outputs);
    let (shown, update, clear) = (&r.outputs[0], &r.outputs[1], &r.outputs[2]);
    assert_eq!((shown.kind, shown.message, shown.text()), (OutputKind::DisplayData, 0, Some("'a'")));
    assert!(shown.display_id.is_some() && !shown.wait);
    assert_eq!(
        (update.kind, update.message, update.text()),
        (OutputKind::UpdateDisplayData, 1, Some("'b'"))
    );
    assert_eq!(update.display_id, shown.display_id);
    assert!(!update.wait);
    assert_eq!((clear.kind, clear.message, clear.mime.as_str()), (OutputKind::ClearOutput, 2, ""));
    assert!(clear.data.is_empty() && clear.display_id.is_none() && clear.wait);
}

#[test]
fn dataframe_value_has_an_html_output() {
    let mut s = session();
    let r = s
        .run("import pandas as pd\npd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3, 18]})")
        .unwrap();
    assert!(r.is_ok());
    let value = r.value.unwrap();
    assert!(value.contains("Oslo") && value.contains("temp"), "{}", value);
    let html = r
        .outputs
        .iter()
        .find(|o| o.mime == "text/html")
        .expect("text/html output");
    assert_eq!(html.kind, OutputKind::ExecuteResult);
    assert!(html.is_text());
    let text = html.text().unwrap();
    assert!(text.contains("<table") && text.contains("Lima"), "{}", text);
}

#[test]
fn output_bytes_are_raw_and_limits_are_reported() {
    let mut s = session_with(Config::new().output_limit(1024));
    let r = s
        .run("import sys\nsys.stdout.flush()\nsys.stdout.buffer.write(b'caf\\xe9\\n')\nsys.stdout.flush()")
        .unwrap();
    assert!(r.is_ok(), "{:?}", r.error);
    assert_eq!(r.stdout, b"caf\xe9\n");
    assert_eq!(r.stdout_lossy(), "caf\u{fffd}\n");

    let r = s.run("import sys\nprint('e' * 5000, file=sys.stderr)").unwrap();
    // A head and a tail of 512 bytes, and the marker line between them.
    let e = r.stderr_lossy();
    assert!(e.starts_with(&format!("{}\n[... 3977 bytes (0 lines) left out: stderr passed the output limit of 1 KiB", "e".repeat(512))), "{e}");
    assert!(e.ends_with(&format!("...]\n{}\n", "e".repeat(511))), "{e}");
    assert!(r.truncated.contains(Truncated::STDERR));
    assert!(!r.truncated.contains(Truncated::STDOUT));
    assert!(r.truncated.any());
}

/// The line that stands for frames folded out of a traceback:
/// "    ... 7 frames in a.py, b.py ...".
fn has_fold_line(tb: &str) -> bool {
    tb.lines().any(|l| {
        l.strip_prefix("    ... ")
            .and_then(|rest| rest.split_once(' '))
            .map_or(false, |(n, rest)| {
                !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_digit())
                    && (rest.starts_with("frames in ") || rest.starts_with("frame in "))
            })
    })
}

#[test]
fn library_frames_are_folded() {
    let mut s = session();
    let r = s.run("import pandas as pd\npd.DataFrame({'a':[1]})['b']").unwrap();
    assert_eq!(r.status, Status::Error);
    let e = r.error.expect("error");
    assert_eq!((e.name.as_str(), e.value.as_str()), ("KeyError", "'b'"));
    let tb = e.traceback.expect("traceback");
    let full = e.traceback_full.expect("full traceback");
    let cell = format!("File \"<cell {}>\", line 2, in <module>", r.execution_count);
    assert!(tb.contains("frames in") || tb.contains("frame in"), "{tb}");
    assert!(has_fold_line(&tb), "{tb}");
    assert!(tb.contains(&cell), "{tb}");
    assert!(tb.contains("pandas/core/frame.py") && !tb.contains("core/frame.py\", line"), "{tb}");
    assert!(full.len() > tb.len(), "full {} bytes, folded {}", full.len(), tb.len());
    assert!(!has_fold_line(&full), "{full}");
    assert!(full.contains(&cell), "{full}");
    assert!(full.contains("pandas/core/frame.py\", line"), "{full}");
    assert!(tb.ends_with("KeyError: 'b'\n") && full.ends_with("KeyError: 'b'\n"));
    assert!(!has_fold_line("    ... 3 things\n") && has_fold_line("    ... 1 frame in a.py ...\n"));
}

#[test]
fn cut_stream_is_whole_in_its_spill_file() {
    let mut s = session_with(Config::new().output_limit(4096));
    let r = s.run("print('y' * 10000)").unwrap();
    let name = format!(".outputs/cell-{}.stdout", r.execution_count);
    assert_eq!(r.spill_file(Stream::Stdout), Some(name.as_str()));
    let marker = r.stdout.split(|&b| b == b'\n').nth(1).unwrap();
    let tail = format!("the whole output is in {} ...]", name);
    assert!(marker.ends_with(tail.as_bytes()), "{}", String::from_utf8_lossy(marker));
    assert_eq!(s.get_file(&name).unwrap(), format!("{}\n", "y".repeat(10000)).as_bytes());
    assert_eq!(r.spill_file(Stream::Stderr), None); // stderr was not cut

    // Raw bytes, NULs and invalid UTF-8 included, byte for byte.
    let r = s
        .run("import sys\nsys.stdout.buffer.write(bytes(range(256)) * 40)\nprint('err', file=sys.stderr)")
        .unwrap();
    let name = format!(".outputs/cell-{}.stdout", r.execution_count);
    assert_eq!(r.truncated, Truncated::STDOUT);
    assert_eq!(r.spill_file(Stream::Stdout), Some(name.as_str()));
    let raw: Vec<u8> = (0..40).flat_map(|_| 0..=255u8).collect();
    assert_eq!(s.get_file(&name).unwrap(), raw);
    assert_eq!((r.stderr.as_slice(), r.spill_file(Stream::Stderr)), (&b"err\n"[..], None));

    let r = s.run("import sys\nprint('z' * 10000, file=sys.stderr)\nprint('short')").unwrap();
    let name = format!(".outputs/cell-{}.stderr", r.execution_count);
    assert_eq!(r.truncated, Truncated::STDERR);
    assert_eq!(r.spill_file(Stream::Stderr), Some(name.as_str()));
    assert_eq!(r.spill_file(Stream::Stdout), None);
    assert_eq!(s.get_file(&name).unwrap(), format!("{}\n", "z".repeat(10000)).as_bytes());

    let r = s.run("print('short')").unwrap();
    assert!(!r.truncated.any());
    assert_eq!((r.spill_file(Stream::Stdout), r.spill_file(Stream::Stderr)), (None, None));
}

#[test]
fn spill_limit_is_applied() {
    let mut s = session_with(Config::new().output_limit(4096).spill_limit(0));
    let r = s.run("print('y' * 10000)").unwrap();
    assert_eq!(r.truncated, Truncated::STDOUT);
    assert_eq!(r.spill_file(Stream::Stdout), None);
    let marker = r.stdout.split(|&b| b == b'\n').nth(1).unwrap();
    assert_eq!(
        String::from_utf8_lossy(marker),
        "[... 5905 bytes (0 lines) left out: stdout passed the output limit of 4 KiB; \
         the rest was not kept ...]"
    );
    let e = s.get_file(".outputs/cell-1.stdout").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    drop(s);

    // A spill file of 2 KiB keeps the stream's first 2 KiB.
    let mut s = session_with(Config::new().output_limit(4096).spill_limit(2048));
    let r = s.run("print('y' * 10000)").unwrap();
    assert_eq!(r.spill_file(Stream::Stdout), Some(".outputs/cell-1.stdout"));
    let marker = r.stdout.split(|&b| b == b'\n').nth(1).unwrap();
    assert!(marker.ends_with(b"its first 2 KiB are in .outputs/cell-1.stdout ...]"));
    assert_eq!(s.get_file(".outputs/cell-1.stdout").unwrap(), "y".repeat(2048).as_bytes());
}

#[test]
fn nul_in_code_is_an_error_not_a_panic() {
    let mut s = session();
    let e = s.run("x = 1\0").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.code(), -1);
    assert!(e.detail().contains("NUL"), "{}", e);
    assert_eq!(e.op(), "Session::run");
    assert_eq!(
        e.to_string(),
        "Session::run: invalid argument: code holds a NUL byte at offset 5"
    );
    // Nothing ran: the next cell is the first.
    assert_eq!(s.run("2 + 2").unwrap().execution_count, 1);
}

#[test]
fn killed_worker_makes_the_session_dead_until_restart() {
    let mut s = session();
    let first_pid = s.pid().expect("pid");
    s.run("x = 1").unwrap();
    let r = s.run("import os\nos._exit(3)").unwrap();
    assert_eq!(r.status, Status::Killed);
    let e = r.error.unwrap();
    assert_eq!(e.name, "WorkerDied");
    assert!(!e.value.is_empty());
    assert_eq!(s.pid(), None);
    assert_eq!(s.sandbox().bits(), 0);
    assert!(!r.rolled_back && !s.rollback_active());
    assert!(!e.value.contains("rolled back"), "{}", e.value);

    let err = s.run("1").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Dead);
    let shown = err.to_string();
    assert!(shown.starts_with("Session::run: "), "{}", shown);
    assert!(shown.contains("call Session::restart"), "{}", shown);
    assert!(!shown.contains("ci_"), "{}", shown);

    s.restart().unwrap();
    let pid = s.pid().expect("a new worker");
    assert_ne!(pid, first_pid);
    let r = s.run("x").unwrap();
    assert_eq!(r.status, Status::Error, "a restart empties the state");
    assert_eq!(r.error.unwrap().name, "NameError");
    assert_eq!(r.execution_count, 1);
}

#[test]
fn rollback_keeps_the_state_before_a_cell_that_killed_the_worker() {
    let mut s = session_exact(
        Config::new()
            .timeout(Duration::from_secs(2))
            .grace(Duration::from_millis(300))
            .rollback(true),
    );
    assert!(s.rollback_active(), "{}", s.sandbox());
    s.run("x = 41").unwrap();
    let old_pid = s.pid().expect("pid");
    let r = s.run("import os; os._exit(3)").unwrap();
    assert_eq!(r.status, Status::Killed);
    assert!(r.rolled_back);
    let e = r.error.unwrap();
    assert_eq!(e.name, "WorkerDied");
    assert!(e.value.contains("exited with status 3"), "{}", e.value);
    assert!(e.value.contains("rolled back"), "{}", e.value);
    // The checkpoint took the killed worker's place.
    let pid = s.pid().expect("the checkpoint");
    assert_ne!(pid, old_pid);
    assert!(s.rollback_active());
    let r = s.run("x").unwrap();
    assert_eq!(r.value.as_deref(), Some("41"));
    assert!(!r.rolled_back);
    assert_eq!(r.execution_count, 3);

    // Killed after the grace period: rolled back too.
    let stubborn = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n\
                    x = 0\ntime.sleep(30)";
    let r = s.run(stubborn).unwrap();
    assert_eq!(r.status, Status::Killed);
    assert!(r.rolled_back);
    assert_eq!(r.error.unwrap().name, "TimeoutError");
    assert_eq!(s.run("x + 1").unwrap().value.as_deref(), Some("42"));

    // A branch has its parent's config, rollback among it.
    let mut b = s.fork().unwrap();
    assert!(b.rollback_active());
    assert!(b.run("import os; os._exit(1)").unwrap().rolled_back);
    assert_eq!(b.run("x").unwrap().value.as_deref(), Some("41"));
}

#[test]
fn rollback_needs_a_worker_forked_from_the_zygote() {
    // A worker started by exec has no PID namespace: the session starts
    // without rollback, and a cell that kills the worker leaves it dead.
    let mut s = session_with(Config::new().rollback(true).zygote(false));
    assert!(!s.rollback_active());
    let r = s.run("import os; os._exit(3)").unwrap();
    assert_eq!(r.status, Status::Killed);
    assert!(!r.rolled_back);
    assert_eq!(s.run("1").unwrap_err().kind(), ErrorKind::Dead);
}

#[test]
fn status_displays_as_ci_status_name() {
    for (status, name) in [
        (Status::Ok, "ok"),
        (Status::Error, "error"),
        (Status::Timeout, "timeout"),
        (Status::Memory, "memory"),
        (Status::Killed, "killed"),
        (Status::Interrupted, "interrupted"),
        (Status::Other(6), "unknown(6)"),
        (Status::Other(-1), "unknown(-1)"),
    ] {
        assert_eq!(status.to_string(), name, "{:?}", status);
    }
    assert_eq!(Status::Timeout.code(), 2);
}

/// A cell that ignores the timeout's KeyboardInterrupt is killed after the
/// grace period, under the name of a cell that stopped at its timeout.
#[test]
fn cell_killed_after_its_timeout_is_a_timeout_error() {
    let mut s = session_exact(
        Config::new()
            .timeout(Duration::from_millis(300))
            .grace(Duration::from_millis(200)),
    );
    let r = s
        .run("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nimport time\n\
              time.sleep(30)")
        .unwrap();
    assert_eq!(r.status, Status::Killed);
    assert_eq!(r.status.to_string(), "killed");
    let e = r.error.unwrap();
    assert_eq!(e.name, "TimeoutError", "{}", e.value);
    assert!(r.wall_time < Duration::from_secs(10), "{:?}", r.wall_time);
    s.restart().unwrap();
    assert_eq!(s.run("6 * 7").unwrap().value.as_deref(), Some("42"));
}

#[test]
fn refused_run_arguments_name_the_method() {
    let mut s = session();
    let e = s.run(&"#".repeat((16 << 20) + 1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooBig);
    assert_eq!(
        e.to_string(),
        "Session::run: size over the limit: code of 16777217 bytes is over the limit of a \
         cell, 16 MiB (16777216 bytes)"
    );
    let e = s
        .run_with("1", RunOptions::new().timeout(Duration::from_secs(86_401)))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Session::run_with: invalid argument: RunOptions::timeout 86401s refused: must be 1 ms \
         to 24 h, or None for the session's"
    );
}

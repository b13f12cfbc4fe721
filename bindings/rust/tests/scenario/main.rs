//! The shared scenario (test/scenario/steps.json, docs/testing.md): one
//! session taken through the steps the C library's, the Python and the Go
//! tests take too. The expected values are the data file's; this file only
//! maps each step kind to the crate's API.
mod json;

use codeinterp::{CellResult, Config, Output, OutputKind, RunOptions, Session};
use json::Json;
use std::path::Path;
use std::time::Duration;

fn field<'a>(v: &'a Json, key: &str) -> Result<&'a Json, String> {
    v.get(key)
        .ok_or_else(|| format!("no \"{}\" in {:?}", key, v))
}

fn text<'a>(v: &'a Json, key: &str) -> Result<&'a str, String> {
    field(v, key)?
        .as_str()
        .ok_or_else(|| format!("\"{}\" is not a string", key))
}

fn kind_name(kind: OutputKind) -> String {
    match kind {
        OutputKind::DisplayData => "display_data".to_string(),
        OutputKind::ExecuteResult => "execute_result".to_string(),
        OutputKind::UpdateDisplayData => "update_display_data".to_string(),
        OutputKind::ClearOutput => "clear_output".to_string(),
        OutputKind::Other(n) => format!("other({})", n),
    }
}

fn string_or_null(s: Option<&str>) -> Json {
    s.map_or(Json::Null, |s| Json::String(s.to_string()))
}

fn from_hex(hex: &str) -> Result<Vec<u8>, String> {
    if hex.len() % 2 != 0 {
        return Err(format!("odd-length hex {:?}", hex));
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| format!("bad hex {:?}", hex)))
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

fn check_output(i: usize, want: &Json, o: &Output) -> Result<(), String> {
    let (mime, kind) = (text(want, "mime")?, text(want, "type")?);
    if o.mime != mime || kind_name(o.kind) != kind {
        return Err(format!(
            "output {}: {} {}, expected {} {}",
            i,
            o.mime,
            kind_name(o.kind),
            mime,
            kind
        ));
    }
    if let Some(t) = want.get("text") {
        let t = t.as_str().ok_or("\"text\" is not a string")?;
        if o.data != t.as_bytes() {
            return Err(format!(
                "output {}: {:?}, expected {:?}",
                i,
                String::from_utf8_lossy(&o.data),
                t
            ));
        }
    }
    if let Some(c) = want.get("contains") {
        let c = c.as_str().ok_or("\"contains\" is not a string")?;
        if !contains(&o.data, c.as_bytes()) {
            return Err(format!("output {} does not contain {:?}", i, c));
        }
    }
    if let Some(h) = want.get("prefix_hex") {
        let prefix = from_hex(h.as_str().ok_or("\"prefix_hex\" is not a string")?)?;
        if !o.data.starts_with(&prefix) {
            return Err(format!(
                "output {} starts {:?}, expected {:?}",
                i,
                &o.data[..o.data.len().min(16)],
                prefix
            ));
        }
    }
    Ok(())
}

fn check_traceback(want: &Json, r: &CellResult) -> Result<(), String> {
    let tb = r
        .error
        .as_ref()
        .and_then(|e| e.traceback.as_deref())
        .unwrap_or("");
    for part in want
        .as_array()
        .ok_or("\"traceback_contains\" is not a list")?
    {
        let part = part
            .as_str()
            .ok_or("\"traceback_contains\" holds a non-string")?;
        if !tb.contains(part) {
            return Err(format!("traceback does not contain {:?}:\n{}", part, tb));
        }
    }
    Ok(())
}

fn check_outputs(want: &Json, r: &CellResult) -> Result<(), String> {
    let want = want.as_array().ok_or("\"outputs\" is not a list")?;
    if want.len() != r.outputs.len() {
        return Err(format!(
            "{} outputs, expected {}",
            r.outputs.len(),
            want.len()
        ));
    }
    for (i, (w, o)) in want.iter().zip(&r.outputs).enumerate() {
        check_output(i, w, o)?;
    }
    Ok(())
}

/// The value of a result that the expect key @key names, as JSON.
fn seen(key: &str, r: &CellResult) -> Result<Json, String> {
    let error = r.error.as_ref();
    Ok(match key {
        "status" => Json::String(r.status.to_string()),
        "execution_count" => Json::Number(f64::from(r.execution_count)),
        "stdout" => {
            Json::String(String::from_utf8(r.stdout.clone()).map_err(|_| "stdout is not UTF-8")?)
        }
        "value" => string_or_null(r.value.as_deref()),
        "error_name" => string_or_null(error.map(|e| e.name.as_str())),
        "error_value" => string_or_null(error.map(|e| e.value.as_str())),
        "files" => Json::Array(
            r.files
                .iter()
                .map(|f| Json::String(f.to_string_lossy().into_owned()))
                .collect(),
        ),
        _ => return Err(format!("unknown expect key {:?}", key)),
    })
}

/// What @r holds, with each output as its MIME type and size instead of
/// its bytes.
fn summary(r: &CellResult) -> String {
    let outputs: Vec<String> = r
        .outputs
        .iter()
        .map(|o| format!("{} {} {} bytes", kind_name(o.kind), o.mime, o.data.len()))
        .collect();
    format!(
        "status {}, execution count {}, value {:?}, error {:?}, stdout {:?}, stderr {:?}, \
         outputs {:?}, files {:?}",
        r.status,
        r.execution_count,
        r.value,
        r.error,
        r.stdout_lossy(),
        r.stderr_lossy(),
        outputs,
        r.files
    )
}

fn check_run(expect: &Json, r: &CellResult) -> Result<(), String> {
    for (key, want) in expect.as_object().ok_or("\"expect\" is not an object")? {
        match key.as_str() {
            "traceback_contains" => check_traceback(want, r),
            "outputs" => check_outputs(want, r),
            _ => {
                let got = seen(key, r)?;
                if &got == want {
                    Ok(())
                } else {
                    Err(format!("{} {:?}, expected {:?}", key, got, want))
                }
            }
        }
        .map_err(|e| format!("{}\n(result: {})", e, summary(r)))?;
    }
    Ok(())
}

/// Runs @step on @session; a "close" step drops it.
fn do_step(session: &mut Option<Session>, step: &Json) -> Result<(), String> {
    let kind = text(step, "kind")?;
    if kind == "close" {
        return session
            .take()
            .map(drop)
            .ok_or_else(|| "the session is closed".to_string());
    }
    let s = session.as_mut().ok_or("the session is closed")?;
    match kind {
        "put_file" => s
            .put_file(text(step, "name")?, text(step, "text")?.as_bytes())
            .map_err(|e| e.to_string()),
        "run" => {
            let mut options = RunOptions::new();
            if let Some(ms) = step.get("timeout_ms") {
                options = options.timeout(Duration::from_millis(
                    ms.as_u64().ok_or("bad \"timeout_ms\"")?,
                ));
            }
            let r = s
                .run_with(text(step, "code")?, options)
                .map_err(|e| e.to_string())?;
            check_run(field(step, "expect")?, &r)
        }
        "get_file" => {
            let data = s.get_file(text(step, "name")?).map_err(|e| e.to_string())?;
            let want = text(step, "text")?;
            if data == want.as_bytes() {
                Ok(())
            } else {
                Err(format!(
                    "{:?}, expected {:?}",
                    String::from_utf8_lossy(&data),
                    want
                ))
            }
        }
        "restart" => s.restart().map_err(|e| e.to_string()),
        _ => Err(format!("unknown step kind {:?}", kind)),
    }
}

#[test]
fn scenario() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/scenario/steps.json");
    let data =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let scenario = json::parse(&data).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let timeout_ms = scenario
        .get("session")
        .and_then(|s| s.get("timeout_ms"))
        .and_then(Json::as_u64)
        .expect("session.timeout_ms");
    let mut session = Some(
        Session::new(Config::new().timeout(Duration::from_millis(timeout_ms)))
            .unwrap_or_else(|e| panic!("Session::new failed: {}", e)),
    );
    let steps = scenario
        .get("steps")
        .and_then(Json::as_array)
        .expect("steps");
    for (n, step) in steps.iter().enumerate() {
        if let Err(e) = do_step(&mut session, step) {
            let kind = step.get("kind").and_then(Json::as_str).unwrap_or("?");
            let name = step.get("step").and_then(Json::as_str).unwrap_or("?");
            panic!("scenario step {} ({}, {}): {}", n + 1, kind, name, e);
        }
    }
}

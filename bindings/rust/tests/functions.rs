//! Host functions: a closure of the host called from a cell, with the
//! arguments as JSON text and its JSON text, error or panic answered.
mod common;

use codeinterp::{Config, FunctionError, RunOptions, Session, Status};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn functions_session(seen: Arc<Mutex<Vec<String>>>) -> Session {
    let cfg = Config::new()
        .function("query_sales", "Sales of a region.", move |args| {
            seen.lock().unwrap().push(args.to_string());
            if args.contains("nowhere") {
                return Err(FunctionError::new("KeyError", "no region nowhere"));
            }
            Ok(r#"{"region": "EMEA", "total": 12.5, "rows": [1, null, true]}"#.to_string())
        })
        .function("not_json", "", |_| Ok("{nope".to_string()))
        .function("slow", "", |_| {
            std::thread::sleep(Duration::from_millis(1500));
            Ok("1".to_string())
        })
        .function("boom", "", |_| panic!("boom"))
        .call_limits(4096, 4096);
    Session::new(cfg).unwrap()
}

#[test]
fn a_call_gets_its_arguments_and_returns_the_value() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut s = functions_session(Arc::clone(&seen));
    let r = s
        .run("r = query_sales(7, region='EMEA')\nr['total'], r['rows']")
        .unwrap();
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    assert_eq!(r.value.as_deref(), Some("(12.5, [1, None, True])"));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![r#"{"args":[7],"kwargs":{"region":"EMEA"}}"#]
    );
    let r = s.run("help(query_sales)").unwrap();
    assert!(
        r.stdout_lossy().contains("Sales of a region."),
        "{}",
        r.stdout_lossy()
    );
}

#[test]
fn errors_not_json_and_the_timeout() {
    let mut s = functions_session(Arc::new(Mutex::new(Vec::new())));
    for (code, name, value) in [
        ("query_sales('nowhere')", "KeyError", "'no region nowhere'"),
        (
            "not_json()",
            "TypeError",
            "the host function not_json() answered 5 bytes that are not JSON",
        ),
        (
            "query_sales(float('nan'))",
            "TypeError",
            "query_sales() argument 1: the float nan is not JSON",
        ),
    ] {
        let r = s.run(code).unwrap();
        let e = r.error.unwrap();
        assert_eq!(e.name, name, "{}", code);
        assert!(e.value.starts_with(value), "{}: {}", code, e.value);
    }
    let r = s
        .run_with(
            "x = 1\nx = slow()",
            RunOptions::new().timeout(Duration::from_millis(500)),
        )
        .unwrap();
    assert_eq!(r.status, Status::Timeout);
    assert_eq!(s.run("x").unwrap().value.as_deref(), Some("1"));
    s.restart().unwrap();
    let r = s.run("query_sales()['region']").unwrap();
    assert_eq!(r.value.as_deref(), Some("'EMEA'"), "{:?}", r.error);
}

#[test]
fn a_panic_interrupts_the_cell_and_is_resumed() {
    let mut s = functions_session(Arc::new(Mutex::new(Vec::new())));
    let caught = panic::catch_unwind(AssertUnwindSafe(|| s.run("boom()")));
    let p = caught.unwrap_err();
    assert_eq!(p.downcast_ref::<&str>(), Some(&"boom"));
    assert_eq!(s.run("6 * 7").unwrap().value.as_deref(), Some("42"));
}

#[test]
fn refused_names() {
    for name in ["print", "_x", "class", "a-b", ""] {
        let e = Session::new(Config::new().function(name, "", |_| Ok("1".into()))).unwrap_err();
        assert!(
            e.detail().contains("ASCII Python identifier"),
            "{}: {}",
            name,
            e
        );
    }
}

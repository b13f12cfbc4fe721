//! The input callback: input() and getpass() answered, refused, panicking.
mod common;

use codeinterp::{RunOptions, Status};
use common::session;
use std::panic::{self, AssertUnwindSafe};

#[test]
fn on_input_answers_input_and_getpass() {
    let mut s = session();
    let mut asked: Vec<(String, bool)> = Vec::new();
    let mut answer = |prompt: &str, password: bool| {
        asked.push((prompt.to_string(), password));
        Some(if password { "s3cret" } else { "21" }.to_string())
    };
    let r = s
        .run_with(
            "import getpass\nn = int(input('how many? '))\npw = getpass.getpass()\n(n * 2, pw)",
            RunOptions::new().on_input(&mut answer),
        )
        .unwrap();
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    assert_eq!(r.value.as_deref(), Some("(42, 's3cret')"));
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0], ("how many? ".to_string(), false));
    assert!(asked[1].1);
}

#[test]
fn a_refusal_a_nul_and_no_callback_raise_stdin_not_implemented() {
    let mut s = session();
    let mut refuse = |_: &str, _: bool| None;
    let mut nul = |_: &str, _: bool| Some("a\0b".to_string());
    for options in [
        RunOptions::new().on_input(&mut refuse),
        RunOptions::new().on_input(&mut nul),
        RunOptions::new(),
    ] {
        let r = s.run_with("input('x? ')", options).unwrap();
        assert_eq!(r.status, Status::Error);
        assert_eq!(r.error.unwrap().name, "StdinNotImplementedError");
    }
}

#[test]
fn a_panic_in_on_input_interrupts_and_resumes() {
    let mut s = session();
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut boom = |_: &str, _: bool| -> Option<String> { panic!("no answer") };
        let _ = s.run_with(
            "input('x? ')\nimport time\nwhile True: time.sleep(0.01)",
            RunOptions::new().on_input(&mut boom),
        );
    }));
    let p = caught.expect_err("run_with returned");
    assert_eq!(p.downcast_ref::<&str>(), Some(&"no answer"));
    assert_eq!(s.run("6 * 7").unwrap().value.as_deref(), Some("42"));
}

//! Which types cross threads, as the docs say: a Session moves to another
//! thread (Send: the C library wants one thread at a time on a session,
//! not a particular one) but is not shared (not Sync: `&self` calls would
//! then overlap); an Interrupter is both; results, errors and configs are
//! plain data. A type losing one of these fails to compile here.
use codeinterp::{CellResult, Config, Error, Interrupter, Sandbox, Session, Status};
use std::time::Duration;

fn send<T: Send>() {}
fn sync<T: Sync>() {}

#[test]
fn the_types_cross_threads_as_documented() {
    send::<Session>();
    send::<Interrupter>();
    sync::<Interrupter>();
    for_plain_data::<CellResult>();
    for_plain_data::<Config>();
    for_plain_data::<Error>();
    for_plain_data::<Sandbox>();
    for_plain_data::<Status>();
}

fn for_plain_data<T: Send + Sync>() {}

#[test]
fn a_session_runs_on_the_thread_it_was_moved_to() {
    let session = Session::new(Config::new().timeout(Duration::from_secs(20))).unwrap();
    let interrupter = session.interrupter();
    let handle = std::thread::spawn(move || {
        let mut session = session;
        let r = session.run("6 * 7").unwrap();
        (session, r)
    });
    let (mut session, r) = handle.join().unwrap();
    assert_eq!(r.value.as_deref(), Some("42"));
    assert!(!interrupter.interrupt());          // nothing running
    assert_eq!(session.run("1 + 1").unwrap().value.as_deref(), Some("2"));
    println!("{}", session.sandbox());          // Display names the layers
}

//! A panic inside one MCP call (a bug) is that call's `INTERNAL` error
//! result; the session goes on answering. Its own test binary: the debug
//! build's panic hook (`scry_ops::isolate::test_panic_hook`) is switched on
//! through the environment before any thread starts.

mod common;

use common::*;
use serde_json::json;

#[test]
fn a_panic_in_one_call_is_an_internal_error_and_the_session_serves_on() {
    if !cfg!(debug_assertions) {
        eprintln!("skipping: the panic hook exists in debug builds only");
        return;
    }
    // SAFETY: set before the runtime (and any other thread of this binary)
    // starts.
    unsafe { std::env::set_var("SCRY_TEST_PANIC_SYMBOL", "boom_panic") };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let Some(ws) = fake_workspace("panic", "normal", &[]) else {
            return;
        };
        let mut raw = Raw::start(server(&ws, false)).await;
        raw.call(
            json!(1),
            "lsp",
            json!({"action": "definition", "path": "a.fake", "symbol": "boom_panic"}),
        )
        .await;
        let r = raw.response(json!(1)).await;
        assert_eq!(error_code(&r), "INTERNAL", "{r}");
        assert!(text(&r).contains("boom_panic"), "{r}");
        raw.call(
            json!(2),
            "lsp",
            json!({"action": "definition", "path": "a.fake", "symbol": "alpha", "line": 1}),
        )
        .await;
        let r = raw.response(json!(2)).await;
        assert!(!is_error(&r), "the next call is answered: {r}");
    });
}

//! The checks of the `reply_paths` fuzz target (`fuzz/`), shared with the
//! unit tests that replay the committed corpus and random inputs on stable.
//! Not an API: only compiled for tests and with the `fuzzing` feature.
//!
//! One input = up to four file names of arbitrary bytes (split at NUL,
//! which no name holds; `/` dropped, at most 200 bytes each). Each goes, under a
//! workspace root, into every place a reply carries a path (a location, a
//! note, an error's message and path, the question) and into a call. The
//! daemon's encoding must give exactly one frame, one line, that reads back
//! to the same paths byte for byte; the rendered text and JSON show every
//! name on one line with no U+FFFD that the name did not hold (bytes that
//! are not UTF-8 escaped as `\xNN`), the same on both routes.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use scry_base::platform::os_str;
use scry_model::{Action, Answer, Body, Loc, OpError, Query, Reason};

use crate::proto::{self, Call, CallResult, ClientFrame, DaemonFrame, Reply};

const ROOT: &str = "/ws/proj";

/// The file names an input stands for (at most four, never empty).
fn names(data: &[u8]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = data
        .split(|b| *b == 0)
        .map(|n| {
            // One name each (no `/`), short enough that no cap cuts it.
            let n: Vec<u8> = n.iter().copied().filter(|b| *b != b'/').take(200).collect();
            if n.is_empty() || n == b"." || n == b".." {
                PathBuf::from("x")
            } else {
                // Bytes that are no OS name (not WTF-8, on Windows) are
                // taken as the name they show as.
                let lossy = String::from_utf8_lossy(&n).into_owned();
                os_str::from_bytes(n).map_or_else(|| PathBuf::from(lossy), PathBuf::from)
            }
        })
        .take(4)
        .collect();
    if out.is_empty() {
        out.push(PathBuf::from("x"));
    }
    out
}

fn loc(path: &Path, line: u32) -> Loc {
    Loc {
        path: path.to_path_buf(),
        line,
        col: 1,
        end_line: line,
        end_col: 4,
        text: Some("qux(2)".into()),
    }
}

/// An answer listing every path, with a note naming the first.
fn answer(paths: &[PathBuf]) -> Answer {
    let mut a = Answer::new(
        Action::References,
        scry_model::Question {
            path: Some(paths[0].clone()),
            symbol: Some("qux".into()),
            ..Default::default()
        },
        Body::Locations {
            locations: paths
                .iter()
                .enumerate()
                .map(|(i, p)| loc(p, i as u32 + 1))
                .collect(),
        },
    );
    a.notes.push(Reason::NotIndexed {
        path: paths[0].clone(),
        why: scry_model::Unindexed::Binary,
    });
    a
}

fn round_trip(reply: Reply) -> Reply {
    let line = proto::encode_answer(reply);
    assert_eq!(line.last(), Some(&b'\n'), "a frame ends its line");
    assert!(
        !line[..line.len() - 1].contains(&b'\n'),
        "one frame is one line"
    );
    match serde_json::from_slice::<DaemonFrame>(&line).expect("the frame reads back") {
        DaemonFrame::Answer(r) => *r,
        other => panic!("not an answer: {other:?}"),
    }
}

/// A name as the answers show it: escaped (`\\xNN` for a byte that is
/// not UTF-8, control characters as Rust writes them), on one line, with
/// no U+FFFD but those the name spells in UTF-8.
fn shown(name: &OsStr) -> String {
    let root = Path::new(ROOT);
    let s = scry_render::display_path(&root.join(name), root);
    assert!(!s.contains(['\n', '\r']), "a name shown on one line: {s:?}");
    let own = os_str::to_bytes(name)
        .windows(3)
        .filter(|w| *w == "\u{fffd}".as_bytes())
        .count();
    assert_eq!(
        s.matches('\u{fffd}').count(),
        own,
        "a byte that is not UTF-8 shown as U+FFFD: {s:?}"
    );
    s
}

/// The check: encode, read back, compare, render.
pub fn check_reply_paths(data: &[u8]) {
    let root = Path::new(ROOT);
    let rel = names(data);
    let paths: Vec<PathBuf> = rel.iter().map(|n| root.join(n)).collect();

    // An answer: every path back byte for byte.
    let a = answer(&paths);
    let back = round_trip(Reply::new(
        7,
        root.to_path_buf(),
        CallResult::Answer(Box::new(a.clone())),
    ));
    assert_eq!(back.id, 7);
    let got = back.into_result().expect("not a config error");
    let got = got.expect("an answer, not an error");
    assert_eq!(got, a, "the answer reads back as it was");

    // The rendered answer: the same as in-process (it is the same answer),
    // each name escaped, none on a line of its own making.
    let opts = scry_render::RenderOptions::default();
    let text = scry_render::render_text(&got, root, &opts);
    assert_eq!(text, scry_render::render_text(&a, root, &opts));
    let json = scry_render::render_json(&got, root, &opts);
    for n in &rel {
        let s = shown(n.as_os_str());
        assert!(
            text.contains(&format!("\n{s}\n")),
            "{s:?} listed in {text:?}"
        );
        assert!(
            json["locations"]
                .as_array()
                .is_some_and(|l| l.iter().any(|l| l["path"] == s.as_str())),
            "{s:?} listed in {json}"
        );
    }

    // An error naming the path, in its message and as its subject.
    let e = OpError::FileNotFound(paths[0].clone());
    let back = round_trip(Reply::new(
        8,
        root.to_path_buf(),
        CallResult::Error(e.clone()),
    ));
    assert_eq!(
        back.into_result().expect("not a config error"),
        Err(e.clone())
    );
    let m = OpError::Timeout(
        scry_model::Message::new().fact(scry_model::Fact::ReadTimedOut {
            path: paths[0].clone(),
        }),
    );
    let back = round_trip(Reply::new(
        9,
        root.to_path_buf(),
        CallResult::Error(m.clone()),
    ));
    assert_eq!(back.into_result().expect("not a config error"), Err(m));
    let line = scry_render::render_error(&e, root);
    assert!(!line.contains('\n'), "an error is one line: {line:?}");
    // (An error line has its runs of spaces made one.)
    let name = shown(rel[0].as_os_str());
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(line.ends_with(&name), "{line:?}");

    // A question naming the path travels to the daemon and back.
    let mut q = Query::new(Action::References);
    q.path = Some(paths[0].clone());
    q.symbol = Some("qux".into());
    let valid = q.validate().expect("a plain question validates");
    let call = ClientFrame::Call(Box::new(Call::new(
        root.to_path_buf(),
        root.to_path_buf(),
        valid.clone(),
        Some(Duration::from_millis(5000)),
    )));
    let line = proto::try_encode(&call).expect("a question encodes");
    match serde_json::from_slice::<ClientFrame>(&line).expect("the call reads back") {
        ClientFrame::Call(c) => assert_eq!(c.question, valid),
        other => panic!("not a call: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/reply_paths`).
    #[test]
    fn fuzz_corpus_replays() {
        scry_testkit::replay_corpus("reply_paths", super::check_reply_paths);
    }

    /// Random byte names (a fixed seed, so a failure repeats), weighted
    /// towards the bytes that matter: invalid UTF-8 lead and continuation
    /// bytes, control characters, NUL (the name separator), `/`.
    #[test]
    fn random_byte_names_round_trip() {
        let mut next = scry_testkit::xorshift(0x5eed_cafe_f00d_0001);
        const SPECIAL: &[u8] = &[
            0xff, 0xfe, 0x80, 0xc3, 0xa9, 0xed, 0xa0, 0xe2, 0x82, 0xf0, b'\n', b'\r', 0x1b, 0x7f,
            0, b'/', b'\\', b'"', b'x',
        ];
        for _ in 0..500 {
            let len = (next() % 24) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if r.is_multiple_of(3) {
                        (r >> 8) as u8
                    } else {
                        SPECIAL[(r >> 8) as usize % SPECIAL.len()]
                    }
                })
                .collect();
            super::check_reply_paths(&data);
        }
    }
}

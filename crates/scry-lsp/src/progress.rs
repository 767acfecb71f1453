//! The CLI's progress line: while a question waits for a server to start or
//! index, one updating line on stderr (`rust-analyzer is still indexing
//! (Indexing 45% (crates))…`), drawn by `indicatif`, only when stderr is a
//! terminal and not under `--quiet`. It polls the answerer's
//! `waiting_on` (worded once, `scry_daemon::waiting_line`) from a side
//! task and never touches the question or its answer; it is cleared
//! before the answer is printed.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the workspace is looked at.
const POLL: Duration = Duration::from_millis(100);
/// Nothing is drawn for questions answered faster than this.
const DELAY: Duration = Duration::from_millis(250);

/// The running progress line; [`Progress::finish`] clears it.
pub struct Progress {
    task: tokio::task::JoinHandle<()>,
    bar: ProgressBar,
}

impl Progress {
    /// Start showing what `source` says; `None` when stderr is not a
    /// terminal or `quiet`.
    pub fn start(
        source: impl Fn() -> Option<String> + Send + 'static,
        quiet: bool,
    ) -> Option<Progress> {
        if quiet || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        let shown = bar.clone();
        let task = tokio::spawn(async move {
            tokio::time::sleep(DELAY).await;
            let mut ticking = false;
            loop {
                match source() {
                    Some(line) => {
                        shown.set_message(line);
                        if !ticking {
                            shown.enable_steady_tick(POLL);
                            ticking = true;
                        }
                    }
                    None if ticking => {
                        shown.disable_steady_tick();
                        shown.set_message("");
                        shown.finish_and_clear();
                        shown.reset();
                        ticking = false;
                    }
                    None => {}
                }
                tokio::time::sleep(POLL).await;
            }
        });
        Some(Progress { task, bar })
    }

    /// Stop and erase the line.
    pub fn finish(self) {
        self.task.abort();
        self.bar.finish_and_clear();
    }
}

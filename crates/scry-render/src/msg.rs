//! The two macros that write a sentence ([`msg!`](crate::msg),
//! [`msgf!`](crate::msgf)): a [`Message`](scry_model::Message) from its
//! parts. They live here, with the words, so that no crate below the
//! renderer can write a sentence with them (the crates below carry facts:
//! `scry_model::Fact`, `scry_model::Reason`).
//!
//! Invariant: a macro only builds parts; how each part is shown (a path
//! relative to the root, foreign text relativised, an argument spelled per
//! front end) is decided when the message is shown.

/// A [`Message`](scry_model::Message) from its parts, in order: `path(p)` is a path,
/// `foreign(s)` is text scry did not write (anything `Display`), `arg(a)` an
/// argument the caller may give (an [`Arg`](scry_model::action::Arg)), `action(a)` an action it may
/// ask, `example(e)` an example question ([`Example`](scry_model::Example)), `note(r)` a fact
/// the reader words (a [`Reason`](scry_model::Reason)), `fact(f)` an error
/// sentence's facts the reader words ([`Fact`](scry_model::Fact)), `message(m)`
/// appends another message's parts, and any other expression is scry's own
/// text (`&str`, `String`, `format!(…)`).
///
/// ```
/// # use std::path::Path;
/// let p = Path::new("/ws/proj/src/a.rs");
/// let m = scry_render::msg!(path(p), " changed; ", foreign("server: /ws/proj/b.rs"));
/// assert_eq!(m.to_string(), "/ws/proj/src/a.rs changed; server: /ws/proj/b.rs");
/// ```
#[macro_export]
macro_rules! msg {
    (@acc $m:expr;) => { $m };
    (@acc $m:expr; path($p:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.path($p); $($($rest)*)?)
    };
    (@acc $m:expr; foreign($f:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.foreign($f); $($($rest)*)?)
    };
    (@acc $m:expr; arg($a:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.arg($a); $($($rest)*)?)
    };
    (@acc $m:expr; action($a:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.action($a); $($($rest)*)?)
    };
    (@acc $m:expr; example($e:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.example($e); $($($rest)*)?)
    };
    (@acc $m:expr; note($n:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.note($n); $($($rest)*)?)
    };
    (@acc $m:expr; fact($o:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.fact($o); $($($rest)*)?)
    };
    (@acc $m:expr; message($o:expr) $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.append($o); $($($rest)*)?)
    };
    (@acc $m:expr; $t:expr $(, $($rest:tt)*)?) => {
        $crate::msg!(@acc $m.text($t); $($($rest)*)?)
    };
    ($($parts:tt)*) => {
        $crate::msg!(@acc $crate::__model::Message::new(); $($parts)*)
    };
}

/// A [`Message`](scry_model::Message) of scry's own text only, written like `format!`:
/// `msgf!("{} does not support rename", session.name())`. A message that
/// names a path or quotes a server's text is built with [`msg!`](crate::msg).
#[macro_export]
macro_rules! msgf {
    ($($fmt:tt)*) => {
        $crate::__model::Message::from(format!($($fmt)*))
    };
}

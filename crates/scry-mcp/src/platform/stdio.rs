//! `scry mcp`'s stdin and stdout as async streams.
//!
//! On Unix, a pipe or a socket (what MCP clients give a server they
//! start: a pipe, or libuv's socket pair) is read and written by the
//! runtime itself, readiness through epoll/kqueue like any socket: a line
//! that arrives wakes the task that waits for it, and an answer is written
//! by the task that has it, with no thread in between. tokio's own stdin
//! and stdout run every read and write on a blocking-pool thread: two
//! thread wake-ups per message each way. The descriptors are duplicated
//! (fds 0 and 1 stay open) and put in non-blocking mode, which their open
//! file is for everyone holding it; the previous mode is restored when the
//! streams are dropped. Anything else (a terminal, a file), and every
//! stream on Windows, is tokio's stdin and stdout.

use tokio::io::{AsyncRead, AsyncWrite};

/// The input stream.
pub type Input = Box<dyn AsyncRead + Send + Unpin>;
/// The output stream.
pub type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// stdin and stdout as async streams (see the module header).
pub fn stdio() -> (Input, Output) {
    imp::stdio()
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
    use std::os::unix::fs::FileTypeExt;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
    use tokio::net::unix::pipe;

    use super::{Input, Output};

    pub fn stdio() -> (Input, Output) {
        let input: Input = match polled(io::stdin().as_fd(), |kind| -> Option<Input> {
            Some(match kind {
                Kind::Pipe(fd) => Box::new(pipe::Receiver::from_owned_fd(fd).ok()?),
                Kind::Socket(fd) => Box::new(socket(fd)?),
            })
        }) {
            Some(s) => Box::new(s),
            None => Box::new(tokio::io::stdin()),
        };
        let output: Output = match polled(io::stdout().as_fd(), |kind| -> Option<Output> {
            Some(match kind {
                Kind::Pipe(fd) => Box::new(pipe::Sender::from_owned_fd(fd).ok()?),
                Kind::Socket(fd) => Box::new(socket(fd)?),
            })
        }) {
            Some(s) => Box::new(s),
            None => Box::new(tokio::io::stdout()),
        };
        (input, output)
    }

    /// A duplicate of `fd` made into a stream by `open` when it is a pipe
    /// or a socket, its file status flags restored when it is dropped.
    fn polled<S>(fd: BorrowedFd<'_>, open: impl FnOnce(Kind) -> Option<S>) -> Option<Restoring<S>> {
        let (kind, flags) = duplicate(fd.try_clone_to_owned())?;
        let raw = kind.raw();
        Some(Restoring {
            inner: open(kind)?,
            fd: raw,
            flags,
        })
    }

    /// A descriptor the runtime can poll.
    enum Kind {
        Pipe(OwnedFd),
        Socket(OwnedFd),
    }

    impl Kind {
        fn raw(&self) -> RawFd {
            match self {
                Kind::Pipe(fd) | Kind::Socket(fd) => fd.as_raw_fd(),
            }
        }
    }

    /// The duplicate `fd` of stdin or stdout when it is a pipe or a
    /// socket, and its file status flags (restored on drop).
    fn duplicate(fd: io::Result<OwnedFd>) -> Option<(Kind, libc::c_int)> {
        let fd = fd.ok()?;
        let file = std::fs::File::from(fd);
        let kind = file.metadata().ok()?.file_type();
        let fd = OwnedFd::from(file);
        // SAFETY: F_GETFL on a descriptor we own.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        if flags < 0 {
            return None;
        }
        if kind.is_fifo() {
            Some((Kind::Pipe(fd), flags))
        } else if kind.is_socket() {
            Some((Kind::Socket(fd), flags))
        } else {
            None
        }
    }

    /// A socket descriptor as a tokio stream (non-blocking).
    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let s = std::os::unix::net::UnixStream::from(fd);
        s.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(s).ok()
    }

    /// A stream that puts its descriptor's file status flags back when
    /// dropped (the open file is shared with whoever started scry).
    struct Restoring<T> {
        inner: T,
        fd: RawFd,
        flags: libc::c_int,
    }

    impl<T> Drop for Restoring<T> {
        fn drop(&mut self) {
            // SAFETY: F_SETFL on the duplicate, still open: `inner` (which
            // owns it) is dropped after this.
            unsafe { libc::fcntl(self.fd, libc::F_SETFL, self.flags) };
        }
    }

    impl<T: AsyncRead + Unpin> AsyncRead for Restoring<T> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut self.inner).poll_read(cx, buf)
        }
    }

    impl<T: AsyncWrite + Unpin> AsyncWrite for Restoring<T> {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.inner).poll_write(cx, buf)
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.inner).poll_flush(cx)
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.inner).poll_shutdown(cx)
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use super::{Input, Output};

    pub fn stdio() -> (Input, Output) {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

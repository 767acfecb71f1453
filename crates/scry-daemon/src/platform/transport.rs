//! Where the daemon listens, how a client connects, and who may connect.
//! The protocol runs over the streams given here as any
//! `AsyncRead + AsyncWrite` stream and never knows the transport.
//!
//! Unix: a socket `scry-<version>[-<tag>].sock` in the daemon directory
//! (private, [`super::dir`]). Binding (under the daemon's lock) removes a
//! dead daemon's socket first; the listener is still bound while the file
//! there is the socket it bound (same inode), and closing it removes that
//! file only. A peer is served only when its uid is the daemon's
//! (`SO_PEERCRED`, [`check_peer`]).
//!
//! Windows: a named pipe `\\.\pipe\scry-<user>-<version>[-<tag>]-<dir>`
//! (the user name sanitized to `[A-Za-z0-9._-]`; `<dir>` a stable hash of
//! the daemon directory, case-folded, so daemons of different
//! `SCRY_DAEMON_DIR`s stay apart as their sockets do on Unix). Every
//! instance is created with a DACL that grants the current user's SID
//! (from the process token) alone and nothing else (`D:P(A;;GA;;;<SID>)`),
//! rejecting remote clients; the first with `FILE_FLAG_FIRST_PIPE_INSTANCE`
//! (a pipe of that name held by anyone else fails the bind). The next
//! instance is always created before a connected one is handed out, so a
//! client never finds no instance while the daemon runs; a client that
//! finds every instance busy retries (`ERROR_PIPE_BUSY`) within a bound,
//! and uses a pipe only when its server process runs as the same user (a
//! pipe of that name made first by another user is refused, never talked
//! to).

use std::io;
use std::path::{Path, PathBuf};

pub use imp::{ClientStream, Stream};

/// The address of the daemon named `name` (`<version>[-<tag>]`) whose
/// directory is `dir`: a socket path on Unix, a pipe name on Windows.
pub fn address(dir: &Path, name: &str) -> PathBuf {
    imp::address(dir, name)
}

/// Connect to the daemon at `addr`; `NotFound` or `ConnectionRefused`
/// when none listens there.
pub async fn connect(addr: &Path) -> io::Result<ClientStream> {
    imp::connect(addr).await
}

/// Whether the peer of an accepted connection may be served; why not.
pub fn check_peer(stream: &Stream) -> Result<(), String> {
    imp::check_peer(stream)
}

/// The daemon's listening end.
pub struct Listener(imp::Listener);

impl Listener {
    /// Listen at `addr`; the caller holds the daemon's lock.
    pub fn bind(addr: &Path) -> io::Result<Listener> {
        imp::Listener::bind(addr).map(Listener)
    }

    /// The next connection (cancel safe).
    pub async fn accept(&mut self) -> io::Result<Stream> {
        self.0.accept().await
    }

    /// False once the address no longer leads here (the socket file was
    /// removed or replaced): the daemon then stops.
    pub fn still_bound(&self) -> bool {
        self.0.still_bound()
    }

    /// Stop listening, removing what the daemon made (its own socket).
    pub fn close(self) {
        self.0.close()
    }
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    use tokio::net::{UnixListener, UnixStream};

    pub type Stream = UnixStream;
    pub type ClientStream = UnixStream;

    pub fn address(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("scry-{name}.sock"))
    }

    pub async fn connect(addr: &Path) -> io::Result<UnixStream> {
        UnixStream::connect(addr).await
    }

    /// Whether a peer with `peer_uid` may talk to a daemon run by `own_uid`.
    fn peer_allowed(peer_uid: u32, own_uid: u32) -> bool {
        peer_uid == own_uid
    }

    pub fn check_peer(stream: &UnixStream) -> Result<(), String> {
        let cred = stream
            .peer_cred()
            .map_err(|e| format!("cannot read the peer's credentials: {e}"))?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if peer_allowed(cred.uid(), me) {
            Ok(())
        } else {
            Err(format!(
                "refused a connection from uid {} (the daemon serves uid {me} only)",
                cred.uid()
            ))
        }
    }

    pub struct Listener {
        listener: UnixListener,
        path: PathBuf,
        /// The bound socket's inode: another one there is not ours.
        ino: Option<u64>,
    }

    /// The inode of the file at `path`, if there is one.
    fn ino(path: &Path) -> Option<u64> {
        std::fs::metadata(path).map(|m| m.ino()).ok()
    }

    impl Listener {
        pub fn bind(path: &Path) -> io::Result<Listener> {
            // The caller holds the lock: a socket file there is a dead
            // daemon's.
            let _ = std::fs::remove_file(path);
            let listener = UnixListener::bind(path)?;
            Ok(Listener {
                listener,
                path: path.to_path_buf(),
                ino: ino(path),
            })
        }

        pub async fn accept(&mut self) -> io::Result<UnixStream> {
            self.listener.accept().await.map(|(s, _)| s)
        }

        pub fn still_bound(&self) -> bool {
            ino(&self.path) == self.ino
        }

        pub fn close(self) {
            // Only while it is still the one bound: a newer daemon's is
            // left alone.
            if self.still_bound() {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn only_the_same_uid_is_served() {
            assert!(peer_allowed(1000, 1000));
            assert!(!peer_allowed(0, 1000));
            assert!(!peer_allowed(1001, 1000));
        }

        #[tokio::test]
        async fn the_peer_check_reads_the_connecting_uid() {
            let (a, _b) = UnixStream::pair().unwrap();
            // SAFETY: geteuid has no preconditions.
            let me = unsafe { libc::geteuid() };
            assert_eq!(a.peer_cred().unwrap().uid(), me);
            check_peer(&a).unwrap();
        }

        #[test]
        fn the_socket_is_named_by_the_version_in_the_directory() {
            assert_eq!(
                address(Path::new("/d"), "1.2.3"),
                Path::new("/d/scry-1.2.3.sock")
            );
        }

        #[tokio::test]
        async fn a_replaced_socket_is_not_ours_and_is_left_alone() {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().join("s.sock");
            let l = Listener::bind(&p).unwrap();
            assert!(l.still_bound());
            std::fs::remove_file(&p).unwrap();
            std::fs::write(&p, "").unwrap();
            assert!(!l.still_bound());
            l.close();
            assert!(p.exists(), "another's file is left alone");
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::ffi::c_void;
    use std::io;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use tokio::net::windows::named_pipe::{
        ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
    };
    use windows_sys::Win32::Foundation::{CloseHandle, ERROR_PIPE_BUSY, HANDLE, LocalFree};
    use windows_sys::Win32::Security::Authorization::{
        ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW,
        SDDL_REVISION_1,
    };
    use windows_sys::Win32::Security::{
        GetTokenInformation, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    use windows_sys::Win32::System::Pipes::GetNamedPipeServerProcessId;
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    pub type Stream = NamedPipeServer;
    pub type ClientStream = NamedPipeClient;

    /// How long a client waits for a free instance.
    const BUSY_FOR: Duration = Duration::from_secs(2);

    /// `[A-Za-z0-9._-]` kept, anything else `_`, at most 64 characters.
    pub(super) fn sanitize(s: &str) -> String {
        s.chars()
            .take(64)
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    /// FNV-1a, 64 bits: the same for a directory in every process.
    pub(super) fn stable_hash(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    pub fn address(dir: &Path, name: &str) -> PathBuf {
        let user = std::env::var("USERNAME").unwrap_or_default();
        let user = if user.is_empty() {
            "user".to_string()
        } else {
            sanitize(&user)
        };
        let folded = dir.to_string_lossy().to_lowercase();
        let h = stable_hash(folded.as_bytes());
        PathBuf::from(format!(r"\\.\pipe\scry-{user}-{}-{h:016x}", sanitize(name)))
    }

    pub async fn connect(addr: &Path) -> io::Result<NamedPipeClient> {
        let deadline = tokio::time::Instant::now() + BUSY_FOR;
        let pipe = loop {
            match ClientOptions::new().open(addr) {
                Err(e)
                    if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32)
                        && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                r => break r?,
            }
        };
        let server = server_user(&pipe)?;
        let me = current_user_sid()?;
        if server != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is served by another user ({server}, not {me}); not used",
                    addr.display()
                ),
            ));
        }
        Ok(pipe)
    }

    /// The SID of the user the pipe's server process runs as.
    fn server_user(pipe: &NamedPipeClient) -> io::Result<String> {
        use std::os::windows::io::AsRawHandle;
        let mut pid = 0u32;
        // SAFETY: a pipe handle we own and an out pointer.
        if unsafe { GetNamedPipeServerProcessId(pipe.as_raw_handle(), &mut pid) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the handle is checked and closed after use.
        unsafe {
            let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
            if process.is_null() {
                return Err(io::Error::last_os_error());
            }
            let sid = user_sid_of(process);
            CloseHandle(process);
            sid
        }
    }

    /// Remote clients are rejected by the pipe and other users by its ACL.
    pub fn check_peer(_stream: &NamedPipeServer) -> Result<(), String> {
        Ok(())
    }

    /// A security descriptor made by `ConvertStringSecurityDescriptor…`
    /// (freed with `LocalFree`).
    struct Descriptor(*mut c_void);

    // SAFETY: the descriptor is immutable after creation and only read by
    // `CreateNamedPipeW`.
    unsafe impl Send for Descriptor {}
    unsafe impl Sync for Descriptor {}

    impl Drop for Descriptor {
        fn drop(&mut self) {
            // SAFETY: allocated by the system with LocalAlloc, freed once.
            unsafe { LocalFree(self.0) };
        }
    }

    /// The current user's SID as a string (`S-1-5-21-…`), from the
    /// process token.
    fn current_user_sid() -> io::Result<String> {
        // SAFETY: the pseudo-handle of this process is always valid.
        unsafe { user_sid_of(GetCurrentProcess()) }
    }

    /// The SID of the user `process` runs as, from its token.
    ///
    /// # Safety
    /// `process` is a valid process handle with query access.
    unsafe fn user_sid_of(process: HANDLE) -> io::Result<String> {
        // SAFETY: each call gets valid pointers and sizes; the token is
        // closed, the string freed; the buffer is aligned for TOKEN_USER.
        unsafe {
            let mut token: HANDLE = std::ptr::null_mut();
            if OpenProcessToken(process, TOKEN_QUERY, &mut token) == 0 {
                return Err(io::Error::last_os_error());
            }
            let mut len = 0u32;
            GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len);
            let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
            let ok = GetTokenInformation(token, TokenUser, buf.as_mut_ptr().cast(), len, &mut len);
            let err = io::Error::last_os_error();
            CloseHandle(token);
            if ok == 0 {
                return Err(err);
            }
            let user = &*(buf.as_ptr() as *const TOKEN_USER);
            let mut s: *mut u16 = std::ptr::null_mut();
            if ConvertSidToStringSidW(user.User.Sid, &mut s) == 0 {
                return Err(io::Error::last_os_error());
            }
            let n = (0..).take_while(|&i| *s.add(i) != 0).count();
            let sid = String::from_utf16_lossy(std::slice::from_raw_parts(s, n));
            LocalFree(s.cast());
            Ok(sid)
        }
    }

    /// The DACL that grants the current user alone all access, protected
    /// from inheritance.
    fn own_user_only() -> io::Result<Descriptor> {
        let sddl = format!("D:P(A;;GA;;;{})", current_user_sid()?);
        let wide: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
        let mut sd: *mut c_void = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string and an out pointer.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                wide.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Descriptor(sd))
    }

    pub struct Listener {
        name: PathBuf,
        acl: Descriptor,
        /// The instance the next client connects to.
        next: NamedPipeServer,
    }

    impl Listener {
        fn instance(name: &Path, acl: &Descriptor, first: bool) -> io::Result<NamedPipeServer> {
            let mut attrs = SECURITY_ATTRIBUTES {
                nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: acl.0,
                bInheritHandle: 0,
            };
            let mut o = ServerOptions::new();
            o.first_pipe_instance(first).reject_remote_clients(true);
            // SAFETY: `attrs` and the descriptor it points to outlive the
            // call, which copies them.
            unsafe { o.create_with_security_attributes_raw(name, (&raw mut attrs).cast()) }
        }

        pub fn bind(name: &Path) -> io::Result<Listener> {
            let acl = own_user_only()?;
            let next = Listener::instance(name, &acl, true)?;
            Ok(Listener {
                name: name.to_path_buf(),
                acl,
                next,
            })
        }

        pub async fn accept(&mut self) -> io::Result<NamedPipeServer> {
            let connected = self.next.connect().await;
            // A new instance before this one is handed out (or replaces
            // it when the client was already gone). When none can be made,
            // the connected one stays next (served on a later try) and the
            // caller's accept loop is slowed, never spun.
            let fresh = match Listener::instance(&self.name, &self.acl, false) {
                Ok(p) => p,
                Err(e) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    return Err(e);
                }
            };
            let this = std::mem::replace(&mut self.next, fresh);
            connected.map(|()| this)
        }

        pub fn still_bound(&self) -> bool {
            true
        }

        pub fn close(self) {}
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_pipe_is_named_by_user_version_and_directory() {
            let a = address(Path::new(r"C:\Users\me\scry"), "1.2.3");
            let s = a.to_string_lossy();
            assert!(s.starts_with(r"\\.\pipe\scry-"), "{s}");
            assert!(s.contains("-1.2.3-"), "{s}");
            assert_eq!(a, address(Path::new(r"c:\users\ME\scry"), "1.2.3"));
            assert_ne!(a, address(Path::new(r"C:\other"), "1.2.3"));
            assert_eq!(sanitize(r"dom\é b"), "dom___b");
        }

        #[test]
        fn the_acl_names_the_current_user_from_the_token() {
            let sid = current_user_sid().unwrap();
            assert!(sid.starts_with("S-1-"), "{sid}");
            own_user_only().unwrap();
        }

        /// Windows itself: wine 8 ignores `FILE_FLAG_FIRST_PIPE_INSTANCE`
        /// (a second first instance is created there), so this one runs
        /// with `--include-ignored` on Windows; the lock file keeps the
        /// one-daemon rule under wine too.
        #[tokio::test]
        #[ignore = "wine 8 ignores FILE_FLAG_FIRST_PIPE_INSTANCE; run on Windows with --include-ignored"]
        async fn a_second_first_instance_is_refused() {
            let t = tempfile::tempdir().unwrap();
            let name = address(t.path(), "0.0.0-first-instance-test");
            let _first = Listener::bind(&name).unwrap();
            assert!(Listener::bind(&name).is_err(), "one first instance");
        }

        #[tokio::test]
        async fn clients_at_once_each_reach_an_instance_of_the_one_server() {
            let t = tempfile::tempdir().unwrap();
            let name = address(t.path(), "0.0.0-transport-test");
            let mut first = Listener::bind(&name).unwrap();
            let accepting = tokio::spawn(async move {
                let a = first.accept().await.unwrap();
                let b = first.accept().await.unwrap();
                (a, b, first)
            });
            // Two clients at once: each gets an instance of the one server,
            // which is ours (the same user).
            let c1 = connect(&name).await.unwrap();
            let c2 = connect(&name).await.unwrap();
            let (_a, _b, _first) = accepting.await.unwrap();
            drop((c1, c2));
        }
    }
}

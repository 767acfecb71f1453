//! The file watcher under `crate::watch::FileWatcher`: directories
//! watched one by one (non-recursive), the changes in them handed to a
//! sink as `(path, kind)` (kinds: [`CREATED`], [`CHANGED`],
//! [`DELETED`]), and [`Backend::settle`]: every change written before it was
//! called has been handed over when it returns.
//!
//! - Linux: inotify, read by scry itself. Only what changes a file's
//!   content or name is asked for (created, written, closed after writing,
//!   deleted, moved), never opens and reads: a file read by scry or by a
//!   server wakes nothing. One thread sleeps until the kernel has changes
//!   (or the watcher is dropped) and hands them over; [`Backend::settle`]
//!   reads the kernel's queue itself, under the same lock, so it waits for
//!   no thread and no marker file: the kernel queues a change before the
//!   write that made it returns, in order, so what it has not queued was
//!   not written yet. A queue overflow (changes lost) is logged once.
//! - Elsewhere: `notify`'s recommended watcher (its own thread), and
//!   [`Backend::settle`] writes a marker file into a private directory
//!   watched by the same watcher and waits (at most
//!   `BARRIER_WAIT`, 100 ms) for its event; where the platform's
//!   events are not ordered (or the marker cannot be written) the wait is
//!   bounded and what has arrived is what is handed over.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The kinds of change a sink is handed: LSP `FileChangeType`.
pub const CREATED: u8 = 1;
pub const CHANGED: u8 = 2;
pub const DELETED: u8 = 3;

/// Where changes go: called with each batch, in order.
pub type Sink = Arc<dyn Fn(Vec<(PathBuf, u8)>) + Send + Sync>;

/// The watcher (see the module header).
pub struct Backend {
    imp: imp::Backend,
}

impl Backend {
    /// A watcher handing changes to `sink`; `Err`: none can be made.
    pub fn start(sink: Sink) -> std::io::Result<Backend> {
        Ok(Backend {
            imp: imp::Backend::start(sink)?,
        })
    }

    /// Watch `dir` (its entries, not below).
    pub fn watch(&self, dir: &Path) -> std::io::Result<()> {
        self.imp.watch(dir)
    }

    /// Stop watching `dir` (gone, or moved: a watch follows what it was
    /// put on, which is no longer at that path).
    pub fn unwatch(&self, dir: &Path) {
        self.imp.unwatch(dir)
    }

    /// Return once every change written before the call was handed to the
    /// sink (bounded where the platform cannot tell).
    pub async fn settle(&self) {
        self.imp.settle().await
    }

    /// Whether changes were lost (the kernel's queue overflowed, the
    /// watcher failed) since the last call.
    pub fn take_overflow(&self) -> bool {
        self.imp.take_overflow()
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashMap;
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

    use super::Sink;
    use super::{CHANGED, CREATED, DELETED};

    /// What is asked of the kernel: changes of content and names only.
    const MASK: WatchMask = WatchMask::CREATE
        .union(WatchMask::DELETE)
        .union(WatchMask::MODIFY)
        .union(WatchMask::CLOSE_WRITE)
        .union(WatchMask::MOVED_FROM)
        .union(WatchMask::MOVED_TO)
        .union(WatchMask::DELETE_SELF)
        .union(WatchMask::MOVE_SELF)
        .union(WatchMask::ONLYDIR);

    /// One read's buffer (many events; at least one of the longest).
    const BUFFER: usize = 64 * 1024;

    struct Inner {
        /// Read under this lock, by the thread or by `settle`, so that a
        /// settle returns only when nothing read is still being handed over.
        inotify: Mutex<(Inotify, Vec<u8>)>,
        watches: Mutex<Watches>,
        dirs: Mutex<HashMap<WatchDescriptor, PathBuf>>,
        sink: Sink,
        overflowed: AtomicBool,
        /// An overflow since the last `take_overflow`.
        lost: AtomicBool,
    }

    pub struct Backend {
        inner: Arc<Inner>,
        /// Written on drop: the thread ends.
        stop: OwnedFd,
    }

    impl Backend {
        pub fn start(sink: Sink) -> io::Result<Backend> {
            let inotify = Inotify::init()?;
            let watches = inotify.watches();
            // SAFETY: eventfd with valid flags; the result is checked.
            let stop = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if stop < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a descriptor just made, owned here alone.
            let stop = unsafe { OwnedFd::from_raw_fd(stop) };
            let inner = Arc::new(Inner {
                inotify: Mutex::new((inotify, vec![0; BUFFER])),
                watches: Mutex::new(watches),
                dirs: Mutex::new(HashMap::new()),
                sink,
                overflowed: AtomicBool::new(false),
                lost: AtomicBool::new(false),
            });
            // The thread's own copies of both descriptors: open while it
            // polls them, whenever the watcher is dropped.
            let queue = {
                let g = inner.inotify.lock().unwrap_or_else(|e| e.into_inner());
                g.0.as_fd().try_clone_to_owned()?
            };
            let stopped = stop.try_clone()?;
            let weak = Arc::downgrade(&inner);
            std::thread::Builder::new()
                .name("scry-watch".into())
                .spawn(move || {
                    loop {
                        let mut fds = [
                            libc::pollfd {
                                fd: queue.as_raw_fd(),
                                events: libc::POLLIN,
                                revents: 0,
                            },
                            libc::pollfd {
                                fd: stopped.as_raw_fd(),
                                events: libc::POLLIN,
                                revents: 0,
                            },
                        ];
                        // SAFETY: two pollfds of descriptors this thread owns.
                        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
                        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                        {
                            continue;
                        }
                        if n < 0 || fds[1].revents != 0 {
                            return;
                        }
                        let Some(inner) = weak.upgrade() else { return };
                        inner.read();
                    }
                })?;
            Ok(Backend { inner, stop })
        }

        pub fn watch(&self, dir: &Path) -> io::Result<()> {
            let wd = self
                .inner
                .watches
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .add(dir, MASK)?;
            self.inner
                .dirs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(wd, dir.to_path_buf());
            Ok(())
        }

        pub fn unwatch(&self, dir: &Path) {
            let gone: Vec<WatchDescriptor> = {
                let mut dirs = self.inner.dirs.lock().unwrap_or_else(|e| e.into_inner());
                let wds: Vec<WatchDescriptor> = dirs
                    .iter()
                    .filter(|(_, d)| d.as_path() == dir)
                    .map(|(wd, _)| wd.clone())
                    .collect();
                for wd in &wds {
                    dirs.remove(wd);
                }
                wds
            };
            let mut watches = self.inner.watches.lock().unwrap_or_else(|e| e.into_inner());
            for wd in gone {
                // Gone already when the directory was deleted: no matter.
                let _ = watches.remove(wd);
            }
        }

        pub async fn settle(&self) {
            self.inner.read();
        }

        pub fn take_overflow(&self) -> bool {
            self.inner.lost.swap(false, Ordering::SeqCst)
        }
    }

    impl Drop for Backend {
        fn drop(&mut self) {
            let one: u64 = 1;
            // SAFETY: an 8-byte write to our own eventfd.
            unsafe {
                libc::write(
                    self.stop.as_raw_fd(),
                    (&one as *const u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
        }
    }

    impl Inner {
        /// Read everything the kernel has queued and hand it over.
        fn read(&self) {
            let mut g = self.inotify.lock().unwrap_or_else(|e| e.into_inner());
            let (inotify, buffer) = &mut *g;
            loop {
                let events = match inotify.read_events(buffer) {
                    Ok(events) => events,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        if e.kind() != io::ErrorKind::WouldBlock {
                            tracing::debug!("file watching: {e}");
                        }
                        return;
                    }
                };
                let mut batch = Vec::new();
                let mut dirs = self.dirs.lock().unwrap_or_else(|e| e.into_inner());
                for e in events {
                    if e.mask.contains(EventMask::Q_OVERFLOW) {
                        self.lost.store(true, Ordering::SeqCst);
                        if !self.overflowed.swap(true, Ordering::Relaxed) {
                            tracing::warn!(
                                "file watching: the kernel's queue overflowed; changes made outside scry meanwhile may be missed"
                            );
                        }
                        continue;
                    }
                    if e.mask.contains(EventMask::IGNORED) {
                        dirs.remove(&e.wd);
                        continue;
                    }
                    let Some(dir) = dirs.get(&e.wd) else { continue };
                    let path = match e.name {
                        Some(n) => dir.join(n),
                        None => dir.clone(),
                    };
                    let kind = if e.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO) {
                        CREATED
                    } else if e.mask.intersects(
                        EventMask::DELETE
                            | EventMask::MOVED_FROM
                            | EventMask::DELETE_SELF
                            | EventMask::MOVE_SELF,
                    ) {
                        DELETED
                    } else if e
                        .mask
                        .intersects(EventMask::MODIFY | EventMask::CLOSE_WRITE)
                    {
                        CHANGED
                    } else {
                        continue;
                    };
                    batch.push((path, kind));
                }
                drop(dirs);
                if !batch.is_empty() {
                    (self.sink)(batch);
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    use notify::event::{ModifyKind, RenameMode};
    use notify::{Event, EventKind, RecursiveMode, Watcher};

    use super::Sink;
    use super::{CHANGED, CREATED, DELETED};

    /// How long a settle waits for its marker to come back.
    const BARRIER_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

    struct Markers {
        dir: PathBuf,
        /// Highest marker number seen by the event thread.
        seen: AtomicU64,
        seen_tx: tokio::sync::watch::Sender<u64>,
    }

    pub struct Backend {
        watcher: Mutex<notify::RecommendedWatcher>,
        markers: Arc<Markers>,
        next_marker: AtomicU64,
        marker_ok: bool,
        /// The watcher failed since the last `take_overflow`.
        lost: Arc<AtomicBool>,
    }

    fn event_kinds(kind: &EventKind, n_paths: usize) -> Vec<u8> {
        match kind {
            EventKind::Create(_) => vec![CREATED; n_paths],
            EventKind::Remove(_) => vec![DELETED; n_paths],
            EventKind::Modify(ModifyKind::Name(RenameMode::From)) => vec![DELETED; n_paths],
            EventKind::Modify(ModifyKind::Name(RenameMode::To)) => vec![CREATED; n_paths],
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => {
                let mut v = vec![DELETED];
                v.resize(n_paths, CREATED);
                v
            }
            EventKind::Modify(ModifyKind::Name(_)) => vec![CHANGED; n_paths],
            EventKind::Modify(ModifyKind::Metadata(_)) | EventKind::Access(_) => vec![],
            EventKind::Modify(_) | EventKind::Any | EventKind::Other => vec![CHANGED; n_paths],
        }
    }

    fn on_event(markers: &Markers, sink: &Sink, ev: Event) {
        if ev.paths.iter().any(|p| p.starts_with(&markers.dir)) {
            if let EventKind::Create(_) = ev.kind {
                for p in &ev.paths {
                    if let Some(n) = p
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.parse::<u64>().ok())
                    {
                        markers.seen.fetch_max(n, Ordering::Relaxed);
                    }
                }
                let seen = markers.seen.load(Ordering::Relaxed);
                markers.seen_tx.send_replace(seen);
            }
            return;
        }
        let kinds = event_kinds(&ev.kind, ev.paths.len());
        if !kinds.is_empty() {
            sink(ev.paths.into_iter().zip(kinds).collect());
        }
    }

    impl Backend {
        pub fn start(sink: Sink) -> io::Result<Backend> {
            static COUNTER: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "scry-watch-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            let markers = Arc::new(Markers {
                dir: dir.clone(),
                seen: AtomicU64::new(0),
                seen_tx: tokio::sync::watch::Sender::new(0),
            });
            let m = markers.clone();
            let failed = AtomicBool::new(false);
            let lost = Arc::new(AtomicBool::new(false));
            let lost_w = lost.clone();
            let watcher =
                notify::recommended_watcher(move |res: notify::Result<Event>| match res {
                    Ok(ev) => on_event(&m, &sink, ev),
                    Err(e) => {
                        lost_w.store(true, Ordering::SeqCst);
                        if !failed.swap(true, Ordering::Relaxed) {
                            tracing::warn!(
                                "file watching: {e}; changes made outside scry may be missed"
                            );
                        }
                    }
                })
                .map_err(io::Error::other)?;
            let mut b = Backend {
                watcher: Mutex::new(watcher),
                markers,
                next_marker: AtomicU64::new(0),
                marker_ok: false,
                lost,
            };
            b.marker_ok = std::fs::create_dir_all(&dir).is_ok()
                && b.watch_with(&dir, RecursiveMode::NonRecursive).is_ok();
            Ok(b)
        }

        fn watch_with(&self, dir: &Path, mode: RecursiveMode) -> io::Result<()> {
            self.watcher
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .watch(dir, mode)
                .map_err(io::Error::other)
        }

        pub fn watch(&self, dir: &Path) -> io::Result<()> {
            self.watch_with(dir, RecursiveMode::NonRecursive)
        }

        pub fn take_overflow(&self) -> bool {
            self.lost.swap(false, Ordering::SeqCst)
        }

        pub fn unwatch(&self, dir: &Path) {
            // Gone already when the directory was deleted: no matter.
            let _ = self
                .watcher
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .unwatch(dir);
        }

        pub async fn settle(&self) {
            if !self.marker_ok {
                return;
            }
            let n = self.next_marker.fetch_add(1, Ordering::Relaxed) + 1;
            let marker = self.markers.dir.join(n.to_string());
            if std::fs::write(&marker, b"").is_ok() {
                let mut rx = self.markers.seen_tx.subscribe();
                let _ = tokio::time::timeout(BARRIER_WAIT, rx.wait_for(|s| *s >= n)).await;
                let _ = std::fs::remove_file(&marker);
            }
        }
    }

    impl Drop for Backend {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.markers.dir);
        }
    }
}

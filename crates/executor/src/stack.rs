//! What a vfork child runs on: its own stack, and the clone flags of every spawn (the PID
//! namespace's helper and init included).

use std::ffi::{c_int, c_void};
use std::io;

/// The clone flags of every spawn (and of the PID namespace's helper): the child shares our
/// memory and we are suspended until it execs or exits, as `posix_spawn` does.
pub(crate) const VFORK: c_int = libc::CLONE_VM | libc::CLONE_VFORK;

/// A child's stack: anonymous memory with an inaccessible guard page at its low end, so a
/// child that overran it would fault rather than write over our heap. Unmapped on drop.
#[derive(Debug)]
pub(crate) struct Stack {
    /// The mapping's address (an integer: the mapping belongs to no thread).
    base: usize,
    len: usize,
}

impl Stack {
    /// 64 KiB usable above one guard page: far more than the system calls a child makes need.
    pub(crate) fn new() -> io::Result<Stack> {
        use rustix::mm::{MapFlags, MprotectFlags, ProtFlags};
        const USABLE: usize = 64 * 1024;
        let page = rustix::param::page_size();
        let len = USABLE + page;
        // SAFETY: a fresh private anonymous mapping at an address of the kernel's choosing
        // (it cannot overlap anything of ours); its lowest page is then made inaccessible.
        // `Stack` owns the mapping from here and unmaps it on drop.
        unsafe {
            let base = rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE | MapFlags::STACK,
            )?;
            let stack = Stack {
                base: base as usize,
                len,
            };
            rustix::mm::mprotect(base, page, MprotectFlags::empty())?;
            Ok(stack)
        }
    }

    /// The lowest usable address (above the guard page).
    pub(crate) fn bottom(&self) -> *mut u8 {
        (self.base + rustix::param::page_size()) as *mut u8
    }

    /// The stack's top, where a child starts (16-byte aligned: pages are).
    pub(crate) fn top(&self) -> *mut u8 {
        (self.base + self.len) as *mut u8
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: our own mapping, no longer used: a child on it has exec'd or exited (vfork),
        // or (a PID namespace's init) has been reaped before its `Init` drops this.
        let _ = unsafe { rustix::mm::munmap(self.base as *mut c_void, self.len) };
    }
}

//! `klogctl`: the kernel log ring buffer (`dmesg`).

use std::io;

const SYSLOG_ACTION_READ_ALL: libc::c_int = 3;
const SYSLOG_ACTION_SIZE_BUFFER: libc::c_int = 10;

/// The size of the kernel log buffer in bytes (`SYSLOG_ACTION_SIZE_BUFFER`).
pub fn kernel_log_size() -> io::Result<usize> {
    // SAFETY: SIZE_BUFFER reads no buffer (null, length 0).
    let size = unsafe { libc::klogctl(SYSLOG_ACTION_SIZE_BUFFER, std::ptr::null_mut(), 0) };
    usize::try_from(size).map_err(|_| io::Error::last_os_error())
}

/// Copies the kernel log into `buf` (`SYSLOG_ACTION_READ_ALL`) and returns
/// the number of bytes written.
pub fn read_kernel_log(buf: &mut [u8]) -> io::Result<usize> {
    let len = libc::c_int::try_from(buf.len()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `buf` is writable for `len` bytes (at most its length) and
    // outlives the call.
    let n = unsafe { libc::klogctl(SYSLOG_ACTION_READ_ALL, buf.as_mut_ptr().cast(), len) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

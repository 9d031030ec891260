//! Linux real-time runtime (work in progress).

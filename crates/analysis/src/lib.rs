//! Schedulability analysis (work in progress).

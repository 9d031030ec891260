//! Discrete-event scheduling simulator (work in progress).

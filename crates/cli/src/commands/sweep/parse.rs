//! The values of `rtlab sweep`'s flags that clap cannot parse alone:
//! the generators' method and deadlines, a tick longer than 0, a shard
//! `I/N`.

use rtlab_model::generate::{DeadlineModel, UtilizationMethod};
use rtlab_model::Nanos;

pub(super) fn parse_method(text: &str) -> Result<UtilizationMethod, String> {
    text.parse().map_err(|e| format!("{e}"))
}

pub(super) fn parse_deadlines(text: &str) -> Result<DeadlineModel, String> {
    text.parse().map_err(|e| format!("{e}"))
}

pub(super) fn parse_tick(text: &str) -> Result<Nanos, String> {
    let tick: Nanos = text.parse().map_err(|e| format!("{e}"))?;
    if tick.is_zero() {
        return Err("a tick must be longer than 0".into());
    }
    Ok(tick)
}

/// `I/N` with `0 <= I < N`.
pub(super) fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let usage = || format!("`{text}` is not I/N (shard I of N, 0 <= I < N), e.g. 3/8");
    let (i, n) = text.split_once('/').ok_or_else(usage)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| usage())?,
        n.trim().parse().map_err(|_| usage())?,
    );
    if n == 0 {
        return Err(format!("`{text}`: N must be at least 1"));
    }
    if i >= n {
        return Err(format!("`{text}`: shard index {i} is outside 0..{n}"));
    }
    Ok((i, n))
}

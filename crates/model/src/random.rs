//! The portable random source of every deterministic part of rtlab (the
//! generators, the simulator's execution times and release jitter), and the
//! few ways it is read.
//!
//! Reproducibility across machines, Rust versions and `rand` versions is a
//! feature here: a paper's experiment must regenerate the same task sets. So
//! the generators read only raw 64-bit words ([`Rng::next_u64`]) from a
//! [`ChaCha8Rng`], whose output is fixed by the ChaCha specification, and turn
//! them into numbers with the small, fixed recipes below instead of `rand`'s
//! distributions (whose algorithms may change between `rand` releases).
//! Transcendental functions come from `libm`, which gives the same bits on
//! every platform.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The generator for set number `index` of the stream with this `seed`.
///
/// The 256-bit ChaCha key is four outputs of SplitMix64 started at `seed`
/// (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number
/// generators"); `index` selects one of the 2^64 independent ChaCha streams of
/// that key (the 64-bit nonce). Set `index` therefore depends on `(seed,
/// index)` alone, not on how many sets were generated before it.
pub fn stream_rng(seed: u64, index: u64) -> ChaCha8Rng {
    let mut state = seed;
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(8) {
        chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(index);
    rng
}

/// One step of SplitMix64 (the constants of Steele, Lea & Flood 2014).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform draw from the open interval (0, 1).
///
/// The top 52 bits `m` of one 64-bit word give `(m + 1/2) / 2^52`, which is
/// exact in a double: every value is the midpoint of one of 2^52 equal cells
/// of [0, 1], so 0 and 1 never occur (`ln` and `x^(1/k)` stay finite and
/// non-degenerate, as with MATLAB's `rand`, which Stafford's algorithm was
/// written for).
pub fn unit_open<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 52) as f64;
    ((rng.next_u64() >> 12) as f64 + 0.5) * SCALE
}

/// A uniform integer in `0..n` (`n > 0`), exactly, by Lemire's multiply-and-
/// reject method (Lemire 2019, "Fast random integer generation in an
/// interval", ACM TOMACS 29(1)).
pub fn below<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
    debug_assert!(n > 0, "below(0) has no values");
    let threshold = n.wrapping_neg() % n; // 2^64 mod n
    loop {
        let product = u128::from(rng.next_u64()) * u128::from(n);
        if (product as u64) >= threshold {
            return (product >> 64) as u64;
        }
    }
}

/// Shuffles `values` uniformly (Fisher–Yates, Durstenfeld's in-place form;
/// Knuth, TAOCP vol. 2, Algorithm 3.4.2 P), from the last position down.
pub fn shuffle<T, R: Rng + ?Sized>(values: &mut [T], rng: &mut R) {
    for i in (1..values.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        values.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_seed_and_index_only() {
        let word = |seed, index| stream_rng(seed, index).next_u64();
        assert_eq!(word(7, 3), word(7, 3));
        assert_ne!(word(7, 3), word(7, 4));
        assert_ne!(word(7, 3), word(8, 3));
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // Reference outputs of SplitMix64 seeded with 0 (as in Vigna's
        // splitmix64.c and Java's SplittableRandom).
        let mut state = 0;
        assert_eq!(splitmix64(&mut state), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut state), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn unit_open_stays_strictly_inside() {
        struct Fixed(u64);
        impl rand::TryRng for Fixed {
            type Error = core::convert::Infallible;
            fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
                Ok(self.0 as u32)
            }
            fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
                Ok(self.0)
            }
            fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
                Ok(())
            }
        }
        let lo = unit_open(&mut Fixed(0));
        let hi = unit_open(&mut Fixed(u64::MAX));
        assert_eq!(lo, libm::ldexp(1.0, -53));
        assert_eq!(hi, 1.0 - libm::ldexp(1.0, -53));
        assert!(hi < 1.0);
    }

    #[test]
    fn below_covers_its_range_evenly() {
        let mut rng = stream_rng(1, 0);
        let mut counts = [0u32; 6];
        for _ in 0..6000 {
            counts[below(&mut rng, 6) as usize] += 1;
        }
        // Each count is Binomial(6000, 1/6): mean 1000, sd ≈ 28.9; 6 sd.
        assert!(
            counts.iter().all(|&c| (827..=1173).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut rng = stream_rng(2, 0);
        let mut v: Vec<u32> = (0..50).collect();
        shuffle(&mut v, &mut rng);
        assert_ne!(v, (0..50).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..50).collect::<Vec<_>>());
    }
}

// SPDX-License-Identifier: MIT
//! Workload for demangling (tests/integration/names.sh), built twice by the
//! Makefile: with rustc's default symbol mangling (legacy, "_ZN...17h<hash>E")
//! and with `-C symbol-mangling-version=v0` ("_R..."). CPU time in a method
//! of a struct in a module, a generic function and a trait method, all kept
//! out of line. Demangled (libiberty, hash dropped), the leaves are
//!   rustnames::shapes::Square::spin    (v0: <rustnames::shapes::Square>::spin)
//!   rustnames::shapes::churn           (v0: rustnames::shapes::churn::<u64>)
//! usage: rustnames [SECONDS]   (wall time, default 30)

/// x through memory the optimizer cannot see into: no loop folded away
/// (std::hint::black_box came with Rust 1.66; Debian 12's rustc is 1.63)
#[inline(always)]
fn opaque(x: u64) -> u64 {
    unsafe { std::ptr::read_volatile(&x) }
}

mod shapes {
    use super::opaque;

    pub struct Square {
        pub side: u64,
    }

    impl Square {
        #[inline(never)]
        pub fn spin(&self, n: u64) -> u64 {
            let mut x = self.side;
            for i in 0..n {
                x = opaque(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
            x
        }
    }

    #[inline(never)]
    pub fn churn<T: Into<u64> + Copy>(seed: T, n: u64) -> u64 {
        let mut x: u64 = seed.into();
        for i in 0..n {
            x = opaque(x.wrapping_mul(6364136223846793005).wrapping_add(i | 1));
        }
        x
    }
}

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let sq = shapes::Square { side: 3 };
    let mut sink = 0u64;
    while std::time::Instant::now() < end {
        sink ^= sq.spin(200000);
        sink ^= shapes::churn(sink, 200000);
        opaque(sink);
    }
}

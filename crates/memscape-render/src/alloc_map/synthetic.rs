//! A deterministic heap-like synthetic trace for benchmarks (`benches/alloc_map_frame.rs`,
//! `memscape bench`): addresses spread over 64 bytes per block, power-of-two sizes (1 B to
//! 8 KiB), log-uniform lifetimes (1 to 2^19 events), two events per block in event-index time.

use super::{AllocBlockGpu, BlockTimeGpu};

/// `n` blocks with their times, the time extent and the address extent.
pub fn heap_like(n: usize) -> (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>, u64, u64) {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut blocks = Vec::with_capacity(n);
    let mut times = Vec::with_capacity(n);
    let span = (n as u64).max(1) * 64;
    for i in 0..n as u64 {
        let size = 1u64 << (next() % 14);
        let addr = next() % span;
        let t0 = i * 2;
        let life = 1u64 << (next() % 20);
        blocks.push(AllocBlockGpu::new(
            addr,
            size,
            crate::color::categorical((next() % 12) as u32),
            0.5,
        ));
        times.push(BlockTimeGpu::new(t0, t0 + life));
    }
    (blocks, times, 2 * (n as u64).max(1), span)
}

//! Read-only memory mappings of files ([`Mapping`]) and typed slices borrowed from them
//! ([`MappedSlice`]), so that memscape-trace can hand a column of an `.msc` file to the views
//! without copying or decoding it, and append-only vectors whose prefixes are shared without
//! copying ([`AppendVec`], [`Frozen`]: a live recording's block columns, see `append.rs`).
//! This crate is allowed `unsafe` for exactly three things: the `mmap` call, turning a checked
//! pointer into a slice, and the append-only vectors' one allocation (written only past every
//! shared prefix); everything it exposes is safe.
//!
//! What a mapping cannot promise (the reason `memmap2::Mmap::map` is `unsafe`): if another
//! process truncates the file while it is mapped, reading the lost pages raises `SIGBUS`; if
//! one writes to it, the mapped values change under the reader (`MAP_PRIVATE` keeps only our
//! own writes private, and we make none). memscape never writes a file it has mapped; a user
//! who rewrites a trace while memscape shows it gets what `less` would get. The values
//! themselves are plain old data ([`bytemuck::Pod`]): any bit pattern is a valid value, and
//! memscape-trace checks what its views rely on before handing a column out.
#![allow(unsafe_code)]

use std::fs::File;
use std::sync::Arc;

mod append;
pub use append::{AppendVec, Frozen};

/// A whole file mapped read-only.
#[derive(Debug)]
pub struct Mapping {
    map: memmap2::Mmap,
}

impl Mapping {
    /// Maps `file` (its current length) read-only.
    pub fn new(file: &File) -> std::io::Result<Arc<Self>> {
        // SAFETY: a read-only private mapping; the hazards (the file truncated or rewritten by
        // someone else while mapped) are documented at the crate level and are no worse than
        // any reader of a file that changes under it, except that truncation raises SIGBUS.
        let map = unsafe { memmap2::MmapOptions::new().map(file) }?;
        Ok(Arc::new(Self { map }))
    }

    /// The mapped bytes (starting at a page boundary, so 8-byte aligned).
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Asks the kernel to read `len` bytes from `offset` ahead (`MADV_WILLNEED`); a hint only.
    pub fn will_need(&self, offset: usize, len: usize) {
        let _ = self.map.advise_range(
            memmap2::Advice::WillNeed,
            offset,
            len.min(self.len().saturating_sub(offset)),
        );
    }
}

/// `len` values of type `T` stored little-endian at `offset` in a [`Mapping`], kept alive with
/// it. Dereferences to `&[T]` at the cost of a slice construction (no check, no copy).
pub struct MappedSlice<T> {
    map: Arc<Mapping>,
    ptr: *const T,
    len: usize,
}

// SAFETY: the slice is immutable shared data owned (through the Arc) by the value itself;
// `T: Sync` is what sharing `&[T]` across threads needs.
unsafe impl<T: Sync> Send for MappedSlice<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for MappedSlice<T> {}

impl<T: bytemuck::Pod> MappedSlice<T> {
    /// The values at `offset..offset + len * size_of::<T>()`, or `None` when that range is not
    /// inside the mapping or not aligned for `T`. Only little-endian targets: the stored bytes
    /// are the values as they are in memory.
    pub fn new(map: Arc<Mapping>, offset: usize, len: usize) -> Option<Self> {
        if cfg!(target_endian = "big") {
            return None;
        }
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .and_then(|n| offset.checked_add(n))
            .and_then(|end| map.bytes().get(offset..end))?;
        let values: &[T] = bytemuck::try_cast_slice(bytes).ok()?;
        let ptr = values.as_ptr();
        Some(Self { map, ptr, len })
    }
}

impl<T> MappedSlice<T> {
    /// The mapping the values live in.
    pub fn mapping(&self) -> &Arc<Mapping> {
        &self.map
    }
}

impl<T> std::ops::Deref for MappedSlice<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `new` checked that `len` values of `T` starting at `ptr` lie inside the
        // mapping and are aligned, and that any bytes are valid `T`s (Pod); the mapping lives
        // as long as `self.map` does, and nothing writes to it.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> Clone for MappedSlice<T> {
    fn clone(&self) -> Self {
        Self {
            map: Arc::clone(&self.map),
            ptr: self.ptr,
            len: self.len,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for MappedSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;

    #[test]
    fn slices_of_a_mapped_file_read_its_values_and_refuse_bad_ranges() {
        let mut file = tempfile::tempfile().unwrap();
        let values: Vec<u64> = (0..1000u64).map(|i| i * 0x0101_0101).collect();
        file.write_all(b"12345678").unwrap();
        file.write_all(bytemuck::cast_slice(&values)).unwrap();
        file.flush().unwrap();
        let map = Mapping::new(&file).unwrap();
        assert_eq!(map.len(), 8 + 8000);
        let s = MappedSlice::<u64>::new(Arc::clone(&map), 8, 1000).unwrap();
        assert_eq!(&s[..], &values[..]);
        let t = MappedSlice::<u32>::new(Arc::clone(&map), 8, 2).unwrap();
        assert_eq!(&t[..], &[0, 0]);
        // Past the end, overflowing, misaligned.
        assert!(MappedSlice::<u64>::new(Arc::clone(&map), 8, 1001).is_none());
        assert!(MappedSlice::<u64>::new(Arc::clone(&map), usize::MAX - 3, 1).is_none());
        assert!(MappedSlice::<u64>::new(Arc::clone(&map), 8, usize::MAX).is_none());
        assert!(MappedSlice::<u64>::new(Arc::clone(&map), 4, 1).is_none());
        // The slice keeps the mapping alive.
        drop(map);
        let copy = s.clone();
        drop(s);
        assert_eq!(copy[999], 999 * 0x0101_0101);
        map_will_need_is_harmless(copy.mapping());
    }

    fn map_will_need_is_harmless(map: &Mapping) {
        map.will_need(0, usize::MAX);
        map.will_need(usize::MAX, 10);
    }
}

//! Append-only vectors whose prefixes can be shared without copying ([`AppendVec`],
//! [`Frozen`]): a live recording's trace builder appends block columns while the views read
//! snapshots of what was there when each snapshot was made.
//!
//! An [`AppendVec`] owns one allocation behind an `Arc`. [`AppendVec::freeze`] hands out a
//! [`Frozen`] prefix (the values so far, in the same allocation: no copy) and remembers how
//! long the frozen prefix is. Appending writes past every frozen prefix, into memory no
//! reader can see; changing a value inside a frozen prefix, growing past the capacity while a
//! prefix is out, or truncating copies the values into a new allocation first (copy on
//! write), so a [`Frozen`] never changes. Without frozen prefixes out it behaves as a `Vec`.

use std::ptr::NonNull;
use std::sync::Arc;

/// One allocation of `cap` values (plain old data: no drop, any bit pattern valid).
struct Storage<T> {
    ptr: NonNull<T>,
    cap: usize,
}

// SAFETY: the storage is a heap allocation of `T`s; which parts of it are read or written,
// and by whom, is what `AppendVec` and `Frozen` guarantee (readers see only frozen prefixes,
// the one writer writes only past them). Sending or sharing it needs `T: Send + Sync`.
unsafe impl<T: Send + Sync> Send for Storage<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Storage<T> {}

impl<T> Storage<T> {
    fn new(cap: usize) -> Self {
        let mut v = std::mem::ManuallyDrop::new(Vec::<T>::with_capacity(cap));
        Self {
            // A Vec's pointer is never null (dangling when nothing is allocated).
            ptr: NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling()),
            cap: v.capacity(),
        }
    }
}

impl<T> Drop for Storage<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `cap` come from a `Vec<T>` (see `new` and `AppendVec::reserve`);
        // with length 0 no value is dropped (and `T: Pod` has no drop anyway).
        drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), 0, self.cap) });
    }
}

/// A growable vector whose prefixes [`AppendVec::freeze`] shares. See the module
/// documentation.
pub struct AppendVec<T> {
    storage: Arc<Storage<T>>,
    len: usize,
    /// Values below this index may be read through a [`Frozen`] (when `storage` is shared).
    frozen: usize,
}

/// The first values of an [`AppendVec`] as they were when frozen; dereferences to `&[T]`.
pub struct Frozen<T> {
    storage: Arc<Storage<T>>,
    len: usize,
}

impl<T: bytemuck::Pod> Default for AppendVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: bytemuck::Pod> AppendVec<T> {
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    pub fn with_capacity(cap: usize) -> Self {
        Self {
            storage: Arc::new(Storage::new(cap)),
            len: 0,
            frozen: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a [`Frozen`] prefix of this allocation is still out.
    fn shared(&mut self) -> bool {
        Arc::get_mut(&mut self.storage).is_none()
    }

    /// Moves the values into a new allocation of at least `cap` values (no prefix frozen).
    fn copy_into_new(&mut self, cap: usize) {
        let storage = Storage::<T>::new(cap.max(self.len));
        // SAFETY: both allocations hold at least `len` values; the new one is not shared, the
        // old one's first `len` values are initialized (every write below `len` happened).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.storage.ptr.as_ptr(),
                storage.ptr.as_ptr(),
                self.len,
            );
        }
        self.storage = Arc::new(storage);
        self.frozen = 0;
    }

    /// Room for `additional` more values.
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len.saturating_add(additional);
        if needed <= self.storage.cap {
            return;
        }
        let cap = needed.max(self.storage.cap.saturating_mul(2)).max(16);
        if let Some(storage) = Arc::get_mut(&mut self.storage) {
            // Not shared: grow the allocation as a Vec would (realloc, no copy for large ones).
            // SAFETY: `ptr`/`cap` are a Vec's; its first `len` values are initialized.
            let mut v = unsafe { Vec::from_raw_parts(storage.ptr.as_ptr(), self.len, storage.cap) };
            v.reserve_exact(cap - self.len);
            let mut v = std::mem::ManuallyDrop::new(v);
            storage.ptr = NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling());
            storage.cap = v.capacity();
            self.frozen = 0;
        } else {
            self.copy_into_new(cap);
        }
    }

    #[inline]
    pub fn push(&mut self, value: T) {
        if self.len == self.storage.cap {
            self.reserve(1);
        }
        // SAFETY: `len < cap`, and index `len` is past every frozen prefix (`frozen <= len`):
        // no reader has a reference to it.
        unsafe { self.storage.ptr.as_ptr().add(self.len).write(value) };
        self.len += 1;
    }

    pub fn extend_from_slice(&mut self, values: &[T]) {
        self.reserve(values.len());
        // SAFETY: room for `values.len()` more past `len`, which no reader sees; `values`
        // cannot overlap them (they are not initialized, so no slice covers them).
        unsafe {
            std::ptr::copy_nonoverlapping(
                values.as_ptr(),
                self.storage.ptr.as_ptr().add(self.len),
                values.len(),
            );
        }
        self.len += values.len();
    }

    /// Grows to `n` values (filled with `value`) or truncates to `n`.
    pub fn resize(&mut self, n: usize, value: T) {
        if n <= self.len {
            self.truncate(n);
            return;
        }
        self.reserve(n - self.len);
        while self.len < n {
            self.push(value);
        }
    }

    /// Keeps the first `n` values (a frozen prefix longer than that is left alone: the
    /// values move to a new allocation).
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len {
            return;
        }
        if n < self.frozen && self.shared() {
            self.len = n;
            self.copy_into_new(n);
        } else {
            self.len = n;
            self.frozen = self.frozen.min(n);
        }
    }

    /// The values, writable: copied into a new allocation first when part of them is frozen
    /// and shared.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.frozen > 0 && self.shared() {
            self.copy_into_new(self.storage.cap);
        }
        // SAFETY: no reader sees any of the first `len` values (not shared, or none frozen),
        // and `&mut self` excludes other writers.
        unsafe { std::slice::from_raw_parts_mut(self.storage.ptr.as_ptr(), self.len) }
    }

    /// Value `i`, writable (copying first only when it lies in a shared frozen prefix).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        if i < self.frozen && self.shared() {
            self.copy_into_new(self.storage.cap);
        }
        // SAFETY: `i < len` is initialized and no reader sees it (past every frozen prefix, or
        // not shared).
        Some(unsafe { &mut *self.storage.ptr.as_ptr().add(i) })
    }

    /// The values so far, shared: later appends do not show in it, and later changes to them
    /// copy first.
    pub fn freeze(&mut self) -> Frozen<T> {
        self.frozen = self.len;
        Frozen {
            storage: Arc::clone(&self.storage),
            len: self.len,
        }
    }

    /// The values without a copy: a `Vec` when no frozen prefix is out (as
    /// [`AppendVec::into_vec`]), else all of them as one more frozen prefix of the shared
    /// allocation (a growing column whose snapshots still hold prefixes of it, ending).
    pub fn into_vec_or_frozen(mut self) -> Result<Vec<T>, Frozen<T>> {
        match self.shared() {
            true => Err(self.freeze()),
            false => Ok(self.into_vec()),
        }
    }

    /// The values as a `Vec` (no copy unless a frozen prefix is still out).
    pub fn into_vec(mut self) -> Vec<T> {
        if self.shared() {
            return self.to_vec();
        }
        let storage = std::mem::replace(&mut self.storage, Arc::new(Storage::new(0)));
        match Arc::try_unwrap(storage) {
            Ok(storage) => {
                let storage = std::mem::ManuallyDrop::new(storage);
                // SAFETY: the allocation is a Vec's and is not shared; its first `len` values
                // are initialized; `ManuallyDrop` keeps `Storage::drop` from freeing it.
                unsafe { Vec::from_raw_parts(storage.ptr.as_ptr(), self.len, storage.cap) }
            }
            Err(storage) => storage_prefix(&storage, self.len).to_vec(),
        }
    }
}

fn storage_prefix<T>(storage: &Storage<T>, len: usize) -> &[T] {
    // SAFETY: callers pass `len` values that are initialized and that no writer touches while
    // the slice lives (a frozen prefix, or the writer's own values under `&self`).
    unsafe { std::slice::from_raw_parts(storage.ptr.as_ptr(), len) }
}

impl<T> std::ops::Deref for AppendVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        storage_prefix(&self.storage, self.len)
    }
}

impl<T> std::ops::Deref for Frozen<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        storage_prefix(&self.storage, self.len)
    }
}

impl<T> Clone for Frozen<T> {
    fn clone(&self) -> Self {
        Self {
            storage: Arc::clone(&self.storage),
            len: self.len,
        }
    }
}

impl<T: bytemuck::Pod> Clone for AppendVec<T> {
    /// A copy of the values (nothing shared with the original).
    fn clone(&self) -> Self {
        Self::from(self.to_vec())
    }
}

impl<T: bytemuck::Pod> From<Vec<T>> for AppendVec<T> {
    fn from(v: Vec<T>) -> Self {
        let mut v = std::mem::ManuallyDrop::new(v);
        Self {
            len: v.len(),
            storage: Arc::new(Storage {
                ptr: NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling()),
                cap: v.capacity(),
            }),
            frozen: 0,
        }
    }
}

impl<T: PartialEq> PartialEq for AppendVec<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for AppendVec<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for AppendVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Frozen<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Random operations on an `AppendVec` and a `Vec` side by side: the values always agree,
    /// and every frozen prefix keeps the values it had when frozen, whatever came after.
    #[test]
    fn frozen_prefixes_never_change_and_the_vector_behaves_as_a_vec() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..50 {
            let mut a = AppendVec::<u64>::new();
            let mut v = Vec::<u64>::new();
            let mut frozen: Vec<(Frozen<u64>, Vec<u64>)> = Vec::new();
            for step in 0..400 {
                let x = next();
                match x % 9 {
                    0..=2 => {
                        a.push(x);
                        v.push(x);
                    }
                    3 => {
                        let more: Vec<u64> = (0..x % 40).map(|i| i ^ x).collect();
                        a.extend_from_slice(&more);
                        v.extend_from_slice(&more);
                    }
                    4 if !v.is_empty() => {
                        let i = (x >> 8) as usize % v.len();
                        *a.get_mut(i).unwrap() = step;
                        v[i] = step;
                    }
                    5 => {
                        let n = (x >> 8) as usize % (v.len() + 20);
                        a.resize(n, round);
                        v.resize(n, round);
                    }
                    6 if !v.is_empty() => {
                        let n = (x >> 8) as usize % v.len();
                        a.truncate(n);
                        v.truncate(n);
                    }
                    7 => frozen.push((a.freeze(), v.clone())),
                    8 if !frozen.is_empty() => {
                        frozen.swap_remove((x >> 8) as usize % frozen.len());
                    }
                    _ => {
                        if let Some(s) = a.as_mut_slice().first_mut() {
                            *s = x;
                            v[0] = x;
                        }
                    }
                }
                assert_eq!(&a[..], &v[..], "round {round} step {step}");
                assert_eq!(a.get_mut(a.len()), None);
                for (f, values) in &frozen {
                    assert_eq!(&f[..], &values[..], "round {round} step {step}");
                }
            }
            let clone = a.clone();
            assert_eq!(clone, a);
            assert_eq!(a.into_vec(), v);
            for (f, values) in frozen {
                let on_another_thread = std::thread::spawn(move || f.to_vec()).join().unwrap();
                assert_eq!(on_another_thread, values);
            }
        }
    }

    #[test]
    fn appending_after_a_freeze_copies_nothing_while_there_is_room() {
        let mut a = AppendVec::<u32>::with_capacity(100);
        a.extend_from_slice(&[1, 2, 3]);
        let f = a.freeze();
        a.push(4);
        // Same allocation: the frozen prefix is the start of the vector's values.
        assert_eq!(f.as_ptr(), a.as_ptr());
        assert_eq!(&f[..], &[1, 2, 3]);
        // Changing a frozen value copies.
        *a.get_mut(0).unwrap() = 9;
        assert_ne!(f.as_ptr(), a.as_ptr());
        assert_eq!(&f[..], &[1, 2, 3]);
        assert_eq!(&a[..], &[9, 2, 3, 4]);
        // Changing a value past the frozen prefix does not.
        let g = a.freeze();
        a.push(5);
        *a.get_mut(4).unwrap() = 6;
        assert_eq!(g.as_ptr(), a.as_ptr());
        assert_eq!(&g[..], &[9, 2, 3, 4]);
        assert_eq!(a.into_vec(), vec![9, 2, 3, 4, 6]);
    }
}

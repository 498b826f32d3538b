//! Working columns of the reduction (heaps of packed entries) and the store of reduced
//! columns.

use std::collections::BinaryHeap;

use super::Value;
use super::complex::Entry;

/// A working column: a max-heap of entries packed into integer keys so that the top is the
/// smallest diameter, ties the largest index (Ripser's `greater_diameter_or_smaller_index` in a
/// `std::priority_queue`); the coefficient, in the low bits, never decides the order among
/// distinct simplices.
///
/// `Wide` keys (`u128`, in a binary heap): bits 96..128 the complemented diameter bits (the
/// bits of a non-negative `f32` order like the value), 32..96 the index, 0..32 the
/// coefficient. `Narrow` keys (`u64`), for integer diameters when everything fits: the
/// complemented diameter, then `index_bits` of index, then `coefficient_bits` of coefficient,
/// stored complemented in a [`RadixHeap`] (smallest first). The heap is the hot loop of the
/// reduction: the narrow keys save ≈ 20 % of the H1 time and the radix heap ≈ 18 % more on
/// 10,000 Levenshtein windows.
#[derive(Debug)]
pub(super) enum Column {
    Wide(BinaryHeap<u128>),
    Narrow {
        heap: Box<RadixHeap>,
        layout: NarrowLayout,
    },
}

/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) of `u64` keys, popping the smallest:
/// keys are kept in 65 buckets by the highest bit in which they differ from the last minimum,
/// so a push is O(1) and each key moves down at most 64 times. It needs pushes not below the
/// last minimum, which the reduction nearly always satisfies (an added column's entries all lie
/// at or after its pivot, the current one); the rare smaller key, from a column rebuilt out of
/// V simplex by simplex, goes to a small binary heap that is served first.
#[derive(Debug)]
pub(super) struct RadixHeap {
    pub(super) last: u64,
    pub(super) buckets: [Vec<u64>; 65],
    pub(super) radix_len: usize,
    /// Keys below `last`, smallest first.
    pub(super) below: BinaryHeap<std::cmp::Reverse<u64>>,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            radix_len: 0,
            below: BinaryHeap::new(),
        }
    }
}

impl RadixHeap {
    #[inline]
    pub(super) fn bucket(&self, key: u64) -> usize {
        (64 - (key ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    pub(super) fn push(&mut self, key: u64) {
        if key < self.last {
            self.below.push(std::cmp::Reverse(key));
        } else {
            let b = self.bucket(key);
            self.buckets[b].push(key);
            self.radix_len += 1;
        }
    }

    /// Makes bucket 0 hold the smallest radix key (if any).
    pub(super) fn settle(&mut self) {
        if !self.buckets[0].is_empty() || self.radix_len == 0 {
            return;
        }
        let Some(i) = (1..65).find(|&i| !self.buckets[i].is_empty()) else {
            return;
        };
        let keys = std::mem::take(&mut self.buckets[i]);
        self.last = keys.iter().copied().min().unwrap_or(self.last);
        for &key in &keys {
            let b = self.bucket(key);
            self.buckets[b].push(key);
        }
        // Give the emptied bucket its allocation back.
        let mut keys = keys;
        keys.clear();
        if self.buckets[i].is_empty() {
            self.buckets[i] = keys;
        }
    }

    #[inline]
    pub(super) fn peek_min(&mut self) -> Option<u64> {
        if let Some(&std::cmp::Reverse(key)) = self.below.peek() {
            return Some(key);
        }
        self.settle();
        self.buckets[0].last().copied()
    }

    #[inline]
    pub(super) fn pop_min(&mut self) {
        if self.below.pop().is_some() {
            return;
        }
        self.settle();
        if self.buckets[0].pop().is_some() {
            self.radix_len -= 1;
        }
    }

    pub(super) fn clear(&mut self) {
        for b in &mut self.buckets {
            b.clear();
        }
        self.below.clear();
        self.radix_len = 0;
        self.last = 0;
    }

    pub(super) fn len(&self) -> usize {
        self.radix_len + self.below.len()
    }

    /// All keys, in no order; empties the heap.
    pub(super) fn take_all(&mut self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len());
        for b in &mut self.buckets {
            out.append(b);
        }
        out.extend(self.below.drain().map(|std::cmp::Reverse(k)| k));
        self.clear();
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NarrowLayout {
    pub(super) index_bits: u32,
    pub(super) coefficient_bits: u32,
}

impl NarrowLayout {
    /// The layout for integer diameters `0..=max_level`, indices `< index_bound` and
    /// coefficients `< modulus`, if it fits in 64 bits.
    pub(super) fn new(max_level: u32, index_bound: i64, modulus: u32) -> Option<Self> {
        let bits = |x: u64| 64 - x.leading_zeros();
        let index_bits = bits(u64::try_from(index_bound).ok()?);
        let coefficient_bits = bits(u64::from(modulus));
        (bits(u64::from(max_level)) + index_bits + coefficient_bits <= 64).then_some(Self {
            index_bits,
            coefficient_bits,
        })
    }

    #[inline]
    pub(super) fn shift(&self) -> u32 {
        self.index_bits + self.coefficient_bits
    }

    #[inline]
    pub(super) fn pack(&self, e: Entry) -> u64 {
        let level = e.diameter as u64;
        let level_mask = u64::MAX >> self.shift();
        ((!level & level_mask) << self.shift())
            | ((e.index as u64) << self.coefficient_bits)
            | u64::from(e.coefficient)
    }

    #[inline]
    pub(super) fn unpack(&self, key: u64) -> Entry {
        let level_mask = u64::MAX >> self.shift();
        let index_mask = (1u64 << self.index_bits) - 1;
        let coefficient_mask = (1u64 << self.coefficient_bits) - 1;
        Entry {
            diameter: (!(key >> self.shift()) & level_mask) as Value,
            index: ((key >> self.coefficient_bits) & index_mask) as i64,
            coefficient: (key & coefficient_mask) as u32,
        }
    }
}

impl Column {
    pub(super) fn new(layout: Option<NarrowLayout>) -> Self {
        match layout {
            Some(layout) => Self::Narrow {
                heap: Box::default(),
                layout,
            },
            None => Self::Wide(BinaryHeap::new()),
        }
    }

    /// The wide packing (also the storage format of reduced columns).
    #[inline]
    pub(super) fn pack(e: Entry) -> u128 {
        (u128::from(!e.diameter.to_bits()) << 96)
            | (u128::from(e.index as u64) << 32)
            | u128::from(e.coefficient)
    }

    #[inline]
    pub(super) fn unpack(key: u128) -> Entry {
        Entry {
            diameter: Value::from_bits(!((key >> 96) as u32)),
            index: (key >> 32) as u64 as i64,
            coefficient: key as u32,
        }
    }

    #[inline]
    pub(super) fn push(&mut self, e: Entry) {
        match self {
            Self::Wide(heap) => heap.push(Self::pack(e)),
            Self::Narrow { heap, layout } => heap.push(!layout.pack(e)),
        }
    }

    #[inline]
    pub(super) fn peek(&mut self) -> Option<Entry> {
        match self {
            Self::Wide(heap) => heap.peek().map(|&k| Self::unpack(k)),
            Self::Narrow { heap, layout } => heap.peek_min().map(|k| layout.unpack(!k)),
        }
    }

    #[inline]
    pub(super) fn pop(&mut self) {
        match self {
            Self::Wide(heap) => {
                heap.pop();
            }
            Self::Narrow { heap, .. } => heap.pop_min(),
        }
    }

    pub(super) fn clear(&mut self) {
        match self {
            Self::Wide(heap) => heap.clear(),
            Self::Narrow { heap, .. } => heap.clear(),
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Self::Wide(heap) => heap.len(),
            Self::Narrow { heap, .. } => heap.len(),
        }
    }

    pub(super) fn extend(&mut self, entries: impl Iterator<Item = Entry>) {
        for e in entries {
            self.push(e);
        }
    }

    /// All entries, summed by simplex, zeros dropped, appended to `out`; empties the column.
    /// Sorting the keys (equal simplices are then neighbours, whatever their coefficients) and
    /// summing neighbours is cheaper than popping one by one.
    pub(super) fn drain_summed(&mut self, modulus: u32, out: &mut ReducedStore) {
        match self {
            Self::Wide(heap) => {
                let mut keys = std::mem::take(heap).into_vec();
                keys.sort_unstable();
                sum_neighbours(keys.into_iter().map(Self::unpack), modulus, out);
            }
            Self::Narrow { heap, layout } => {
                let mut keys = heap.take_all();
                keys.sort_unstable();
                let layout = *layout;
                sum_neighbours(keys.into_iter().map(|k| layout.unpack(!k)), modulus, out);
            }
        }
    }

    /// Sums the entries of each simplex and drops zeros, keeping the column's sum: bounds a
    /// working column that many additions filled with entries that cancel (at 50,000
    /// Levenshtein windows single columns received over 60 M entries).
    pub(super) fn compact(&mut self, modulus: u32, scratch: &mut ReducedStore) {
        scratch.truncate(0);
        self.drain_summed(modulus, scratch);
        match self {
            Self::Wide(heap) => heap.extend(scratch.wide.iter().copied()),
            Self::Narrow { heap, .. } => {
                for &key in &scratch.narrow {
                    heap.push(!key);
                }
            }
        }
        scratch.truncate(0);
    }
}

/// Sums runs of entries of the same simplex, drops zeros, appends the rest to `out`.
pub(super) fn sum_neighbours(
    entries: impl Iterator<Item = Entry>,
    modulus: u32,
    out: &mut ReducedStore,
) {
    let mut pending = Entry::NONE;
    for e in entries {
        if e.index == pending.index {
            pending.coefficient = (pending.coefficient + e.coefficient) % modulus;
            continue;
        }
        if !pending.is_none() && pending.coefficient != 0 {
            out.push(pending);
        }
        pending = e;
    }
    if !pending.is_none() && pending.coefficient != 0 {
        out.push(pending);
    }
}

/// The reduced coboundaries `R_j` kept by the reduction, entries packed back to back: narrow
/// keys (8 bytes) when the layout fits, wide ones (16 bytes) otherwise, within a memory budget.
pub(super) struct ReducedStore {
    pub(super) wide: Vec<u128>,
    pub(super) narrow: Vec<u64>,
    pub(super) layout: Option<NarrowLayout>,
    pub(super) budget_bytes: usize,
}

impl ReducedStore {
    pub(super) fn new(layout: Option<NarrowLayout>, budget_bytes: usize) -> Self {
        Self {
            wide: Vec::new(),
            narrow: Vec::new(),
            layout,
            budget_bytes,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.wide.len() + self.narrow.len()
    }

    /// Whether another `extra` entries fit in the budget.
    pub(super) fn has_room(&self, extra: usize) -> bool {
        let width = if self.layout.is_some() { 8 } else { 16 };
        (self.len() + extra).saturating_mul(width) <= self.budget_bytes
    }

    pub(super) fn truncate(&mut self, len: usize) {
        self.wide.truncate(len);
        self.narrow.truncate(len);
    }

    #[inline]
    pub(super) fn push(&mut self, e: Entry) {
        match self.layout {
            Some(layout) => self.narrow.push(layout.pack(e)),
            None => self.wide.push(Column::pack(e)),
        }
    }

    /// Pushes entries `from..to` up to `horizon`, coefficients times `factor`, onto `column`.
    pub(super) fn add_to(
        &self,
        from: usize,
        to: usize,
        factor: u32,
        modulus: u32,
        horizon: Value,
        column: &mut Column,
    ) {
        let scaled = |mut e: Entry| {
            e.coefficient = e.coefficient * factor % modulus;
            e
        };
        match self.layout {
            Some(layout) => {
                for &key in &self.narrow[from..to] {
                    let e = layout.unpack(key);
                    if e.diameter <= horizon {
                        column.push(scaled(e));
                    }
                }
            }
            None => {
                for &key in &self.wide[from..to] {
                    let e = Column::unpack(key);
                    if e.diameter <= horizon {
                        column.push(scaled(e));
                    }
                }
            }
        }
    }
}

/// Appends the entries of `column` summed by simplex, zeros dropped, to `out`; empties `column`.
pub(super) fn sum_entries(column: &mut Vec<Entry>, modulus: u32, out: &mut Vec<Entry>) {
    column.sort_unstable_by_key(|e| e.index);
    let mut pending = Entry::NONE;
    for e in column.drain(..) {
        if e.index == pending.index {
            pending.coefficient = (pending.coefficient + e.coefficient) % modulus;
            continue;
        }
        if !pending.is_none() && pending.coefficient != 0 {
            out.push(pending);
        }
        pending = e;
    }
    if !pending.is_none() && pending.coefficient != 0 {
        out.push(pending);
    }
}

//! The events of an image waiting for the merge's frontier, first in first out, in chunks of
//! a fixed size: what the queue holds is bounded by the event *rate* (the last
//! [`super::MARGIN`] of events), and a `VecDeque` growing by doubling held up to twice that,
//! three times while it copied itself (2 Mi events, 117 MB of 234 MB peak, on a 6 M-event
//! recording). Chunks grow and shrink it by one chunk at a time.

use std::collections::VecDeque;

/// Events per chunk (56 bytes each: 896 KiB).
const CHUNK: usize = 1 << 14;

/// A first-in first-out queue in chunks of [`CHUNK`] items.
pub(super) struct ChunkedQueue<T> {
    chunks: VecDeque<Vec<T>>,
    /// Items of the first chunk already taken.
    head: usize,
    len: usize,
    /// One emptied chunk kept for the next push (a queue that fills and empties around a
    /// chunk boundary does not allocate each time).
    spare: Option<Vec<T>>,
}

impl<T: Copy> ChunkedQueue<T> {
    pub(super) fn new() -> Self {
        Self {
            chunks: VecDeque::new(),
            head: 0,
            len: 0,
            spare: None,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn push_back(&mut self, item: T) {
        if self.chunks.back().is_none_or(|c| c.len() == CHUNK) {
            let chunk = self
                .spare
                .take()
                .unwrap_or_else(|| Vec::with_capacity(CHUNK));
            self.chunks.push_back(chunk);
        }
        if let Some(back) = self.chunks.back_mut() {
            back.push(item);
            self.len += 1;
        }
    }

    pub(super) fn front(&self) -> Option<&T> {
        self.chunks.front().and_then(|c| c.get(self.head))
    }

    pub(super) fn pop_front(&mut self) -> Option<T> {
        let first = self.chunks.front()?;
        let item = *first.get(self.head)?;
        self.head += 1;
        self.len -= 1;
        if self.head == first.len() {
            // Emptied: the first chunk goes (kept as the spare), or, the last one, is reused.
            self.head = 0;
            if let Some(mut chunk) = self.chunks.pop_front() {
                chunk.clear();
                if self.chunks.is_empty() {
                    self.chunks.push_back(chunk);
                } else {
                    self.spare = Some(chunk);
                }
            }
        }
        Some(item)
    }

    /// Bytes held (chunks and the spare).
    #[cfg(test)]
    pub(super) fn held_bytes(&self) -> usize {
        let chunks = self.chunks.len() + usize::from(self.spare.is_some());
        chunks * CHUNK * std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_out_in_order_across_chunk_boundaries() {
        let mut q = ChunkedQueue::new();
        let mut next_out = 0u64;
        let mut next_in = 0u64;
        // Fill and drain by uneven steps so that the head crosses chunk ends at every phase.
        for round in 0..50u64 {
            for _ in 0..(round * 1_777 % 40_000) {
                q.push_back(next_in);
                next_in += 1;
            }
            for _ in 0..(round * 2_311 % 45_000) {
                match q.pop_front() {
                    Some(v) => {
                        assert_eq!(v, next_out);
                        next_out += 1;
                    }
                    None => assert_eq!(next_out, next_in),
                }
            }
            assert_eq!(q.len() as u64, next_in - next_out);
            assert_eq!(q.front().copied(), (next_out < next_in).then_some(next_out));
        }
        while let Some(v) = q.pop_front() {
            assert_eq!(v, next_out);
            next_out += 1;
        }
        assert_eq!(next_out, next_in);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn memory_follows_the_length_one_chunk_at_a_time() {
        let mut q = ChunkedQueue::new();
        for i in 0..(10 * CHUNK as u64) {
            q.push_back(i);
        }
        assert_eq!(q.held_bytes(), 10 * CHUNK * 8);
        for _ in 0..(9 * CHUNK + 1) {
            q.pop_front();
        }
        // One chunk in use and one spare: the emptied ones were given back.
        assert_eq!(q.held_bytes(), 2 * CHUNK * 8);
        while q.pop_front().is_some() {}
        assert!(q.held_bytes() <= 2 * CHUNK * 8);
    }
}

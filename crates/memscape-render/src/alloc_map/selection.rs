//! A selection as bits, one per block, in the layout the GPU reads.

/// A selection as bits, one per block, in the layout [`AllocMapData::set_selection`] uploads
/// (bit `i % 32` of word `i / 32`): 10 M blocks are 1.25 MB.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectionBits {
    words: Vec<u32>,
    len: usize,
}

impl SelectionBits {
    /// Words needed for `blocks` bits.
    pub fn words_for(blocks: usize) -> usize {
        blocks.div_ceil(32)
    }

    /// Nothing selected, room for `blocks` bits.
    pub fn new(blocks: usize) -> Self {
        Self {
            words: vec![0; Self::words_for(blocks)],
            len: blocks,
        }
    }

    /// The blocks `indices` selected (indices at or beyond `blocks` are ignored).
    pub fn from_indices(blocks: usize, indices: impl IntoIterator<Item = usize>) -> Self {
        let mut bits = Self::new(blocks);
        for i in indices {
            bits.set(i, true);
        }
        bits
    }

    /// Every block selected.
    pub fn all(blocks: usize) -> Self {
        Self::from_indices(blocks, 0..blocks)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Selects or deselects block `i` (ignored beyond the length).
    pub fn set(&mut self, i: usize, on: bool) {
        if i >= self.len {
            return;
        }
        let (w, b) = (i / 32, i % 32);
        if on {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 32] & (1 << (i % 32)) != 0
    }

    /// The words, ready for [`AllocMapData::set_selection`].
    pub fn words(&self) -> &[u32] {
        &self.words
    }
}

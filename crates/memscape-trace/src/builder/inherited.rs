//! A forked child's copy of its parent's heap. After `fork` the child owns a copy of every
//! block its parent had live; when it frees one (a shell's subshell cleaning up, a server's
//! worker dropping the master's configuration) that is neither the end of one of the child's
//! own blocks nor a free of a pointer never allocated. The child's blocks stay its own: the
//! inherited ones are the parent's blocks in the trace, so they are only remembered by address
//! here, to tell those frees apart from the unknown ones.

use super::*;

/// Addresses a forked image inherited (sorted), and which of them it has freed since.
#[derive(Debug, Clone, Default)]
pub(crate) struct InheritedHeap {
    addresses: Vec<u64>,
    freed: Vec<bool>,
}

impl InheritedHeap {
    /// Whether `address` was inherited and is not freed yet; marks it freed.
    fn take(&mut self, address: u64) -> bool {
        match self.addresses.binary_search(&address) {
            Ok(i) if !self.freed[i] => {
                self.freed[i] = true;
                true
            }
            _ => false,
        }
    }

    fn still_live(&self) -> impl Iterator<Item = u64> + '_ {
        self.addresses
            .iter()
            .zip(&self.freed)
            .filter(|&(_, &freed)| !freed)
            .map(|(&a, _)| a)
    }
}

impl TraceBuilder {
    /// `child` was forked from `parent` now: its heap starts as a copy of the parent's live
    /// blocks (and of what the parent itself inherited and still holds), whose later frees in
    /// the child count as [`Process::inherited_frees`], not as unknown frees.
    pub fn inherit_address_space(&mut self, child: u32, parent: u32) {
        let n = self.processes.len();
        if child == parent || child as usize >= n || parent as usize >= n {
            return;
        }
        let parent_live = if parent == self.current {
            &self.live
        } else {
            &self.other_spaces[parent as usize].0
        };
        let mut addresses: Vec<u64> = parent_live
            .iter()
            .filter(|&(_, &block)| block != FREED)
            .map(|(&address, _)| address)
            .chain(self.inherited[parent as usize].still_live())
            .collect();
        addresses.sort_unstable();
        addresses.dedup();
        let freed = vec![false; addresses.len()];
        self.inherited[child as usize] = InheritedHeap { addresses, freed };
    }

    /// `process` ended or its image was replaced by `exec`: what it inherited is gone.
    pub fn release_inherited(&mut self, process: u32) {
        if let Some(heap) = self.inherited.get_mut(process as usize) {
            *heap = InheritedHeap::default();
        }
    }

    /// A free in the current process of an address it inherited at its fork (counted; no
    /// block ends).
    pub(super) fn free_inherited(&mut self, address: u64) -> bool {
        let current = self.current as usize;
        if !self
            .inherited
            .get_mut(current)
            .is_some_and(|h| h.take(address))
        {
            return false;
        }
        self.inherited_frees += 1;
        if let Some(p) = self.processes.get_mut(current) {
            p.inherited_frees += 1;
        }
        true
    }
}

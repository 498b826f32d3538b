//! Massif snapshots as heap trees over time: every detailed snapshot is a time point; the
//! allocation-site trees of all of them are merged into one [`GroupTrie`] (a node per distinct
//! path of site identities), so that a site keeps its node, color and place across snapshots.

use std::collections::HashMap;

use crate::massif::MassifFile;
use crate::trie::{GroupTrie, Label, Sizes};

/// Massif data ready for the heap-tree views.
pub struct MassifHeap {
    trie: GroupTrie,
    /// Per detailed snapshot: (index into `MassifFile::snapshots`, (trie node, bytes) pairs).
    points: Vec<(usize, Vec<(u32, u64)>)>,
}

impl MassifHeap {
    pub fn new(file: &MassifFile) -> Self {
        let mut trie = GroupTrie::new("(heap allocation functions)");
        let mut identities: HashMap<String, u64> = HashMap::new();
        let mut points = Vec::new();
        for (index, snapshot) in file.snapshots.iter().enumerate() {
            let Some(tree) = &snapshot.tree else {
                continue;
            };
            let mut map = vec![0u32; tree.nodes.len()];
            let mut sizes: HashMap<u32, u64> = HashMap::new();
            for (i, node) in tree.nodes.iter().enumerate() {
                let trie_node = if i == 0 {
                    0
                } else {
                    let parent = map.get(node.parent as usize).copied().unwrap_or(0);
                    let identity = node.label.identity();
                    let next = identities.len() as u64;
                    let value = *identities.entry(identity).or_insert(next);
                    trie.child(parent, Label { kind: 1, value }, || {
                        node.label.display_name()
                    })
                };
                map[i] = trie_node;
                let slot = sizes.entry(trie_node).or_insert(0);
                *slot = slot.saturating_add(node.bytes);
            }
            let mut sizes: Vec<(u32, u64)> = sizes.into_iter().collect();
            sizes.sort_unstable();
            points.push((index, sizes));
        }
        Self { trie, points }
    }

    pub fn trie(&self) -> &GroupTrie {
        &self.trie
    }

    /// Indices (into the file's snapshots) of the time points: the detailed snapshots.
    pub fn snapshot_indices(&self) -> Vec<usize> {
        self.points.iter().map(|(i, _)| *i).collect()
    }

    /// Number of time points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Sizes of every trie node at time point `point` (massif's subtree bytes, as written; no
    /// object counts: massif does not record them).
    pub fn sizes(&self, point: usize) -> Option<Sizes> {
        let (_, pairs) = self.points.get(point)?;
        let mut sizes = Sizes::zeros(self.trie.len());
        for &(node, bytes) in pairs {
            sizes.bytes[node as usize] = bytes;
        }
        Some(sizes)
    }

    /// The time point of snapshot `snapshot` (an index into the file's snapshots).
    pub fn point_of_snapshot(&self, snapshot: usize) -> Option<usize> {
        self.points.iter().position(|(i, _)| *i == snapshot)
    }
}

//! The group tree shared by all time points: every group that is ever non-empty has one node,
//! identified by its label path from the root. A time point is a [`Sizes`] over these nodes, so
//! node ids (and therefore colors and stable positions) are the same at every time point.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A small multiplicative hasher for the integer keys of the indexes (ids and labels): the
/// default SipHash dominates indexing millions of blocks, and these keys are not attacker
/// controlled in a way that matters (a collision only costs time on one local file).
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

/// `BuildHasher` of [`FastHasher`].
pub type FastHash = BuildHasherDefault<FastHasher>;

/// Identity of a node among its siblings: a key kind and a value (a string id, a thread index,
/// a size class…). Two children of one parent never share a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label {
    pub kind: u8,
    pub value: u64,
}

/// Node 0 is the root. Parents always have smaller ids than their children, so a reverse sweep
/// over ids visits children before parents.
#[derive(Debug, Clone)]
pub struct GroupTrie {
    parent: Vec<u32>,
    label: Vec<Label>,
    name: Vec<String>,
    depth: Vec<u32>,
    children: Vec<Vec<u32>>,
    index: HashMap<(u32, Label), u32, FastHash>,
}

impl GroupTrie {
    pub fn new(root_name: &str) -> Self {
        Self {
            parent: vec![0],
            label: vec![Label { kind: 0, value: 0 }],
            name: vec![root_name.to_owned()],
            depth: vec![0],
            children: vec![Vec::new()],
            index: HashMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.len() <= 1
    }

    /// The child of `parent` with `label`, created (named by `name()`) if new.
    pub fn child(&mut self, parent: u32, label: Label, name: impl FnOnce() -> String) -> u32 {
        if let Some(&id) = self.index.get(&(parent, label)) {
            return id;
        }
        let id = u32::try_from(self.parent.len()).unwrap_or(u32::MAX);
        let parent_depth = self.depth.get(parent as usize).copied().unwrap_or(0);
        self.parent.push(parent);
        self.label.push(label);
        self.name.push(name());
        self.depth.push(parent_depth + 1);
        self.children.push(Vec::new());
        if let Some(c) = self.children.get_mut(parent as usize) {
            c.push(id);
        }
        self.index.insert((parent, label), id);
        id
    }

    pub fn parent(&self, node: u32) -> Option<u32> {
        if node == 0 {
            None
        } else {
            self.parent.get(node as usize).copied()
        }
    }

    pub fn name(&self, node: u32) -> &str {
        self.name.get(node as usize).map_or("", String::as_str)
    }

    pub fn label(&self, node: u32) -> Option<Label> {
        self.label.get(node as usize).copied()
    }

    pub fn depth(&self, node: u32) -> u32 {
        self.depth.get(node as usize).copied().unwrap_or(0)
    }

    pub fn children(&self, node: u32) -> &[u32] {
        self.children.get(node as usize).map_or(&[], Vec::as_slice)
    }

    /// Nodes from the root down to `node` (both included): the breadcrumb of a drill-down.
    pub fn path_to_root(&self, node: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut n = node;
        if (n as usize) >= self.len() {
            return vec![0];
        }
        while n != 0 && path.len() < self.len() {
            path.push(n);
            n = self.parent[n as usize];
        }
        path.push(0);
        path.reverse();
        path
    }

    /// Names along [`GroupTrie::path_to_root`].
    pub fn breadcrumb(&self, node: u32) -> Vec<String> {
        self.path_to_root(node)
            .into_iter()
            .map(|n| self.name(n).to_owned())
            .collect()
    }

    /// The first node whose name contains `needle` (breadth-first, so the shallowest wins).
    pub fn find(&self, needle: &str) -> Option<u32> {
        let mut queue = std::collections::VecDeque::from([0u32]);
        while let Some(n) = queue.pop_front() {
            if self.name(n).contains(needle) {
                return Some(n);
            }
            queue.extend(self.children(n).iter().copied());
        }
        None
    }
}

/// Sizes of every trie node at one time point (aggregated: a node counts its whole subtree).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sizes {
    pub bytes: Vec<u64>,
    pub objects: Vec<u64>,
}

impl Sizes {
    pub fn zeros(len: usize) -> Self {
        Self {
            bytes: vec![0; len],
            objects: vec![0; len],
        }
    }

    pub fn bytes(&self, node: u32) -> u64 {
        self.bytes.get(node as usize).copied().unwrap_or(0)
    }

    pub fn objects(&self, node: u32) -> u64 {
        self.objects.get(node as usize).copied().unwrap_or(0)
    }

    /// Makes room for nodes added to the trie since these sizes were made.
    pub fn grow_to(&mut self, len: usize) {
        if self.bytes.len() < len {
            self.bytes.resize(len, 0);
            self.objects.resize(len, 0);
        }
    }

    /// Turns per-node own sizes into subtree sums (children have larger ids than parents).
    pub fn accumulate(&mut self, trie: &GroupTrie) {
        self.grow_to(trie.len());
        for n in (1..trie.len()).rev() {
            let p = trie.parent[n] as usize;
            self.bytes[p] = self.bytes[p].saturating_add(self.bytes[n]);
            self.objects[p] = self.objects[p].saturating_add(self.objects[n]);
        }
    }
}

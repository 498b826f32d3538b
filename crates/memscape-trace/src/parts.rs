//! Building a [`Trace`] from its parts, for readers outside this crate (Parquet datasets):
//! the parts are checked the way the `.msc` loader checks its sections, so a trace made here
//! never indexes past a column, a thread or a call-tree node.

use memscape_io::Warnings;

use crate::model::{BlockColumns, CallTree, Frame, Strings, Trace, TraceMeta};
use crate::process::{Pool, Process};

/// Everything a [`Trace`] holds, as plain vectors.
#[derive(Debug, Clone, Default)]
pub struct TraceParts {
    pub meta: Option<TraceMeta>,
    pub blocks: BlockColumns,
    /// Interned strings; id 0 must be the empty string (it is added when missing).
    pub strings: Vec<String>,
    /// Call-tree nodes: parent of each node (node 0 is the root, its own parent).
    pub call_parent: Vec<u32>,
    pub frames: Vec<Frame>,
    /// Thread names as string ids.
    pub threads: Vec<u32>,
    /// The process of each thread (empty: every thread in process 0).
    pub thread_process: Vec<u32>,
    /// Process images (empty: one made from the metadata).
    pub processes: Vec<Process>,
    pub pools: Vec<Pool>,
    pub warnings: Warnings,
}

/// Why parts do not make a trace.
#[derive(Debug, thiserror::Error)]
pub enum PartsError {
    #[error("no trace metadata")]
    NoMeta,
    #[error("block columns differ in length")]
    Columns,
    #[error("blocks are not in allocation order (block {0})")]
    Order(usize),
    #[error("block {block}: {what} {value} out of range (at most {max})")]
    Range {
        block: usize,
        what: &'static str,
        value: u64,
        max: u64,
    },
    #[error("call-tree node {0}: parent not before it, or a string id out of range")]
    Node(usize),
    #[error("thread {0}: name string id or process out of range")]
    Thread(usize),
    #[error("pool {0}: process out of range or start after end")]
    Pool(usize),
}

impl Trace {
    /// A trace from its parts, checked: equal column lengths, blocks in allocation order,
    /// threads and sites that exist, a call tree whose parents come before their children.
    pub fn from_parts(parts: TraceParts) -> Result<Trace, PartsError> {
        let TraceParts {
            meta,
            blocks,
            mut strings,
            mut call_parent,
            mut frames,
            threads,
            mut thread_process,
            mut processes,
            pools,
            warnings,
        } = parts;
        let meta = meta.ok_or(PartsError::NoMeta)?;
        if processes.is_empty() {
            processes.push(Process::from_meta(&meta));
        }
        if thread_process.is_empty() {
            thread_process = vec![0; threads.len()];
        }
        let n_processes = processes.len() as u64;
        if let Some(t) = (0..threads.len().max(thread_process.len())).find(|&t| {
            thread_process
                .get(t)
                .is_none_or(|&p| u64::from(p) >= n_processes)
                || t >= threads.len()
        }) {
            return Err(PartsError::Thread(t));
        }
        if let Some(p) = pools
            .iter()
            .position(|p| u64::from(p.process) >= n_processes || p.start > p.end)
        {
            return Err(PartsError::Pool(p));
        }
        if strings.first().is_none_or(|s| !s.is_empty()) {
            strings.insert(0, String::new());
        }
        if call_parent.is_empty() {
            call_parent.push(0);
            frames.push(Frame::default());
        }
        if call_parent.len() != frames.len() {
            return Err(PartsError::Node(call_parent.len().min(frames.len())));
        }
        let n_strings = strings.len() as u64;
        for (n, (&p, f)) in call_parent.iter().zip(&frames).enumerate().skip(1) {
            let ids = [f.function, f.file, f.module];
            if p as usize >= n || ids.iter().any(|&id| u64::from(id) >= n_strings) {
                return Err(PartsError::Node(n));
            }
        }
        if let Some(t) = threads.iter().position(|&id| u64::from(id) >= n_strings) {
            return Err(PartsError::Thread(t));
        }
        if !blocks.is_consistent() {
            return Err(PartsError::Columns);
        }
        let nodes = call_parent.len() as u64;
        let n_threads = threads.len() as u64;
        for i in 0..blocks.len() {
            if i > 0 && blocks.alloc_event[i] < blocks.alloc_event[i - 1] {
                return Err(PartsError::Order(i));
            }
            let range = |what, value: u64, max: u64| {
                if value >= max {
                    Err(PartsError::Range {
                        block: i,
                        what,
                        value,
                        max: max.saturating_sub(1),
                    })
                } else {
                    Ok(())
                }
            };
            range("site", u64::from(blocks.site[i]), nodes)?;
            if n_threads > 0 {
                range("thread", u64::from(blocks.thread[i]), n_threads)?;
            }
            range(
                "free event",
                blocks.free_event[i],
                meta.events.saturating_add(1),
            )?;
        }
        Ok(Trace {
            meta,
            blocks,
            strings: Strings::from_vec(strings),
            call_tree: CallTree::from_columns(call_parent, frames),
            threads,
            thread_process,
            processes,
            pools,
            warnings,
            event_order_cache: Default::default(),
        })
    }
}

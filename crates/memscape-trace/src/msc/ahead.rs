//! The call tree's columns of a segmented file's footer encoded ahead, while a recording runs,
//! so that at the program's exit only the nodes added since are left to compress.
//!
//! A byte-planes section (packing 2) is one zstd *stream*: the reader decodes concatenated
//! frames as the concatenation of their contents. Its planes are laid out per block of
//! 2^[`PLANE_BLOCK_LOG2`] codes, so the whole blocks of a column's prefix can be compressed as
//! frames of their own while the tree grows, and the rest appended as one more frame at the
//! end: the payload decodes to the same planes as one frame of the whole column would. The
//! footer uses the frames only where the column's prefix is still exactly the codes they hold
//! (kept beside them and compared) and its byte count per code is the same; otherwise the
//! column is encoded whole, as without this.

use super::*;
use crate::model::{CallTree, Frame};

/// The call-tree sections (id, element size, code of node `i`), in the footer's order.
type NodeCode = fn(&CallTree, usize) -> u64;
const TREE_COLUMNS: [(u32, u8, NodeCode); 7] = [
    (id::TREE_PARENT, 4, |t, i| u64::from(t.parent[i])),
    (id::TREE_IP, 8, |t, i| t.frames[i].ip),
    (id::TREE_FUNCTION, 4, |t, i| frame(t, i).function.into()),
    (id::TREE_FILE, 4, |t, i| frame(t, i).file.into()),
    (id::TREE_LINE, 4, |t, i| frame(t, i).line.into()),
    (id::TREE_MODULE, 4, |t, i| frame(t, i).module.into()),
    (id::TREE_MODULE_OFFSET, 8, |t, i| frame(t, i).module_offset),
];

fn frame(t: &CallTree, i: usize) -> &Frame {
    &t.frames[i]
}

/// Codes per plane block.
const BLOCK: usize = 1 << PLANE_BLOCK_LOG2;

/// The call tree's columns compressed so far ([`FooterAhead::advance`]), for
/// [`super::EncodedFooter::with_ahead`].
pub struct FooterAhead {
    level: i32,
    columns: Vec<AheadColumn>,
}

#[derive(Default)]
struct AheadColumn {
    /// Bytes per code of the planes in `frames`.
    k: usize,
    /// The codes `frames` hold: whole plane blocks from the first node on.
    codes: Vec<u64>,
    /// Concatenated zstd frames of their planes.
    frames: Vec<u8>,
}

impl FooterAhead {
    /// Nothing encoded yet; frames at the writer's zstd level.
    pub fn new(options: &MscOptions) -> Self {
        Self {
            level: options.zstd_level.unwrap_or(ZSTD_LEVEL),
            columns: TREE_COLUMNS
                .iter()
                .map(|_| AheadColumn::default())
                .collect(),
        }
    }

    /// Compresses the whole plane blocks of `tree`'s columns not compressed yet. A column whose
    /// codes need more bytes than its frames have starts again (a growing tree's parent
    /// indices pass 2^8 and 2^16 early on).
    pub fn advance(&mut self, tree: &CallTree) -> std::io::Result<()> {
        let whole = tree.len() / BLOCK * BLOCK;
        for (column, &(_, _, code)) in self.columns.iter_mut().zip(&TREE_COLUMNS) {
            let done = column.codes.len();
            if whole <= done {
                continue;
            }
            let new: Vec<u64> = (done..whole).map(|i| code(tree, i)).collect();
            let max = new.iter().chain(&column.codes).copied().max().unwrap_or(0);
            let k = bytes_per_code(max);
            if k != column.k {
                // Emptied first: a failed compression leaves no frames to continue.
                let mut all = std::mem::take(&mut column.codes);
                column.frames.clear();
                all.extend(new);
                column.frames = planes_frame(&all, k, self.level)?;
                column.codes = all;
                column.k = k;
            } else {
                let frame = planes_frame(&new, k, self.level)?;
                column.frames.extend(frame);
                column.codes.extend(new);
            }
        }
        Ok(())
    }
}

/// Byte planes a code of at most `max` takes (at least one, as `encode_numeric` counts).
fn bytes_per_code(max: u64) -> usize {
    (bit_width(max) as usize).div_ceil(8).max(1)
}

/// One zstd frame of the planes of `codes` (whole blocks, or the column's end).
fn planes_frame(codes: &[u64], k: usize, level: i32) -> std::io::Result<Vec<u8>> {
    let mut payload = pack_planes(codes, k, level)?;
    // `pack_planes` leads with the plane count and block size: the section's, written once.
    payload.drain(..2);
    Ok(payload)
}

/// The call tree's sections of `trace`'s footer, from `ahead`'s frames where they still hold
/// the column's first codes, else encoded whole (`encode_best`, as without frames).
pub(super) fn tree_sections(
    trace: &Trace,
    level: i32,
    ahead: Option<&FooterAhead>,
) -> std::io::Result<Vec<Encoded>> {
    let t = &trace.call_tree;
    let mut out = Vec::with_capacity(TREE_COLUMNS.len());
    for (c, &(section, elem_size, code)) in TREE_COLUMNS.iter().enumerate() {
        let column = ahead.and_then(|a| a.columns.get(c));
        let encoded = match column.and_then(|a| continued(section, elem_size, t, code, a, level)) {
            Some(encoded) => encoded?,
            None => {
                if column.is_some_and(|a| !a.codes.is_empty()) {
                    tracing::debug!(
                        section,
                        nodes = t.len(),
                        "footer column encoded whole: its compressed prefix no longer fits"
                    );
                }
                let codes: Vec<u64> = (0..t.len()).map(|i| code(t, i)).collect();
                encode_best(section, elem_size, &codes, &[XF_NONE], None, level)?
            }
        };
        out.push(encoded);
    }
    Ok(out)
}

/// Column `code` of `tree` as byte planes continuing `ahead`'s frames, or bit-packed where
/// `encode_numeric` would choose that; `None` where the frames do not fit (another prefix or
/// plane count). One pass over the compressed prefix (compared, not copied) and the column's
/// bit-packed size counted, not packed: at the exit only the rest is copied and compressed.
fn continued(
    section: u32,
    elem_size: u8,
    tree: &CallTree,
    code: NodeCode,
    ahead: &AheadColumn,
    level: i32,
) -> Option<std::io::Result<Encoded>> {
    let (n, done) = (tree.len(), ahead.codes.len());
    if done == 0 || n < GROUP || done > n {
        return None;
    }
    let mut max = 0;
    let mut bits_len = 0;
    for start in (0..n).step_by(CHUNK) {
        let end = (start + CHUNK).min(n);
        let (mut lo, mut hi) = (u64::MAX, 0);
        for i in start..end {
            let c = code(tree, i);
            if i < done && c != ahead.codes[i] {
                return None;
            }
            lo = lo.min(c);
            hi = hi.max(c);
        }
        max = max.max(hi);
        bits_len += chunk_bits_len(end - start, hi - lo);
    }
    let chunks = n.div_ceil(CHUNK);
    // `pack_bits`: the chunks' references, their widths padded to whole words, the data.
    bits_len += 8 * chunks + chunks.next_multiple_of(8);
    let k = bytes_per_code(max);
    if k != ahead.k {
        return None;
    }
    let encoded = (|| {
        let mut planes = vec![k as u8, PLANE_BLOCK_LOG2];
        planes.extend_from_slice(&ahead.frames);
        if done < n {
            let rest: Vec<u64> = (done..n).map(|i| code(tree, i)).collect();
            planes.extend(planes_frame(&rest, k, level)?);
        }
        // `encode_numeric`'s choice between the two packings.
        let (packing, payload) = if (planes.len() as f64) < bits_len as f64 * PLANES_WORTH_IT {
            (PACK_PLANES, planes)
        } else {
            let codes: Vec<u64> = (0..n).map(|i| code(tree, i)).collect();
            (PACK_BITS, pack_bits(&codes))
        };
        Ok(Encoded {
            id: section,
            elem_size,
            transform: XF_NONE,
            packing,
            shift: 0,
            count: n as u64,
            payload,
        })
    })();
    Some(encoded)
}

/// The data bytes `pack_bits` spends on a chunk of `len` codes spread over `spread`.
fn chunk_bits_len(len: usize, spread: u64) -> usize {
    8 * bit_width(spread) as usize * len.div_ceil(GROUP)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-packed size `continued` counts is `pack_bits`'s length.
    #[test]
    fn counted_bit_packed_size_is_pack_bits_length() {
        for n in [0usize, 1, 63, 64, 1023, 1024, 1025, 5000, 70_000] {
            let codes: Vec<u64> = (0..n as u64)
                .map(|i| (i * 2_654_435_761) % (1 + i % 5000))
                .collect();
            let chunks = n.div_ceil(CHUNK);
            let data: usize = codes
                .chunks(CHUNK)
                .map(|c| {
                    let lo = c.iter().copied().min().unwrap_or(0);
                    let hi = c.iter().copied().max().unwrap_or(0);
                    chunk_bits_len(c.len(), hi - lo)
                })
                .sum();
            assert_eq!(
                data + 8 * chunks + chunks.next_multiple_of(8),
                pack_bits(&codes).len(),
                "{n} codes"
            );
        }
    }
}

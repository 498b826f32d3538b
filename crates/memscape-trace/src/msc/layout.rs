//! Laying encoded sections out as a file, with their checksums; and resealing a forged file's
//! checksums for tests.

use super::*;

/// Recomputes the checksums of a version-3 file in place, for tests that forge payloads past the
/// checksums (to exercise the decoders' own checks). Does nothing to other inputs.
#[doc(hidden)]
pub fn reseal_checksums(bytes: &mut [u8]) {
    if bytes.len() >= HEADER
        && &bytes[..8] == MAGIC
        && read_u32(bytes, 8) == Some(super::segments::VERSION_SEGMENTED)
    {
        // Each segment and the footer: version-5 layouts one after the other.
        let mut at = HEADER;
        while let Some(rest) = bytes.get_mut(at..) {
            if rest.len() < HEADER || &rest[..8] != MAGIC {
                return;
            }
            let end = reseal_layout(rest);
            match end
                .checked_next_multiple_of(8)
                .and_then(|e| at.checked_add(e))
            {
                Some(next) if end > 0 => at = next,
                _ => return,
            }
        }
        return;
    }
    reseal_layout(bytes);
}

/// [`reseal_checksums`] of one version-3 to -5 layout; returns where its last payload ends.
fn reseal_layout(bytes: &mut [u8]) -> usize {
    if bytes.len() < HEADER
        || &bytes[..8] != MAGIC
        || !matches!(read_u32(bytes, 8), Some(VERSION | VERSION_V4 | VERSION_V3))
    {
        return 0;
    }
    let mut end = HEADER;
    let n = read_u32(bytes, 12).unwrap_or(0).min(MAX_SECTIONS) as usize;
    for i in 0..n {
        let at = HEADER + DIR_ENTRY * i;
        let (Some(offset), Some(len)) = (read_u64(bytes, at + 16), read_u64(bytes, at + 24)) else {
            return end;
        };
        let (Ok(offset), Ok(len)) = (usize::try_from(offset), usize::try_from(len)) else {
            continue;
        };
        end = end.max(offset.saturating_add(len));
        let Some(sum) = offset
            .checked_add(len)
            .and_then(|end| bytes.get(offset..end))
            .map(checksum)
        else {
            continue;
        };
        if let Some(slot) = bytes.get_mut(at + 32..at + 40) {
            slot.copy_from_slice(&sum.to_le_bytes());
        }
    }
    end
}

/// Whether a section is a raw block column, meant to be memory-mapped: such sections carry no
/// checksum (0), because checking one would read the whole column at load, which mapping is
/// there to avoid; what the views rely on is checked on first use instead.
pub(super) fn is_mappable(id: u32, packing: u8) -> bool {
    packing == PACK_RAW
        && ((id::ADDRESS..=id::FLAGS).contains(&id) || (id::PROCESS..=id::POOL).contains(&id))
}

/// Checksum of a section's payload (version 3): corruption is found when the file is loaded,
/// not when a column decoded on first use is read. Not cryptographic; about one multiply per
/// 8 bytes.
pub(super) fn checksum(payload: &[u8]) -> u64 {
    let mix = |h: u64, w: u64| {
        let h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 29)
    };
    let mut h = 0x243F_6A88_85A3_08D3u64 ^ payload.len() as u64;
    let mut words = payload.chunks_exact(8);
    for w in &mut words {
        h = mix(
            h,
            u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or_default()),
        );
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    mix(h, u64::from_le_bytes(last))
}

/// A section to lay out, its payload borrowed.
pub(super) struct SectionRef<'a> {
    pub(super) id: u32,
    pub(super) elem_size: u8,
    pub(super) transform: u8,
    pub(super) packing: u8,
    pub(super) shift: u8,
    pub(super) count: u64,
    pub(super) payload: &'a [u8],
}

impl Encoded {
    pub(super) fn as_ref(&self) -> SectionRef<'_> {
        SectionRef {
            id: self.id,
            elem_size: self.elem_size,
            transform: self.transform,
            packing: self.packing,
            shift: self.shift,
            count: self.count,
            payload: &self.payload,
        }
    }
}

pub(super) fn lay_out(sections: &[Encoded]) -> Vec<u8> {
    let refs: Vec<SectionRef<'_>> = sections.iter().map(Encoded::as_ref).collect();
    let mut out = vec![0u8; laid_out_len(&refs)];
    lay_out_into(&refs, &mut out);
    out
}

/// Bytes [`lay_out_into`] writes.
pub(super) fn laid_out_len(sections: &[SectionRef<'_>]) -> usize {
    let mut offset = (HEADER + DIR_ENTRY * sections.len()).next_multiple_of(8);
    for (i, s) in sections.iter().enumerate() {
        offset += s.payload.len();
        if i + 1 < sections.len() {
            offset = offset.next_multiple_of(8);
        }
    }
    offset
}

/// Lays out a version-5 file into `out` (zeroed, [`laid_out_len`] bytes).
pub(super) fn lay_out_into(sections: &[SectionRef<'_>], out: &mut [u8]) {
    let mut put = |at: usize, bytes: &[u8]| out[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, MAGIC);
    put(8, &VERSION.to_le_bytes());
    put(12, &(sections.len() as u32).to_le_bytes());
    let mut offset = (HEADER + DIR_ENTRY * sections.len()).next_multiple_of(8);
    for (i, s) in sections.iter().enumerate() {
        let at = HEADER + DIR_ENTRY * i;
        put(at, &s.id.to_le_bytes());
        put(at + 4, &[s.elem_size, s.transform, s.packing, s.shift]);
        put(at + 8, &s.count.to_le_bytes());
        put(at + 16, &(offset as u64).to_le_bytes());
        put(at + 24, &(s.payload.len() as u64).to_le_bytes());
        let sum = if is_mappable(s.id, s.packing) {
            0
        } else {
            checksum(s.payload)
        };
        put(at + 32, &sum.to_le_bytes());
        put(offset, s.payload);
        offset = (offset + s.payload.len()).next_multiple_of(8);
    }
}

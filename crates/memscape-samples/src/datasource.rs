//! Decoding where a sampled load was served from.
//!
//! Two encodings exist in the files memscape reads:
//!
//! 1. **Intel load-latency data source** (PEBS load-latency record, "Data Source Encoding",
//!    Intel SDM vol. 3B §18; the same table Linux uses in `arch/x86/events/intel/ds.c`,
//!    `pebs_data_source[]`). MemAxes' CSV `dataSource` column carries it in its low 4 bits:
//!
//!    | low 4 bits | meaning (SDM / Linux)                                   | [`MemLevel`]      |
//!    |-----------:|---------------------------------------------------------|-------------------|
//!    | 0x0        | unknown L3 cache miss                                   | `L3Miss`          |
//!    | 0x1        | L1 hit (minimal latency core cache hit)                 | `L1`              |
//!    | 0x2        | pending core cache hit: line fill buffer                | `Lfb`             |
//!    | 0x3        | L2 hit                                                  | `L2`              |
//!    | 0x4        | L3 hit, no snoop needed                                 | `L3`              |
//!    | 0x5        | L3 hit, snoop miss (other core clean)                   | `L3`              |
//!    | 0x6        | L3 hit, snoop hit (other core shared)                   | `L3`              |
//!    | 0x7        | L3 hit, snoop HITM (other core modified)                | `L3`              |
//!    | 0x8        | L3 miss, remote cache, snoop hit                        | `RemoteCache`     |
//!    | 0x9        | L3 miss, remote cache, snoop HITM                       | `RemoteCache`     |
//!    | 0xA        | L3 miss, local DRAM, shared                             | `LocalRam`        |
//!    | 0xB        | L3 miss, remote DRAM, shared                            | `RemoteRam`       |
//!    | 0xC        | L3 miss, local DRAM, exclusive                          | `LocalRam`        |
//!    | 0xD        | L3 miss, remote DRAM, exclusive                         | `RemoteRam`       |
//!    | 0xE        | I/O                                                     | `Io`              |
//!    | 0xF        | uncached                                                | `Uncached`        |
//!
//!    Bits above the low four are not part of the level (the SDM uses bit 4 for an STLB miss
//!    and bit 5 for a locked access); they are kept in the raw `dataSource` attribute.
//!
//! 2. **Linux `perf_mem_data_src`** (`include/uapi/linux/perf_event.h`), used by Mitos' CSV
//!    (`data_src`, decimal) and by `perf script` (hexadecimal plus decoded text):
//!
//!    | bits  | field        | values used here                                              |
//!    |-------|--------------|---------------------------------------------------------------|
//!    | 0–4   | mem_op       | 0x1 NA, 0x2 load, 0x4 store, 0x8 prefetch, 0x10 exec          |
//!    | 5–18  | mem_lvl      | 0x1 NA, 0x2 hit, 0x4 miss, 0x8 L1, 0x10 LFB, 0x20 L2, 0x40 L3, 0x80 local RAM, 0x100 remote RAM 1 hop, 0x200 remote RAM 2 hops, 0x400 remote cache 1 hop, 0x800 remote cache 2 hops, 0x1000 I/O, 0x2000 uncached |
//!    | 19–23 | mem_snoop    | (not used for the level)                                      |
//!    | 24–25 | mem_lock     |                                                               |
//!    | 26–32 | mem_dtlb     |                                                               |
//!    | 33–36 | mem_lvl_num  | 0x1 L1, 0x2 L2, 0x3 L3, 0x4 L4, 0x9 CXL, 0xa I/O, 0xb any cache, 0xc LFB, 0xd RAM, 0xe PMEM, 0xf NA |
//!    | 37    | mem_remote   | 1 = remote                                                    |
//!
//!    `mem_lvl_num` (newer kernels) wins when set; otherwise `mem_lvl`'s level bits are read,
//!    and an L3 *miss* without a further level means "served beyond L3" (`L3Miss`).

/// Where a load was served, as far as the sample says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemLevel {
    L1,
    /// Line fill buffer: a miss to a line already being fetched; counted at L1.
    Lfb,
    L2,
    L3,
    /// Missed L3, served from memory or another socket; the sample does not say which. Mapped to
    /// the local NUMA node (the common case; remote accesses have their own codes).
    L3Miss,
    LocalRam,
    RemoteRam,
    RemoteCache,
    Io,
    Uncached,
    Unknown,
}

impl MemLevel {
    /// All levels, in the order used for labels and tables.
    pub const ALL: [MemLevel; 11] = [
        MemLevel::L1,
        MemLevel::Lfb,
        MemLevel::L2,
        MemLevel::L3,
        MemLevel::L3Miss,
        MemLevel::LocalRam,
        MemLevel::RemoteRam,
        MemLevel::RemoteCache,
        MemLevel::Io,
        MemLevel::Uncached,
        MemLevel::Unknown,
    ];

    pub fn label(self) -> &'static str {
        match self {
            MemLevel::L1 => "L1",
            MemLevel::Lfb => "LFB",
            MemLevel::L2 => "L2",
            MemLevel::L3 => "L3",
            MemLevel::L3Miss => "L3 miss",
            MemLevel::LocalRam => "Local RAM",
            MemLevel::RemoteRam => "Remote RAM",
            MemLevel::RemoteCache => "Remote cache",
            MemLevel::Io => "I/O",
            MemLevel::Uncached => "Uncached",
            MemLevel::Unknown => "level unknown",
        }
    }

    /// The Intel load-latency table above, on the low 4 bits of `code`.
    pub fn from_intel_load_latency(code: u64) -> MemLevel {
        match code & 0xF {
            0x0 => MemLevel::L3Miss,
            0x1 => MemLevel::L1,
            0x2 => MemLevel::Lfb,
            0x3 => MemLevel::L2,
            0x4..=0x7 => MemLevel::L3,
            0x8 | 0x9 => MemLevel::RemoteCache,
            0xA | 0xC => MemLevel::LocalRam,
            0xB | 0xD => MemLevel::RemoteRam,
            0xE => MemLevel::Io,
            _ => MemLevel::Uncached,
        }
    }

    /// Linux `perf_mem_data_src` (table above).
    pub fn from_perf_data_src(data_src: u64) -> MemLevel {
        let lvl = (data_src >> 5) & 0x3FFF;
        let lvl_num = (data_src >> 33) & 0xF;
        let remote = (data_src >> 37) & 1 == 1;
        match lvl_num {
            0x1 => return MemLevel::L1,
            0x2 => return MemLevel::L2,
            0x3 | 0x4 | 0xb => {
                return if remote {
                    MemLevel::RemoteCache
                } else {
                    MemLevel::L3
                };
            }
            0xc => return MemLevel::Lfb,
            0xd | 0xe | 0x9 => {
                return if remote {
                    MemLevel::RemoteRam
                } else {
                    MemLevel::LocalRam
                };
            }
            0xa => return MemLevel::Io,
            _ => {}
        }
        const HIT: u64 = 0x2;
        const MISS: u64 = 0x4;
        const L1: u64 = 0x8;
        const LFB: u64 = 0x10;
        const L2: u64 = 0x20;
        const L3: u64 = 0x40;
        const LOC_RAM: u64 = 0x80;
        const REM_RAM: u64 = 0x100 | 0x200;
        const REM_CCE: u64 = 0x400 | 0x800;
        const IO: u64 = 0x1000;
        const UNC: u64 = 0x2000;
        if lvl & MISS != 0 && lvl & HIT == 0 {
            // "L3 miss" with nothing better: served beyond L3. Other misses say nothing useful.
            return if lvl & L3 != 0 {
                MemLevel::L3Miss
            } else {
                MemLevel::Unknown
            };
        }
        // Outermost level bit wins: a record may carry several (e.g. LFB|L1).
        if lvl & REM_CCE != 0 {
            MemLevel::RemoteCache
        } else if lvl & REM_RAM != 0 {
            MemLevel::RemoteRam
        } else if lvl & LOC_RAM != 0 {
            MemLevel::LocalRam
        } else if lvl & L3 != 0 {
            MemLevel::L3
        } else if lvl & L2 != 0 {
            MemLevel::L2
        } else if lvl & LFB != 0 {
            MemLevel::Lfb
        } else if lvl & L1 != 0 {
            MemLevel::L1
        } else if lvl & IO != 0 {
            MemLevel::Io
        } else if lvl & UNC != 0 {
            MemLevel::Uncached
        } else {
            MemLevel::Unknown
        }
    }

    /// Decodes perf's text form (`|OP LOAD|LVL L1 hit|SNP None|…`), for lines whose hex value is
    /// missing. Only the `LVL` part is read.
    pub fn from_perf_text(text: &str) -> MemLevel {
        let Some(lvl) = text
            .split('|')
            .map(str::trim)
            .find(|part| part.starts_with("LVL "))
        else {
            return MemLevel::Unknown;
        };
        let lvl = &lvl[4..];
        let hit = lvl.contains("hit");
        let miss = lvl.contains("miss");
        if lvl.contains("Remote Cache") {
            MemLevel::RemoteCache
        } else if lvl.contains("Remote RAM") {
            MemLevel::RemoteRam
        } else if lvl.contains("Local RAM") {
            MemLevel::LocalRam
        } else if lvl.contains("L3") {
            if miss && !hit {
                MemLevel::L3Miss
            } else {
                MemLevel::L3
            }
        } else if miss && !hit {
            MemLevel::Unknown
        } else if lvl.contains("L2") {
            MemLevel::L2
        } else if lvl.contains("LFB") {
            MemLevel::Lfb
        } else if lvl.contains("L1") {
            MemLevel::L1
        } else if lvl.contains("I/O") {
            MemLevel::Io
        } else if lvl.contains("Uncached") {
            MemLevel::Uncached
        } else {
            MemLevel::Unknown
        }
    }
}

/// How to read MemAxes' `dataSource` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataSourceRadix {
    /// Hexadecimal if any value in the file has a hex letter or `0x` prefix, else decimal (see
    /// the crate README for the evidence on the LULESH file).
    #[default]
    Auto,
    /// MemAxes' own reading (`QString::toInt(…, 16)`).
    Hex,
    Decimal,
}

impl DataSourceRadix {
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "auto" => Some(Self::Auto),
            "hex" | "16" | "hexadecimal" => Some(Self::Hex),
            "dec" | "decimal" | "10" => Some(Self::Decimal),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intel_table() {
        assert_eq!(MemLevel::from_intel_load_latency(0x1), MemLevel::L1);
        assert_eq!(MemLevel::from_intel_load_latency(0x41), MemLevel::L1);
        assert_eq!(MemLevel::from_intel_load_latency(0x3), MemLevel::L2);
        assert_eq!(MemLevel::from_intel_load_latency(0x7), MemLevel::L3);
        assert_eq!(MemLevel::from_intel_load_latency(0xD), MemLevel::RemoteRam);
        assert_eq!(MemLevel::from_intel_load_latency(0x0), MemLevel::L3Miss);
    }

    #[test]
    fn perf_data_src() {
        // PERF_MEM_OP_LOAD | (LVL_HIT|LVL_L1)<<5 | SNOOP_NONE<<19 | TLB_L1|L2 hit...
        let l1 = 0x2 | ((0x2 | 0x8) << 5) | (0x2 << 19);
        assert_eq!(MemLevel::from_perf_data_src(l1), MemLevel::L1);
        let rem = 0x2 | ((0x2 | 0x100) << 5);
        assert_eq!(MemLevel::from_perf_data_src(rem), MemLevel::RemoteRam);
        let l3miss = 0x2 | ((0x4 | 0x40) << 5);
        assert_eq!(MemLevel::from_perf_data_src(l3miss), MemLevel::L3Miss);
        let lvlnum_ram_remote = (0xd_u64 << 33) | (1 << 37) | ((0x2 | 0x80) << 5);
        assert_eq!(
            MemLevel::from_perf_data_src(lvlnum_ram_remote),
            MemLevel::RemoteRam
        );
        assert_eq!(MemLevel::from_perf_data_src(0), MemLevel::Unknown);
    }

    #[test]
    fn perf_text() {
        let t = "|OP LOAD|LVL L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A";
        assert_eq!(MemLevel::from_perf_text(t), MemLevel::L1);
        assert_eq!(
            MemLevel::from_perf_text("|OP LOAD|LVL Local RAM or RAM hit|SNP Hit"),
            MemLevel::LocalRam
        );
        assert_eq!(
            MemLevel::from_perf_text("|OP LOAD|LVL L3 miss|SNP N/A"),
            MemLevel::L3Miss
        );
        assert_eq!(
            MemLevel::from_perf_text("|OP LOAD|LVL LFB/MAB hit|SNP None"),
            MemLevel::Lfb
        );
    }
}

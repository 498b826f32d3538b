//! Property tests: the importers never panic or hang on mutated real inputs (the demo lackey
//! trace, pinatrace/CSV conversions of it, and Ripser's example matrices), and what they accept
//! is consistent with the input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::OnceLock;

use memscape_cycles::metric::parse_matrix;
use memscape_cycles::trace::{TraceFormat, parse_trace};
use memscape_cycles::{DistanceMatrix, MatrixFormat};
use proptest::prelude::*;

/// The first 3000 lines of the committed demo trace (a real valgrind lackey recording).
fn lackey_sample() -> &'static [u8] {
    static SAMPLE: OnceLock<Vec<u8>> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let path = common::crate_dir().join("../../assets/demo/sort.lackey.zst");
        let all = memscape_io::read_input(&path).unwrap();
        let mut out = Vec::new();
        for line in all.split(|&b| b == b'\n').take(3000) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        out
    })
}

/// The same accesses as pinatrace and as CSV.
fn converted(format: TraceFormat) -> Vec<u8> {
    let trace = parse_trace("sample", lackey_sample(), Some(TraceFormat::Lackey)).unwrap();
    let mut out = String::new();
    if format == TraceFormat::Csv {
        out.push_str("ip,address,kind,size\n");
    }
    for a in &trace.accesses {
        let kind = match a.kind {
            memscape_cycles::AccessKind::Load => "R",
            _ => "W",
        };
        match format {
            TraceFormat::Pinatrace => {
                out.push_str(&format!("{:#x}: {kind} {:#x}\n", a.ip, a.address))
            }
            _ => out.push_str(&format!("{:#x},{:#x},{kind},{}\n", a.ip, a.address, a.size)),
        }
    }
    out.push_str("#eof\n");
    out.into_bytes()
}

fn mutate(base: &[u8], edits: &[(usize, u8, u8)], cut: usize) -> Vec<u8> {
    let mut data = base.to_vec();
    for &(pos, byte, op) in edits {
        if data.is_empty() {
            break;
        }
        let pos = pos % data.len();
        match op % 3 {
            0 => data[pos] = byte,
            1 => data.insert(pos, byte),
            _ => {
                data.remove(pos);
            }
        }
    }
    let keep = data.len().saturating_sub(cut % (data.len() + 1));
    data.truncate(keep);
    data
}

fn lines(data: &[u8]) -> usize {
    data.split(|&b| b == b'\n').count()
}

#[test]
fn the_unmutated_sample_parses_cleanly_in_all_three_formats() {
    let trace = parse_trace("s", lackey_sample(), None).unwrap();
    assert_eq!(trace.format, TraceFormat::Lackey);
    assert!(trace.accesses.len() > 500);
    assert_eq!(trace.warnings.count("malformed_line"), 0);
    for format in [TraceFormat::Pinatrace, TraceFormat::Csv] {
        let other = parse_trace("c", &converted(format), None).unwrap();
        assert_eq!(other.format, format);
        assert_eq!(other.accesses.len(), trace.accesses.len());
        assert!(other.warnings.is_empty(), "{}", other.warnings);
        for (a, b) in other.accesses.iter().zip(&trace.accesses) {
            assert_eq!((a.ip, a.address), (b.ip, b.address));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn mutated_lackey_never_panics(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..40),
        cut in any::<usize>(),
    ) {
        let data = mutate(lackey_sample(), &edits, cut);
        if let Ok(trace) = parse_trace("m", &data, None) {
            prop_assert!(trace.accesses.len() <= lines(&data));
            prop_assert!(trace.warnings.total() <= lines(&data) as u64);
        }
    }

    #[test]
    fn mutated_pinatrace_and_csv_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..40),
        cut in any::<usize>(),
        csv in any::<bool>(),
    ) {
        let format = if csv { TraceFormat::Csv } else { TraceFormat::Pinatrace };
        let data = mutate(&converted(format), &edits, cut);
        for forced in [None, Some(format)] {
            if let Ok(trace) = parse_trace("m", &data, forced) {
                prop_assert!(trace.accesses.len() <= lines(&data));
            }
        }
    }

    #[test]
    fn mutated_matrices_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..20),
        cut in any::<usize>(),
        which in 0usize..3,
    ) {
        let base = std::fs::read(common::shared_data().join("ripser/random16.lower_distance_matrix")).unwrap();
        let data = mutate(&base, &edits, cut);
        let format = [MatrixFormat::LowerDistance, MatrixFormat::Distance, MatrixFormat::PointCloud][which];
        if let Ok(m) = parse_matrix("m", &data, format) {
            prop_assert!(m.size() <= data.len() + 1);
            let r = memscape_cycles::rips_persistence(&m, &memscape_cycles::RipsOptions::default());
            prop_assert!(r.is_ok());
        }
    }
}

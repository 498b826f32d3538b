//! Progress reports and cancellation on a real trace (the whole-process lackey trace of the
//! matmul test program, 12,000 windows): phases come in pipeline order with fractions that
//! grow, and a cancelled analysis returns `Cancelled` promptly in whatever phase it is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use memscape_cycles::records::{RecordFilter, select_records};
use memscape_cycles::symbolize::LoadBase;
use memscape_cycles::{
    CancelToken, Control, CyclesError, CyclesOptions, Detail, Phase, Progress, TraceRecord,
    analyze_records_with, read_trace,
};

fn whole_process_records(count: usize) -> Vec<TraceRecord> {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "matmul", MATMUL);
    let log = lackey_trace(dir.path(), &exe, &[], "whole");
    let trace = read_trace(&log, None).unwrap();
    let filter = RecordFilter {
        record_range: Some(0..count),
        ..RecordFilter::default()
    };
    select_records(&trace, None, LoadBase::Detect, &filter).unwrap()
}

fn options() -> CyclesOptions {
    CyclesOptions {
        detail: Detail::Full,
        ..CyclesOptions::default()
    }
}

#[test]
fn progress_follows_the_pipeline_and_cancel_stops_it_promptly() {
    let records = whole_process_records(12_009);

    // A full run: the phases in order, each fraction non-decreasing, every phase ends at 1.
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let control = Control::new().on_progress(move |p| sink.lock().unwrap().push(p));
    let started = Instant::now();
    let report = analyze_records_with(records.clone(), &options(), &control).unwrap();
    let full_time = started.elapsed();
    assert!(!report.parameterizations.is_empty());
    let seen = seen.lock().unwrap().clone();
    let phases: Vec<Phase> = seen.iter().fold(Vec::new(), |mut acc, p| {
        if acc.last() != Some(&p.phase) {
            acc.push(p.phase);
        }
        acc
    });
    assert_eq!(
        phases,
        [
            Phase::Distances,
            Phase::Radius,
            Phase::Collapse,
            Phase::H0,
            Phase::H1,
            Phase::Coordinates
        ],
        "{seen:?}"
    );
    for pair in seen.windows(2) {
        if pair[0].phase == pair[1].phase {
            assert!(pair[1].fraction() >= pair[0].fraction(), "{pair:?}");
        }
    }
    for phase in [Phase::Distances, Phase::Collapse, Phase::H1] {
        let last = seen.iter().rev().find(|p| p.phase == phase).unwrap();
        assert_eq!(last.fraction(), 1.0, "{phase:?} ends at {last:?}");
    }

    // Cancelled at several points of the same analysis: Cancelled, soon after the request.
    let mut latencies = Vec::new();
    for fraction in [0.02, 0.2, 0.5, 0.8] {
        let token = CancelToken::new();
        let last: Arc<Mutex<Option<Progress>>> = Arc::default();
        let sink = last.clone();
        let control = Control::new()
            .with_cancel(token.clone())
            .on_progress(move |p| *sink.lock().unwrap() = Some(p));
        let records = records.clone();
        let worker = std::thread::spawn(move || {
            let result = analyze_records_with(records, &options(), &control);
            (result, Instant::now())
        });
        std::thread::sleep(full_time.mul_f64(fraction));
        let cancelled_at = Instant::now();
        token.cancel();
        let (result, returned_at) = worker.join().unwrap();
        let phase = last.lock().unwrap().map(|p| p.phase);
        if result.is_ok() {
            // It finished before the request (a fast run on a quiet machine).
            continue;
        }
        assert!(
            matches!(result, Err(CyclesError::Cancelled)),
            "{:?}",
            result.err()
        );
        let latency = returned_at.saturating_duration_since(cancelled_at);
        eprintln!("cancelled in {phase:?} after {latency:?}");
        latencies.push(latency);
    }
    assert!(!latencies.is_empty(), "no run was cancelled");
    // The analysis checks the token every row, every 256 edges, every column and addition:
    // well under 100 ms on an idle machine; generous here, as other tests share the cores.
    let worst = latencies.iter().max().copied().unwrap_or_default();
    assert!(worst < Duration::from_secs(2), "{latencies:?}");
}

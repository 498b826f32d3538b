//! `perf script` text produced by the real tool at test time (Debian package `linux-perf`).
//!
//! `perf mem record` needs PEBS load-latency events, which virtual machines rarely expose, so
//! the test records `cpu-clock` samples with data addresses, data sources and weights
//! (`perf record -d -W --sample-cpu`): the text has exactly the layout `perf mem` produces
//! (`|OP …|LVL …|…|BLK …` with `N/A` values). The oracle is a second `perf script` run printing
//! only `tid,cpu,ip`, compared line by line with what our importer read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use memscape_samples::{ColumnData, ImportOptions, MemLevel, SampleFormat, parse_samples};

fn perf() -> Command {
    let found = Command::new("sh")
        .arg("-c")
        .arg("command -v perf")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "`perf` not found: install the Debian package `linux-perf` (apt-get install -y linux-perf)"
    );
    Command::new("perf")
}

#[test]
fn real_perf_script_output_is_read_completely() {
    let dir = std::env::temp_dir().join(format!("memscape-perf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("perf.data");
    let rec = perf()
        .args([
            "record",
            "-q",
            "-d",
            "-W",
            "--sample-cpu",
            "-e",
            "cpu-clock",
            "-c",
            "200000",
            "-o",
        ])
        .arg(&data)
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
        ])
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "perf record failed (is kernel.perf_event_paranoid ≤ 2 and perf_event_open allowed?): {}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let script = |fields: &str| -> String {
        let out = perf()
            .arg("script")
            .arg("-i")
            .arg(&data)
            .args(["-F", fields])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let full = script("comm,tid,cpu,time,event,addr,data_src,weight,ip,sym,dso");
    let oracle = script("tid,cpu,ip");
    let _ = std::fs::remove_dir_all(&dir);

    let samples = parse_samples(full.as_bytes(), "perf.txt", ImportOptions::default()).unwrap();
    assert_eq!(samples.format, SampleFormat::PerfScript);
    assert!(samples.warnings.is_empty(), "{}", samples.warnings);
    // Oracle lines: "TID [CPU] IP".
    let expected: Vec<(u64, u32, u64)> = oracle
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                w[0].parse().unwrap(),
                w[1].trim_matches(|c| c == '[' || c == ']').parse().unwrap(),
                u64::from_str_radix(w[2], 16).unwrap(),
            )
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(samples.len(), expected.len());
    let tid = match &samples.column("tid").unwrap().data {
        ColumnData::U64(v) => v.clone(),
        _ => panic!("tid is an integer column"),
    };
    let ip = match &samples.column("ip").unwrap().data {
        ColumnData::U64(v) => v.clone(),
        _ => panic!("ip is an integer column"),
    };
    for (i, &(t, c, p)) in expected.iter().enumerate() {
        assert_eq!((tid[i], samples.cpu[i], ip[i]), (t, c, p), "sample {i}");
    }
    // cpu-clock has no memory data source: every level is unknown, never a made-up level.
    assert!(samples.level.iter().all(|&l| l == MemLevel::Unknown));
}

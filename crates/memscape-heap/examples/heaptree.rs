//! `heaptree FILE [--peak | --at T | --snapshot N] [--group keys] [--metric m] [--depth D]`:
//! the JSON report of `memscape heaptree`, for scripts and the peer comparison in
//! `benches/heap/` until the memscape binary wires the subcommand.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use memscape_heap::report::{HeapTreeOptions, TimeSelect, heaptree_file};
use memscape_heap::{GroupKey, Metric};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut options = HeapTreeOptions::default();
    let bad = |msg: String| {
        eprintln!("heaptree: {msg}");
        ExitCode::from(2)
    };
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        let result: Result<(), String> = match a.as_str() {
            "--peak" => {
                options.select = TimeSelect::Peak;
                Ok(())
            }
            "--at" => value("--at").and_then(|v| {
                v.parse()
                    .map(|t| options.select = TimeSelect::At(t))
                    .map_err(|e| format!("--at {v}: {e}"))
            }),
            "--snapshot" => value("--snapshot").and_then(|v| {
                v.parse()
                    .map(|n| options.select = TimeSelect::Snapshot(n))
                    .map_err(|e| format!("--snapshot {v}: {e}"))
            }),
            "--group" => {
                value("--group").and_then(|v| GroupKey::parse_list(&v).map(|g| options.group = g))
            }
            "--metric" => value("--metric").and_then(|v| {
                Metric::parse(&v)
                    .map(|m| options.prune.metric = m)
                    .ok_or(format!("--metric {v}: expected bytes or objects"))
            }),
            "--depth" => value("--depth").and_then(|v| {
                v.parse()
                    .map(|d| options.prune.depth = d)
                    .map_err(|e| format!("--depth {v}: {e}"))
            }),
            "--json" => Ok(()),
            _ if file.is_none() => {
                file = Some(PathBuf::from(&a));
                Ok(())
            }
            _ => Err(format!("unexpected argument {a}")),
        };
        if let Err(msg) = result {
            return bad(msg);
        }
    }
    let Some(file) = file else {
        return bad(String::from("usage: heaptree FILE [options]"));
    };
    match heaptree_file(&file, &options) {
        Ok(report) => {
            // A closed pipe (`| head`) is not an error worth a panic.
            let mut out = std::io::stdout().lock();
            let _ = serde_json::to_writer_pretty(&mut out, &report);
            let _ = writeln!(out);
            ExitCode::SUCCESS
        }
        Err(e) => bad(e.to_string()),
    }
}

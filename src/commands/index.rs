//! `memscape index DATASET/`: the aggregations the views draw, computed by the query engine
//! (embedded DataFusion, or Ballista with `--engine`) over a Parquet dataset, as JSON.

use crate::cli::IndexArgs;

#[cfg(feature = "engine")]
pub use with_engine::run;

/// Without the engine feature the command exists (it is in `--help` and the README) and says
/// how to get it.
#[cfg(not(feature = "engine"))]
pub fn run(args: &IndexArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!(
        "memscape index {}: this memscape was built without the query engine; rebuild it with \
         `cargo build --release --features engine` (`--features ballista` for Ballista clusters)",
        args.dataset.display()
    )
}

#[cfg(feature = "engine")]
mod with_engine {
    use std::process::ExitCode;

    use anyhow::Context as _;
    use memscape_engine::{Engine, EngineSpec};
    use memscape_parquet::DatasetKind;
    use memscape_samples::{Metric, OffenderKey, RangeSpec};
    use serde_json::json;

    use super::IndexArgs;

    pub fn run(args: &IndexArgs) -> anyhow::Result<ExitCode> {
        let spec = EngineSpec::parse(&args.engine)?;
        let engine = Engine::connect(&spec).with_context(|| format!("--engine {}", args.engine))?;
        let dataset = engine.open(&args.dataset)?;
        let host = dataset.host(args.host.as_deref())?;
        let out = match dataset.manifest.kind {
            DatasetKind::Trace => trace(&engine, &dataset, &host, args)?,
            DatasetKind::Samples => samples(&engine, &dataset, &host, args)?,
        };
        let text = serde_json::to_string_pretty(&out)?;
        match &args.out {
            Some(path) => std::fs::write(path, text + "\n")
                .with_context(|| format!("{}: cannot write", path.display()))?,
            None => println!("{text}"),
        }
        Ok(ExitCode::SUCCESS)
    }

    fn trace(
        engine: &Engine,
        dataset: &memscape_engine::Dataset,
        host: &str,
        args: &IndexArgs,
    ) -> anyhow::Result<serde_json::Value> {
        let meta = &dataset.manifest.hosts[host].meta;
        let events = engine.event_count(dataset, Some(host))?;
        let n = args.points.max(1) as u64;
        let points: Vec<u64> = (1..=n)
            .map(|i| ((u128::from(events) * u128::from(i)) / u128::from(n)) as u64)
            .collect();
        let series = engine.heap_series(dataset, Some(host), &points)?;
        let peak_event = meta.get("peak_event").and_then(|v| v.as_u64()).unwrap_or(0);
        let has_peak = meta.get("peak_live_bytes").and_then(|v| v.as_u64()) != Some(0);
        let at = args.at_event.unwrap_or(if has_peak {
            peak_event.saturating_add(1).min(events)
        } else {
            events
        });
        let sites = engine.live_by_site(dataset, Some(host), at)?;
        let names = memscape_parquet::trace::site_names(&dataset.dir, host)?;
        let mut sites: Vec<_> = sites
            .into_iter()
            .map(|s| {
                json!({
                    "site": s.site,
                    "name": names.get(s.site as usize).cloned().unwrap_or_default(),
                    "bytes": s.bytes,
                    "blocks": s.blocks,
                })
            })
            .collect();
        sites.sort_by_key(|s| std::cmp::Reverse(s["bytes"].as_u64().unwrap_or(0)));
        // The allocation map's size-class bins over as many windows as the series has points.
        let bins = engine.bin_windows(
            dataset,
            Some(host),
            &memscape_engine::bins::BinKey::SizePow2,
            memscape_trace::metrics::TimeAxis::EventIndex,
            0,
            events,
            args.points.max(1),
        )?;
        let mut out = json!({
            "kind": "trace",
            "engine": format!("{:?}", engine.spec()),
            "host": host,
            "events": events,
            "heap_series": series,
            "live_by_site": { "events": at, "sites": sites },
            "size_class_bins": bins,
        });
        if args.lod {
            out["lod"] = lod(engine, dataset, host)?;
        }
        Ok(out)
    }

    /// The level-of-detail tiles of every level memscape-lod's builder makes (default
    /// parameters, thread colouring): what each holds.
    fn lod(
        engine: &Engine,
        dataset: &memscape_engine::Dataset,
        host: &str,
    ) -> anyhow::Result<serde_json::Value> {
        let plan = engine.lod_plan(dataset, Some(host), &memscape_lod::BuildParams::default())?;
        let mut levels = Vec::new();
        for level in &plan.levels {
            let tiles = engine.lod_level(dataset, Some(host), &plan, level)?;
            levels.push(json!({
                "line": level.line,
                "k": level.k,
                "log_tau": level.log_tau,
                "log_sig": level.log_sig,
                "blocks": tiles.blocks,
                "columns": tiles.columns.len(),
                "cells": tiles.cells.len(),
                "buckets": tiles.buckets.len(),
            }));
        }
        Ok(json!({
            "blocks": plan.blocks,
            "extent_t": plan.extent_t,
            "extent_y": plan.axis.extent,
            "regions": plan.axis.regions.len(),
            "levels": levels,
        }))
    }

    fn samples(
        engine: &Engine,
        dataset: &memscape_engine::Dataset,
        host: &str,
        args: &IndexArgs,
    ) -> anyhow::Result<serde_json::Value> {
        let selection = args
            .select
            .iter()
            .map(|s| RangeSpec::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let meta = memscape_parquet::samples::samples_meta(&dataset.dir, &dataset.manifest, host)?;
        let mut histograms = Vec::new();
        for a in &meta.attributes {
            histograms.push(engine.histogram(
                dataset,
                Some(host),
                &a.name,
                args.bins,
                &selection,
            )?);
        }
        let lines =
            engine.top_offenders(dataset, Some(host), OffenderKey::SourceLine, &selection, 20)?;
        let symbols =
            engine.top_offenders(dataset, Some(host), OffenderKey::Symbol, &selection, 20)?;
        let mut out = json!({
            "kind": "samples",
            "engine": format!("{:?}", engine.spec()),
            "host": host,
            "rows": dataset.manifest.hosts[host].rows,
            "histograms": histograms,
            "top_source_lines": lines,
            "top_symbols": symbols,
        });
        if let Some(hw) = &args.hardware {
            let topology = memscape_topology::Topology::from_file(hw)?;
            let agg = engine.resource_totals(dataset, Some(host), &topology, &selection)?;
            let resources: Vec<_> = topology
                .nodes()
                .iter()
                .map(|n| {
                    json!({
                        "node": n.id,
                        "kind": n.kind.as_str(),
                        "os_index": n.os_index,
                        "samples": agg.samples[n.id as usize],
                        "cycles": agg.cycles[n.id as usize],
                        "transfers": agg.transfers[n.id as usize],
                    })
                })
                .collect();
            let metric = Metric::parse(&args.metric).with_context(|| {
                format!("--metric {:?}: expected latency or imbalance", args.metric)
            })?;
            let kind = memscape_topology::ResourceKind::parse(&args.level)
                .with_context(|| format!("--level {:?}", args.level))?;
            let windows = engine.window_scores(
                dataset,
                Some(host),
                &topology,
                &args.along,
                args.score_windows,
                metric,
                kind,
                &selection,
            )?;
            out["resources"] = json!(resources);
            out["window_scores"] = json!({ "along": args.along, "metric": args.metric, "level": args.level, "windows": windows });
        }
        Ok(out)
    }
}

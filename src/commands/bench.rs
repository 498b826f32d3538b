//! `memscape bench`: the standard frames timed on this machine's GPU
//! ([`memscape_views::bench`]), printed as a table or JSON.

use std::process::ExitCode;

use memscape_views::bench::{BenchOptions, BenchPath};

use crate::cli::BenchArgs;

pub fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let mut options = if args.quick {
        BenchOptions::quick(scratch)
    } else {
        BenchOptions::standard(scratch)
    };
    if let Some(blocks) = &args.blocks {
        options.blocks = blocks.iter().copied().filter(|&n| n > 0).collect();
    }
    if let Some(sizes) = &args.sizes {
        options.sizes = sizes.iter().map(|&(w, h)| [w, h]).collect();
    }
    if let Some(paths) = &args.paths {
        options.paths = paths
            .iter()
            .map(|p| {
                BenchPath::parse(p).ok_or_else(|| {
                    anyhow::anyhow!("--paths {p:?}: expected raster, dense, lod or lod-gpu")
                })
            })
            .collect::<anyhow::Result<_>>()?;
    }
    if let Some(records) = &args.records {
        options.morph_records = records.iter().copied().filter(|&n| n > 0).collect();
    }
    if let Some(frames) = args.frames {
        anyhow::ensure!(frames >= 1, "--frames {frames}: at least 1");
        options.frames = frames;
    }
    if let Some((w, h)) = args.tour_size {
        options.tour_size = Some([w, h]);
    }
    if args.tour_frames.is_some() {
        options.tour_max_frames = args.tour_frames;
    }
    if args.no_tour {
        options.tour_size = None;
    }
    let ctx =
        memscape_views::render::gpu_context_timed(super::render::adapter_choice(args.adapter))?;
    let report = memscape_views::bench::run(ctx, &options, &mut |line| {
        eprintln!("bench: {line}");
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", memscape_views::bench::table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

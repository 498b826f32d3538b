//! One module per subcommand; `run` dispatches.

mod analyses;
mod bench;
mod diff;
mod export;
mod index;
mod info;
pub mod lod;
mod render;
mod tour;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use crate::cli::{Cli, Command, ViewArgs};
use memscape_views::LoadSource;

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => view(cli.view),
        Some(Command::View(args)) => view(args),
        Some(Command::Render(args)) => render::run(&args),
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Convert(args)) => info::convert(&args),
        Some(Command::Record(args)) => record(&args),
        Some(Command::Heaptree(args)) => analyses::heaptree(&args),
        Some(Command::Export(args)) => export::run(&args),
        Some(Command::Diff(args)) => diff::run(&args),
        Some(Command::Index(args)) => index::run(&args),
        Some(Command::Topology(args)) => analyses::topology(&args),
        Some(Command::Samples(args)) => analyses::samples(&args),
        Some(Command::Cluster(args)) => analyses::cluster(&args),
        Some(Command::Persistence(args)) => analyses::persistence(&args),
        Some(Command::Cycles(args)) => analyses::cycles(&args),
        Some(Command::Layout(args)) => analyses::layout(&args),
        Some(Command::Demo(args)) => demo(&args.dir),
        Some(Command::RenderTour(args)) => tour::render_tour(&args),
        Some(Command::Present(args)) => tour::present(&args),
        Some(Command::Lod(args)) => lod::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
    }
}

fn view(mut args: ViewArgs) -> anyhow::Result<ExitCode> {
    if args.live {
        return view_live(args);
    }
    // `--diff A B`: both runs first, compared in one pane once loaded.
    let compare = args.diff.len() == 2;
    if compare {
        let rest = std::mem::take(&mut args.files);
        args.files = std::mem::take(&mut args.diff);
        args.files.extend(rest);
    }
    // Directories: the datasets found in them (MemAxes' layout, a Parquet dataset, else the
    // files memscape reads), samples paired with their topology.
    let mut pairs = Vec::new();
    let mut files = Vec::new();
    for path in std::mem::take(&mut args.files) {
        if path.is_dir() && memscape_parquet::dataset_kind(&path).is_none() {
            let found = memscape_views::discover::datasets_in(&path)?;
            files.extend(found.all());
            pairs.extend(found.pairs);
        } else {
            files.push(path);
        }
    }
    // Samples opened with exactly one topology file map onto it.
    let (samples, _) = memscape_samples::pair_files(&files);
    pairs.extend(
        samples
            .into_iter()
            .filter_map(|s| Some((s.samples, s.hardware?)))
            .filter(|(_, h)| files.contains(h)),
    );
    args.files = files;
    let sources: Vec<LoadSource> = if args.files.is_empty() {
        memscape_views::demo::sources()
    } else {
        // `demo` and `demo:<key>` name the embedded files, as in every other command (a file
        // of that name in the current directory wins).
        args.files
            .into_iter()
            .map(
                |path| match memscape_views::demo::by_name(&path.to_string_lossy()) {
                    Some(demo) if !path.exists() => Ok(demo.source()),
                    None if path.to_string_lossy().starts_with("demo:") && !path.exists() => {
                        anyhow::bail!(
                            "{}: no such embedded demo file (there are {})",
                            path.display(),
                            memscape_views::demo::names()
                        )
                    }
                    _ => Ok(LoadSource::File(path)),
                },
            )
            .collect::<anyhow::Result<_>>()?
    };
    let screenshot = args
        .screenshot
        .map(|p| (p, Duration::from_secs(args.screenshot_timeout)));
    let startup = crate::app::Startup {
        compare,
        pairs,
        frame_stats: args.frame_stats,
        live: Vec::new(),
    };
    gui_outcome(crate::app::run(
        sources,
        screenshot,
        args.window_size,
        startup,
    )?)
}

/// `memscape view --live FILE_OR_RAW_DIR…`: follows recordings started elsewhere.
fn view_live(args: ViewArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !args.files.is_empty(),
        "memscape view --live: name the .msc file a `memscape record -o FILE` is writing, or a raw recording directory"
    );
    let live = args
        .files
        .into_iter()
        .map(|target| {
            memscape_views::live::follow(target.clone())
                .with_context(|| format!("{}: cannot start following it", target.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let screenshot = args
        .screenshot
        .map(|p| (p, Duration::from_secs(args.screenshot_timeout)));
    let startup = crate::app::Startup {
        live,
        frame_stats: args.frame_stats,
        ..Default::default()
    };
    gui_outcome(crate::app::run(
        Vec::new(),
        screenshot,
        args.window_size,
        startup,
    )?)
}

fn gui_outcome(outcome: Option<Result<std::path::PathBuf, String>>) -> anyhow::Result<ExitCode> {
    match outcome {
        None => Ok(ExitCode::SUCCESS),
        Some(Ok(path)) => {
            println!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Some(Err(e)) => Err(anyhow::anyhow!("screenshot failed: {e}")),
    }
}

/// Whether a window can open here (an X11 or Wayland display).
fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()))
}

/// `memscape record --live` with the GUI: the recording runs on a thread of its own (its
/// reading thread snapshots for the window), the window on this one. Closing the window does
/// not stop the program: the recording goes on to its file.
fn record_with_window(
    args: &crate::cli::RecordArgs,
    options: memscape_record::RecordOptions,
) -> anyhow::Result<memscape_record::RecordReport> {
    let name = options.output.display().to_string();
    let (sender, receiver) = memscape_views::live::channel(&name);
    let recording = std::thread::Builder::new()
        .name("memscape-record".into())
        .spawn(move || {
            let every = memscape_views::live::POLL_EVERY;
            let output = options.output.clone();
            // Both callbacks run on this thread: one at each poll, one at the end.
            let shared = std::sync::Mutex::new(sender);
            let live = || shared.lock().unwrap_or_else(|e| e.into_inner());
            let result = memscape_record::record_observed_whole(
                &options,
                every,
                &mut |f, ended| match ended {
                    false => {
                        live().offer(f);
                    }
                    true => live().ended(f),
                },
                // The last view is the trace the recording kept, as its file will load, made
                // while the file is finished (not the file read back: BENCHMARKS.md, "Live
                // view cadence, wave 23").
                &mut |trace| live().prepare_finished(trace, &output),
            );
            let sender = shared.into_inner().unwrap_or_else(|e| e.into_inner());
            match &result {
                Ok(report) => sender.finish(&report.output),
                Err(e) => sender.fail(None, e.to_string()),
            }
            result
        })
        .context("cannot start the recording thread")?;
    let screenshot = args
        .screenshot
        .clone()
        .map(|p| (p, Duration::from_secs(600)));
    let outcome = crate::app::run(
        Vec::new(),
        screenshot,
        args.window_size,
        crate::app::Startup {
            live: vec![receiver],
            ..Default::default()
        },
    );
    if !recording.is_finished() {
        eprintln!("memscape: the window closed; the recording goes on until the program ends");
    }
    let report = recording
        .join()
        .map_err(|_| anyhow::anyhow!("the recording thread panicked"))??;
    if let Some(Ok(path)) = outcome? {
        println!("{}", path.display());
    } else if args.screenshot.is_some() {
        anyhow::bail!("screenshot failed");
    }
    Ok(report)
}

fn demo(dir: &std::path::Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    // Every file with its companions (the traced binary and its source), so that e.g.
    // `cycles DIR/sort.lackey.zst --binary DIR/sort --function …` works on the written copy.
    for file in memscape_views::demo::FILES {
        let written = std::iter::once((file.file_name, file.bytes, false)).chain(
            file.companions
                .iter()
                .map(|c| (c.file_name, c.bytes, c.is_binary)),
        );
        for (name, bytes, executable) in written {
            let path = dir.join(name);
            std::fs::write(&path, bytes)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            if executable {
                memscape_views::demo::set_executable(&path)?;
            }
            println!("{}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn record(args: &crate::cli::RecordArgs) -> anyhow::Result<ExitCode> {
    let (program, rest) = args
        .command
        .split_first()
        .context("memscape record: name the program to run after --")?;
    let options = memscape_record::RecordOptions {
        output: args.output.clone(),
        stack_depth: args.stack_depth,
        no_stacks: args.no_stacks,
        program: program.clone(),
        args: rest.to_vec(),
        shim: None,
        time_resolution_log2: args.time_resolution,
    };
    let report = if args.live && !args.no_window && has_display() {
        record_with_window(args, options)?
    } else if args.live {
        if !args.no_window {
            eprintln!(
                "memscape: no display (DISPLAY/WAYLAND_DISPLAY): a live summary here instead of the window"
            );
        }
        let every = std::time::Duration::from_millis(250);
        memscape_record::record_live(&options, every, &mut |s| eprintln!("memscape: {s}"))?
    } else {
        memscape_record::record(&options)?
    };
    eprintln!(
        "memscape: recorded {} events ({} allocations, {} frees) from {} process(es) into {}{}",
        report.events,
        report.allocs,
        report.frees,
        report.processes.len(),
        report.output.display(),
        if report.interrupted {
            " (interrupted: everything up to the interrupt)"
        } else {
            ""
        }
    );
    if report.processes.len() > 1 {
        for p in &report.processes {
            eprintln!(
                "  pid {:>7} ← {:<7} {:>9} events  {:<10} {}",
                p.pid,
                p.ppid,
                p.events,
                p.end.to_string(),
                memscape_trace::process::one_line(&p.command_line)
            );
        }
    }
    for u in &report.unrecorded {
        eprintln!("warning: {u}");
    }
    // Pass the program's exit status through (128 + signal for a signal, as shells do).
    let code = match report.signal {
        Some(sig) => 128 + sig,
        None => report.exit_status,
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

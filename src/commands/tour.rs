//! `memscape render-tour` and `memscape present`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use memscape_views::tour::{self, Step};

use crate::cli::{PresentArgs, RenderTourArgs};

/// The tour's steps and the directory its relative file names are resolved against.
pub fn load_tour(
    path: Option<&Path>,
    demo: bool,
) -> anyhow::Result<(Vec<Step>, std::path::PathBuf)> {
    if demo || path.is_none() {
        return Ok((
            tour::parse(tour::DEMO_TOUR, "demo tour")?,
            std::path::PathBuf::from("."),
        ));
    }
    let path = path.context("no tour given")?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the tour", path.display()))?;
    let states = tour::parse(&text, &path.display().to_string())?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok((states, base))
}

pub fn render_tour(args: &RenderTourArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.fps > 0.0 && args.fps <= 240.0,
        "--fps {}: expected 0 < fps <= 240",
        args.fps
    );
    let (states, base) = load_tour(args.tour.as_deref(), args.demo)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create the directory", args.out.display()))?;
    let ctx = super::render::gpu_context(args.adapter)?;
    let mut renderer = tour::Renderer::new(ctx, &base, args.width, args.height);
    let expected = tour::frame_count(&states, args.fps);
    let count = tour::render_frames(
        &mut renderer,
        &states,
        args.fps,
        &mut |frame, step, image| {
            let path = args.out.join(format!("frame_{frame:05}.png"));
            image.save_png(&path)?;
            if frame % 30 == 0 {
                tracing::info!("frame {frame} of {expected} (step {})", step + 1);
            }
            Ok(())
        },
    )?;
    println!("{count} frames in {}", args.out.display());
    if args.svg {
        for (k, step) in states.iter().enumerate() {
            let path = args.out.join(format!("step_{k:02}.svg"));
            let svg = renderer.step_svg(step)?;
            std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
        }
        println!("{} step SVGs in {}", states.len(), args.out.display());
    }
    if let Some(video) = &args.video {
        let status = std::process::Command::new("ffmpeg")
            .args(["-y", "-loglevel", "error", "-framerate"])
            .arg(args.fps.to_string())
            .arg("-i")
            .arg(args.out.join("frame_%05d.png"))
            .args([
                "-pix_fmt",
                "yuv420p",
                "-vf",
                "pad=ceil(iw/2)*2:ceil(ih/2)*2",
            ])
            .arg(video)
            .status()
            .context("--video needs ffmpeg (Debian package `ffmpeg`)")?;
        anyhow::ensure!(status.success(), "ffmpeg failed ({status})");
        println!("{}", video.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn present(args: &PresentArgs) -> anyhow::Result<ExitCode> {
    let (states, base) = load_tour(args.tour.as_deref(), args.demo)?;
    let keys = args
        .keys
        .iter()
        .map(|k| crate::app::present::parse_key(k))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let outcome = crate::app::present::run(
        states,
        base,
        crate::app::present::PresentOptions {
            fps: args.fps,
            fullscreen: !args.windowed,
            keys,
            screenshot: args
                .screenshot
                .clone()
                .map(|p| (p, std::time::Duration::from_secs(args.screenshot_timeout))),
        },
    )?;
    match outcome {
        None => Ok(ExitCode::SUCCESS),
        Some(Ok(path)) => {
            println!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Some(Err(e)) => Err(anyhow::anyhow!("screenshot failed: {e}")),
    }
}

//! memscape: a native, GPU-accelerated visualizer of how programs use memory.
//!
//! The binary is thin: `cli` parses the command line, `commands` holds one module per
//! subcommand, `app` is the GUI shell (docking, loaders, the pane registry), `panes` the GUI
//! panes (interaction only). Everything a view draws — datasets, settings, pictures, tours —
//! is `memscape_views`. Only `main` imports `commands`; nothing imports `commands` or `app` back
//! (`tests/architecture.rs` checks it).

mod app;
mod cli;
mod commands;
mod panes;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    init_logging(cli.verbose);
    let outcome = commands::run(cli);
    tracing::debug!("done");
    match outcome {
        Ok(code) => code,
        // `memscape … | head` closing the pipe early is not an error.
        Err(err)
            if err
                .chain()
                .filter_map(|e| e.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(err) => {
            // Handled once, here: print the whole chain of causes.
            eprintln!("memscape: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info,wgpu_core=warn,wgpu_hal=warn,naga=warn",
        2 => "debug,wgpu_core=info,wgpu_hal=info,naga=info",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_thread_names(true)
        .init();
}

//! The end of the merge: how each process ended (its records and what the launcher saw), the
//! processes' reports, and the trace finished, or its file's last segment and footer written.

use std::time::Instant;

use memscape_trace::process::ProcessEnd;
use memscape_trace::{Trace, TraceBuilder, TraceFormat};

use super::{Converter, Image, Sink, WholeTrace};
use crate::merge::Endings;
use crate::{ProcessReport, UnrecordedProgram};

impl Converter {
    /// How each image ended and when (CLOCK_MONOTONIC ns), from the images' records and what
    /// the launcher saw, onto the processes.
    fn set_endings(&mut self, launcher: &Endings) {
        let mut reaped = std::mem::take(&mut self.reaped);
        for (&pid, r) in &launcher.reaped {
            let end = match (r.code, r.signal) {
                (Some(code), _) => ProcessEnd::Exited { code },
                (None, Some(signal)) => ProcessEnd::Signaled { signal },
                (None, None) => ProcessEnd::Unknown,
            };
            reaped.insert(pid, (end, r.at_ns));
        }
        let origin = self.origin.unwrap_or(0);
        let rel = |ns: u64| ns.saturating_sub(origin);
        for k in 0..self.images.len() {
            let image = &self.images[k];
            let pid = image.header.pid;
            let next = self
                .images
                .iter()
                .find(|o| o.header.pid == pid && o.n == image.n + 1)
                .map(|o| o.header.start_ns);
            let (end, at) =
                match next {
                    Some(next) => (ProcessEnd::Exec, Some(next)),
                    None => {
                        let mut end = image.exit.map_or(ProcessEnd::Unknown, |(_, _, code)| {
                            ProcessEnd::Exited { code }
                        });
                        let mut at = [image.exit.map(|e| e.1), image.end_record.map(|e| e.1)]
                            .into_iter()
                            .flatten()
                            .max();
                        if let Some(&(status, when)) = reaped.get(&pid) {
                            end = status;
                            at = at.or(Some(when));
                        } else if launcher.still_running.contains(&pid) {
                            end = ProcessEnd::Running;
                        }
                        (end, at)
                    }
                };
            let last = image.latest;
            let process = image.process;
            if let Some(p) = self.builder.process_mut(process) {
                p.end = end;
                p.end_ns = at.map(rel).unwrap_or(last).max(last);
            }
        }
    }

    /// Everything applied (after `advance(None)`): the images' endings, the stacks no event
    /// used, the threads' final names; returns the reports and the unrecorded programs.
    fn conclude(&mut self, launcher: &Endings) -> Vec<UnrecordedProgram> {
        // Images made by `exec` that recorded no event still replaced their predecessor.
        for i in 0..self.images.len() {
            if self.images[i].n > 0 && !self.images[i].replaced_ended {
                self.end_exec_predecessor(i, u64::MAX);
            }
        }
        self.set_endings(launcher);
        for i in 0..self.images.len() {
            // Stacks no event used still become call-tree nodes, as a whole-file merge makes
            // them (in stack id order, for a stable tree).
            let mut unused: Vec<u32> = self.images[i]
                .stacks
                .keys()
                .filter(|&&id| self.images[i].sites.get(id).is_none())
                .copied()
                .collect();
            unused.sort_unstable();
            for id in unused {
                self.site(i, id);
            }
            // Threads named after their first event keep the name they ended with.
            let image = &self.images[i];
            for (tid, &thread) in &image.threads {
                if let Some(name) = image.thread_names.get(tid) {
                    self.builder
                        .rename_thread(thread, &format!("{name} ({tid})"));
                }
            }
        }
        unrecorded_programs(&self.images)
    }

    fn reports(&self, trace: &Trace) -> Vec<ProcessReport> {
        self.images
            .iter()
            .zip(&trace.processes)
            .map(|(image, p)| ProcessReport {
                pid: image.header.pid,
                ppid: image.header.ppid,
                image: image.n,
                fork_seq: image.header.fork_seq,
                command_line: image.header.command_line.clone(),
                end: p.end,
                events: p.events,
                allocs: p.allocs,
                frees: p.frees,
                reallocs: image.reallocs,
                unknown_frees: p.unknown_frees,
                inherited_frees: p.inherited_frees,
                mmaps: image.mmaps,
                munmaps: image.munmaps,
                threads: image.tids.len() as u64,
                peak_live_bytes: p.peak_live_bytes,
            })
            .collect()
    }

    /// The whole trace (no sink): every event applied first.
    pub(crate) fn finish(
        mut self,
        launcher: &Endings,
    ) -> (Trace, Vec<ProcessReport>, Vec<UnrecordedProgram>) {
        self.advance(None);
        let unrecorded = self.conclude(launcher);
        let builder = std::mem::replace(&mut self.builder, TraceBuilder::with_event_times(""));
        let mut trace = builder.finish(TraceFormat::Msc, true);
        add_unrecorded_warnings(&mut trace, &unrecorded);
        let reports = self.reports(&trace);
        (trace, reports, unrecorded)
    }

    /// Applies the rest, writes the last segment (the live blocks) and the footer (symbolized
    /// call tree, processes, warnings) and gives the file its name. `symbolizer` has named
    /// the call tree's nodes made so far ([`Converter::symbolize_new`]): it names the rest.
    /// A [`Converter::keeping`] merge hands its whole trace, symbolized and its block times
    /// rounded as the file stores them, to `on_whole` before the footer is encoded.
    pub(crate) fn finish_into(
        mut self,
        launcher: &Endings,
        symbolizer: &mut memscape_trace::symbolize::Symbolizer,
        on_whole: Option<&mut WholeTrace<'_>>,
    ) -> std::io::Result<(Vec<ProcessReport>, Vec<UnrecordedProgram>)> {
        let phase = Instant::now();
        self.advance(None);
        let unrecorded = self.conclude(launcher);
        crate::phase_done("rest applied", phase);
        let Some(mut sink) = self.sink.take() else {
            return Err(std::io::Error::other("no output file"));
        };
        // The last segment (the live blocks) goes to the writer thread like the others, and
        // is encoded while this thread symbolizes.
        let phase = Instant::now();
        let last = self.cut(true);
        crate::phase_done("last segment drained", phase);
        // Handed over by a thread of its own: the writer may still be encoding the segment
        // before it, and this thread has the call tree to symbolize and encode meanwhile.
        let handover = match (last, sink.tx.take()) {
            (Some(last), Some(tx)) => Some(
                std::thread::Builder::new()
                    .name("msc-last-segment".into())
                    // The writer failed: its error is reported by the join below.
                    .spawn(move || drop(tx.send(last)))?,
            ),
            _ => None,
        };
        let phase = Instant::now();
        let builder = std::mem::replace(&mut self.builder, TraceBuilder::with_event_times(""));
        let mut rest = builder.finish(TraceFormat::Msc, true);
        add_unrecorded_warnings(&mut rest, &unrecorded);
        crate::phase_done("trace finished", phase);
        let phase = Instant::now();
        let _ = symbolizer.symbolize_new(&mut rest.call_tree, &mut rest.strings);
        crate::phase_done("symbolize", phase);
        // A builder that kept its blocks finished into the whole trace: handed over as the
        // file will load it (its block times rounded; the footer encodes none of them), while
        // the footer is encoded and the file written.
        if self.keeps_blocks
            && let Some(on_whole) = on_whole
        {
            let phase = Instant::now();
            memscape_trace::msc::round_times_as_stored(&mut rest, &sink.options);
            let whole = std::sync::Arc::new(rest);
            on_whole(whole.clone());
            crate::phase_done("whole trace handed over", phase);
            return self.write_rest(&whole, sink, handover, unrecorded);
        }
        self.write_rest(&rest, sink, handover, unrecorded)
    }

    /// [`Converter::finish_into`]'s end: the footer of `rest` encoded beside the writer's
    /// last segment, the segment table, the sync.
    fn write_rest(
        &self,
        rest: &Trace,
        mut sink: Sink,
        handover: Option<std::thread::JoinHandle<()>>,
        unrecorded: Vec<UnrecordedProgram>,
    ) -> std::io::Result<(Vec<ProcessReport>, Vec<UnrecordedProgram>)> {
        // Encoded while the writer may still encode the last segments.
        let phase = Instant::now();
        let footer =
            memscape_trace::msc::EncodedFooter::with_ahead(rest, &sink.options, &sink.ahead)?;
        crate::phase_done("footer encoded", phase);
        let phase = Instant::now();
        if let Some(handover) = handover {
            let _ = handover.join();
        }
        let writer = match sink.writer.take().map(|h| h.join()) {
            Some(Ok(writer)) => writer?,
            _ => return Err(std::io::Error::other("the segment writer failed")),
        };
        crate::phase_done("segments written", phase);
        let phase = Instant::now();
        let reports = self.reports(rest);
        let file = writer.finish_with(footer)?;
        crate::phase_done("footer written", phase);
        let phase = Instant::now();
        file.commit()?;
        crate::phase_done("sync", phase);
        Ok((reports, unrecorded))
    }
}

fn add_unrecorded_warnings(trace: &mut Trace, unrecorded: &[UnrecordedProgram]) {
    for u in unrecorded {
        trace.warnings.add(
            memscape_trace::warn::UNRECORDED_PROGRAM,
            memscape_trace::warn::message(memscape_trace::warn::UNRECORDED_PROGRAM),
            memscape_io::Location {
                file: u.located(),
                line: None,
                offset: None,
            },
        );
    }
}

/// The programs the images' shims saw started without the recorder, once per path (the first
/// run's pid and parent), in image order.
fn unrecorded_programs(images: &[Image]) -> Vec<UnrecordedProgram> {
    let mut out: Vec<UnrecordedProgram> = Vec::new();
    for image in images {
        let h = &image.header;
        // The name its user knows it by: argv[0] (`sh`, not the `dash` it links to).
        let argv0 = h.command_line.split(' ').next().unwrap_or_default();
        let named = if argv0.is_empty() {
            &h.executable
        } else {
            argv0
        };
        let parent = named.rsplit('/').next().unwrap_or(named).to_owned();
        for u in &image.unrecorded {
            if let Some(seen) = out.iter_mut().find(|p| p.path == u.path) {
                seen.runs += 1;
                continue;
            }
            out.push(UnrecordedProgram {
                path: u.path.clone(),
                pid: u.pid,
                started_by: parent.clone(),
                started_by_pid: h.pid,
                reason: u.reason,
                runs: 1,
            });
        }
    }
    out
}

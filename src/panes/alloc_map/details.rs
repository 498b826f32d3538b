//! The hovered or pinned block's details: address, sizes, waste, times and lifetime, thread,
//! and its call stack with symbols.

/// The hovered (or pinned) block's details: address, sizes, waste, times and lifetime, thread,
/// and its call stack with symbols (innermost first, up to 12 frames).
pub fn block_details(ui: &mut egui::Ui, trace: &memscape_trace::Trace, i: usize) {
    let b = &trace.blocks;
    let unknown = memscape_trace::model::USABLE_UNKNOWN;
    egui::Grid::new("block").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.monospace(v);
            ui.end_row();
        };
        row(
            "address",
            format!(
                "{:#x}–{:#x}",
                b.address[i],
                b.address[i].saturating_add(b.size[i])
            ),
        );
        row("size", format!("{} B", b.size[i]));
        row("requested", format!("{} B", b.requested_size[i]));
        if b.usable_size[i] == unknown {
            row("usable", "unknown".into());
            row("waste", "unknown".into());
        } else {
            let waste = b.usable_size[i].saturating_sub(b.requested_size[i]);
            row("usable", format!("{} B", b.usable_size[i]));
            row(
                "waste",
                format!(
                    "{waste} B ({:.0} %)",
                    100.0 * waste as f64 / b.usable_size[i].max(1) as f64
                ),
            );
        }
        row(
            "allocated",
            format!(
                "event {} · {:.3} ms",
                b.alloc_event[i],
                b.alloc_time_ns[i] as f64 / 1e6
            ),
        );
        let never = b.free_event[i] >= trace.meta.events;
        row(
            "freed",
            if never {
                "never (live at the end)".to_owned()
            } else {
                format!(
                    "event {} · {:.3} ms",
                    b.free_event[i],
                    b.free_time_ns[i] as f64 / 1e6
                )
            },
        );
        row(
            "lifetime",
            format!(
                "{} events · {:.3} ms",
                b.free_event[i].saturating_sub(b.alloc_event[i]),
                b.free_time_ns[i].saturating_sub(b.alloc_time_ns[i]) as f64 / 1e6
            ),
        );
        let name = trace.thread_name(b.thread[i]);
        row(
            "thread",
            if name.is_empty() {
                format!("thread {}", b.thread[i])
            } else {
                name.to_owned()
            },
        );
    });
    ui.separator();
    ui.label("call stack");
    let mut node = memscape_heap::trace_tree::allocation_site(trace, b.site[i]);
    let mut depth = 0;
    while node != 0 && depth < 12 {
        let frame = trace.describe_frame(node);
        let short = memscape_views::heap_tree::draw::short_name(&frame);
        ui.monospace(format!("#{depth} {short}"))
            .on_hover_text(frame.clone());
        node = trace
            .call_tree
            .parent
            .get(node as usize)
            .copied()
            .unwrap_or(0);
        depth += 1;
    }
    if node != 0 {
        ui.weak("…");
    }
}

//! Call sites continued over a growing call tree (`Sites::continued`, what a live recording's
//! snapshots do: only the call-tree nodes added since the last snapshot are classified by the
//! patterns and modules) against sites resolved from scratch on each snapshot: sqlite3's
//! heaptrack recording replayed into a trace builder and cut at uneven points, its call tree
//! as far as the snapshot's blocks reach, under the default rules (with detection, which finds
//! sqlite's own allocator) and under a user pattern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::data;
use memscape_trace::model::FLAG_MMAP;
use memscape_trace::sites::{SiteOptions, SiteRules, Sites};
use memscape_trace::{Trace, TraceBuilder, TraceFormat, load};

/// Every node's site and kind, and the detected wrappers, are the same.
fn assert_same_sites(a: &Sites, b: &Sites, trace: &Trace, at: &str) {
    for node in 0..trace.call_tree.len() as u32 {
        assert_eq!(
            (a.site(node), a.kind(node)),
            (b.site(node), b.kind(node)),
            "node {node}, {at}"
        );
    }
    assert_eq!(a.detected(), b.detected(), "{at}");
}

/// Heap bytes ever allocated at each node (what the heap tree's live grouping hands
/// `Sites::with_node_bytes`).
fn node_bytes(trace: &Trace) -> Vec<u64> {
    let b = &trace.blocks;
    let mut own = vec![0u64; trace.call_tree.len()];
    for i in 0..b.len() {
        if b.flags[i] & FLAG_MMAP == 0
            && let Some(slot) = own.get_mut(b.site[i] as usize)
        {
            *slot += b.requested_size[i];
        }
    }
    own
}

#[test]
fn sites_continued_over_a_growing_call_tree_equal_sites_made_whole() {
    let real = load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    let events = 400_000usize.min(real.event_order().len());
    let cuts = [1, 900, 37_000, 37_001, 150_000, 151_234, 290_000, events];
    let user = SiteOptions::with_patterns(&["^sqlite3VdbeMemGrow$", r"\+0x1"]).unwrap();
    let mut detected = 0;
    // Snapshots whose detection continued every round / summed at least one whole again.
    let (mut rounds_continued, mut rounds_redone) = (0, 0);
    for options in [SiteOptions::default(), user] {
        let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
        let (mut rules, mut rules_by_bytes): (Option<SiteRules>, Option<SiteRules>) = (None, None);
        let mut nodes = 1;
        let mut replayed = 0;
        let mut grew = 0;
        for &cut in &cuts {
            builder.replay(&real, replayed..cut);
            replayed = cut;
            let mut trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
            // The call tree as far as the blocks reach (a live recording's grows as they do).
            let reach = trace.blocks.site.iter().map(|&s| s as usize + 1).max();
            nodes = nodes.max(reach.unwrap_or(1)).min(trace.call_tree.len());
            trace.call_tree.parent.truncate(nodes);
            trace.call_tree.frames.truncate(nodes);
            let at = format!("{options:?}, cut at {cut} events, {nodes} nodes");
            let classified_before = rules.as_ref().map_or(0, SiteRules::nodes);
            grew += usize::from(classified_before > 1 && classified_before < nodes);

            let whole = Sites::new(&trace, &options);
            let mut continued = Sites::continued(&trace, &options, rules.take());
            assert_same_sites(&whole, &continued, &trace, &at);
            rules = Some(continued.take_rules());
            assert_eq!(rules.as_ref().map(SiteRules::nodes), Some(nodes), "{at}");
            let continued_rounds = rules
                .as_ref()
                .and_then(SiteRules::detection_rounds_continued);
            if classified_before > 1 {
                match continued_rounds {
                    Some(r) if r > 0 && r == whole.detected().len() + 1 => rounds_continued += 1,
                    Some(_) => rounds_redone += 1,
                    None => {}
                }
            }
            detected += whole.detected().len();

            let own = node_bytes(&trace);
            let whole = Sites::with_node_bytes(&trace, &options, own.clone());
            let mut continued =
                Sites::with_node_bytes_continued(&trace, &options, own, rules_by_bytes.take());
            assert_same_sites(&whole, &continued, &trace, &at);
            rules_by_bytes = Some(continued.take_rules());
        }
        // The call tree grew between snapshots that continued a classification.
        assert!(grew >= 3, "{grew}");
        // Another rule set's classification is not used; the result is still exact.
        let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
        let mut raw = Sites::new(&trace, &SiteOptions::innermost());
        let other = Sites::continued(&trace, &options, Some(raw.take_rules()));
        assert_same_sites(&Sites::new(&trace, &options), &other, &trace, "other rules");
    }
    // Detection took part (sqlite's allocator is found once enough bytes pass through it), its
    // rounds continued from the bytes that grew at most snapshots and summed whole again where
    // a verdict changed (the allocator found).
    assert!(detected > 0);
    assert!(rounds_continued >= 4, "{rounds_continued}");
    assert!(rounds_redone >= 1, "{rounds_redone}");
}

//! A live recording's allocation-map scene continued from the last snapshot's
//! (`alloc_map::scene_blocks`: only the new blocks laid out and coloured, the then live ones
//! patched) against the scene of the same snapshot made from scratch in the same frame:
//! sqlite3's heaptrack recording replayed into a trace builder with freeing sites and a second
//! freeing thread added, snapshotted at uneven points as a live recording is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memscape_trace::{Trace, TraceBuilder, TraceFormat};
use memscape_views::alloc_map::colors::ColorBy;
use memscape_views::alloc_map::scene::{AllocScene, SceneCarry};

/// Feeds `real`'s events `events` into `builder` as `TraceBuilder::replay` does, but every
/// third block freed from another thread (`other`) and with a freeing site (another block's
/// allocation site), so that the colourings by freeing site and by cross-thread free and the
/// legend's top freeing sites change as blocks end.
fn replay_with_free_sides(
    builder: &mut TraceBuilder,
    real: &Trace,
    events: std::ops::Range<usize>,
    other: u32,
) {
    let b = &real.blocks;
    builder.replay_with(real, events, |i| {
        let thread = if i.is_multiple_of(3) {
            other
        } else {
            b.thread[i]
        };
        (thread, b.site[(i * 7 + 3) % b.len()])
    });
}

fn assert_same_scene(continued: &AllocScene, whole: &AllocScene, what: &str) {
    assert_eq!(continued.live_frame, whole.live_frame, "{what}: frame");
    assert_eq!(continued.regions, whole.regions, "{what}: regions");
    assert_eq!(
        continued.block_region, whole.block_region,
        "{what}: block regions"
    );
    assert!(continued.blocks == whole.blocks, "{what}: blocks differ");
    assert!(
        continued.times_events == whole.times_events,
        "{what}: event times differ"
    );
    assert!(
        continued.times_wall == whole.times_wall,
        "{what}: wall times differ"
    );
    assert_eq!(continued.top_sites, whole.top_sites, "{what}: top sites");
    assert_eq!(
        continued.top_free_sites, whole.top_free_sites,
        "{what}: top free sites"
    );
    assert_eq!(
        (
            continued.max_size,
            continued.max_lifetime,
            continued.wrappers_digest
        ),
        (whole.max_size, whole.max_lifetime, whole.wrappers_digest),
        "{what}: ramps and wrappers"
    );
}

#[test]
fn a_continued_live_scene_equals_the_scene_made_from_scratch_at_every_snapshot() {
    let real = common::sqlite_recording();
    // Uneven cuts, one without new events.
    let cuts = common::uneven_cuts(&real);
    // Colourings that a freed block keeps (only new and then live blocks coloured), one whose
    // ramp grows (every block coloured again), each over the whole replay.
    for color_by in [
        ColorBy::Site,
        ColorBy::FreeSite,
        ColorBy::CrossThread,
        ColorBy::Thread,
        ColorBy::Size,
    ] {
        let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
        let other = builder.thread("freeing thread");
        let mut carry = SceneCarry::default();
        let (mut replayed, mut continued, mut layouts) = (0, 0, Vec::new());
        for &cut in &cuts {
            replay_with_free_sides(&mut builder, &real, replayed..cut, other);
            replayed = cut;
            let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
            let frame = carry.frame.clone();
            let had_blocks = carry.blocks.is_some();
            let (scene, next) = AllocScene::live(&trace, color_by, carry, true);
            carry = next;
            // From scratch: the same previous frame, no previous arrays, sweep or site rules.
            let fresh = SceneCarry {
                frame,
                ..Default::default()
            };
            let (whole, _) = AllocScene::live(&trace, color_by, fresh, true);
            let f = scene
                .live_frame
                .as_ref()
                .expect("a live snapshot has a frame");
            assert_same_scene(&scene, &whole, &format!("{color_by:?} at {cut} events"));
            continued += usize::from(had_blocks && layouts.last() == Some(&f.layout));
            layouts.push(f.layout);
        }
        // Most snapshots stayed in their frame: their arrays were continued, not made again.
        assert!(
            continued >= cuts.len() / 2,
            "{color_by:?}: {continued} of {} snapshots continued; layouts {layouts:?}",
            cuts.len()
        );
        // The regions were continued too (placed and swept whole at the first snapshot only).
        let regions = carry
            .regions
            .as_ref()
            .expect("a live scene's regions carry");
        assert_eq!(
            (regions.continued(), regions.rebuilt()),
            (cuts.len() as u64 - 1, 1),
            "{color_by:?}"
        );
        let free_sites = carry_free_sites(&builder);
        assert!(free_sites, "the replay has freeing sites");
    }
}

/// Whether the replay's blocks carry freeing sites (else the free-site paths were not tested).
fn carry_free_sites(builder: &TraceBuilder) -> bool {
    let trace = builder.clone().finish(TraceFormat::HeaptrackRaw, true);
    (0..trace.blocks.len()).any(|i| trace.blocks.free_site[i] != 0)
}

#[test]
fn a_renumbered_trace_is_laid_out_again() {
    let real = common::sqlite_recording();
    let make = |skip: usize, to: usize| {
        let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
        let other = builder.thread("freeing thread");
        replay_with_free_sides(&mut builder, &real, skip..to, other);
        builder.snapshot(TraceFormat::HeaptrackRaw, true)
    };
    // The second snapshot starts later in the recording: its blocks are other blocks at the
    // same indices (as a follower that numbered blocks differently would hand over).
    let first = make(0, 20_000);
    let second = make(500, 24_000);
    let (_, carry) = AllocScene::live(&first, ColorBy::Site, SceneCarry::default(), true);
    let frame = carry.frame.clone();
    let (scene, _) = AllocScene::live(&second, ColorBy::Site, carry, true);
    // The same frame: only the blocks' identity tells the arrays apart.
    assert_eq!(
        scene.live_frame.as_ref().map(|f| f.layout),
        frame.as_ref().map(|f| f.layout)
    );
    let fresh = SceneCarry {
        frame,
        ..Default::default()
    };
    let (whole, _) = AllocScene::live(&second, ColorBy::Site, fresh, true);
    assert_same_scene(&scene, &whole, "renumbered");
}

/// The longest lifetime when it is a block's that was live at the last snapshot and has ended
/// since, while every block live now is younger: the continued scene's maxima (kept with its
/// arrays, only the added and the then live blocks looked at) fold that block in as the
/// scene made from scratch does.
#[test]
fn a_block_ended_since_the_last_snapshot_keeps_the_longest_lifetime() {
    let mut builder = TraceBuilder::with_event_times("lifetimes");
    let thread = builder.thread("main");
    let mut line = 0u64;
    let mut event = |builder: &mut TraceBuilder, alloc: Option<u64>, free: Option<u64>| {
        line += 1;
        if let Some(address) = alloc {
            builder.alloc(line, 100 * line, address, 48, 48, thread, 0);
        }
        if let Some(address) = free {
            builder.free(line, 100 * line, address);
        }
    };
    // The old block, then short-lived ones beside it.
    event(&mut builder, Some(0x1000), None);
    for i in 0..2_000u64 {
        event(&mut builder, Some(0x2000 + 64 * (i % 8)), None);
        event(&mut builder, None, Some(0x2000 + 64 * (i % 8)));
    }
    let first = builder.snapshot(TraceFormat::HeaptrackRaw, true);
    let (_, carry) = AllocScene::live(&first, ColorBy::Site, SceneCarry::default(), true);
    // It ends; a young block stays live.
    event(&mut builder, None, Some(0x1000));
    event(&mut builder, Some(0x3000), None);
    let second = builder.snapshot(TraceFormat::HeaptrackRaw, true);
    let frame = carry.frame.clone();
    let (scene, _) = AllocScene::live(&second, ColorBy::Site, carry, true);
    assert_eq!(
        scene.live_frame.as_ref().map(|f| f.layout),
        frame.as_ref().map(|f| f.layout),
        "the second snapshot continues the first's arrays"
    );
    let fresh = SceneCarry {
        frame,
        ..Default::default()
    };
    let (whole, _) = AllocScene::live(&second, ColorBy::Site, fresh, true);
    assert_same_scene(&scene, &whole, "the old block ended");
    assert!(whole.max_lifetime >= 4_000, "{}", whole.max_lifetime);
}

/// As the GUI makes them: each snapshot's scene is held (the views show it) while the next is
/// made, and let go once that one is shown. The next snapshot then cannot take the last one's
/// arrays and makes its own from the arrays two snapshots back (`scene_blocks::Spare`: only the
/// blocks open in them and those added since copied in); every scene equals the scene of the
/// same snapshot made from scratch, and most were made that way, not copied whole.
#[test]
fn a_live_scene_continued_while_the_views_hold_the_last_equals_the_scene_from_scratch() {
    use memscape_views::alloc_map::scene_blocks::Reuse;
    let real = common::sqlite_recording();
    let events = 400_000usize.min(real.event_order().len());
    let cuts: Vec<usize> = (1..=40).map(|k| k * events / 40).collect();
    for color_by in [ColorBy::Site, ColorBy::FreeSite, ColorBy::Size] {
        let mut builder = TraceBuilder::replaying(&real, "sqlite replay");
        let other = builder.thread("freeing thread");
        let mut carry = SceneCarry::default();
        let mut shown: Option<AllocScene> = None;
        let (mut replayed, mut ways) = (0, Vec::new());
        for &cut in &cuts {
            replay_with_free_sides(&mut builder, &real, replayed..cut, other);
            replayed = cut;
            let trace = builder.snapshot(TraceFormat::HeaptrackRaw, true);
            let frame = carry.frame.clone();
            let (scene, next) = AllocScene::live(&trace, color_by, carry, true);
            carry = next;
            ways.push(carry.blocks.as_ref().map_or(Reuse::None, |b| b.reuse()));
            let fresh = SceneCarry {
                frame,
                ..Default::default()
            };
            let (whole, _) = AllocScene::live(&trace, color_by, fresh, true);
            assert_same_scene(&scene, &whole, &format!("{color_by:?} at {cut} events"));
            // The scene shown so far is let go; this one is held while the next is made.
            shown = Some(scene);
        }
        drop(shown);
        let from_spare = ways.iter().filter(|&&w| w == Reuse::FromSpare).count();
        assert!(
            !ways.contains(&Reuse::Taken),
            "{color_by:?}: the views held every last scene: {ways:?}"
        );
        // Site and free site keep an ended block's colour: every array from the spare; size
        // colours every block again (its array copied), the time arrays still from the spare.
        let wanted = if color_by == ColorBy::Size { 0 } else { 20 };
        assert!(
            from_spare >= wanted,
            "{color_by:?}: {from_spare} of {} from the spare: {ways:?}",
            cuts.len()
        );
    }
}

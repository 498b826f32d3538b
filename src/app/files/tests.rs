//! The open-file state machine with real files, the real loader and the real watcher thread:
//! a file that fails beside one that loads, a file growing while open (followed), truncated
//! while open (the data as loaded stays, a reload shows the new data or the error).

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use memscape_views::dataset::DatasetContent;

use super::*;

const HEADER: &str = "time,op,address,size\n";

/// `n` allocations (times 1..=n), none freed.
fn allocations(from: u64, n: u64) -> String {
    (from..from + n)
        .map(|i| format!("{i},alloc,{:#x},16\n", 0x1000 + i * 32))
        .collect()
}

fn blocks(files: &OpenFiles, id: FileId) -> usize {
    match files
        .get(id)
        .and_then(|f| f.dataset.as_deref())
        .map(|d| &d.content)
    {
        Some(DatasetContent::AllocTrace(t)) => t.trace.blocks.len(),
        _ => 0,
    }
}

fn fast() -> OpenFiles {
    OpenFiles::new(Duration::from_millis(20), Duration::from_millis(100), || {})
}

/// Polls until an event matches `want` (returned with all events seen), or panics after 20 s.
fn wait(files: &mut OpenFiles, want: impl Fn(&FileEvent) -> bool) -> Vec<FileEvent> {
    let start = Instant::now();
    let mut seen = Vec::new();
    loop {
        let (events, _) = files.poll(|| {});
        let found = events.iter().any(&want);
        seen.extend(events);
        if found {
            return seen;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no matching event; saw {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open for appending");
    f.write_all(text.as_bytes()).expect("append");
}

#[test]
fn classify_tells_growth_truncation_rewrite_and_loss_apart() {
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
    let t1 = t0 + Duration::from_secs(1);
    let at = |len, modified, inode| Stamp {
        len,
        modified: Some(modified),
        inode,
        file: true,
    };
    let loaded = at(100, t0, 7);
    assert_eq!(classify(loaded, &Ok(loaded)), None);
    assert_eq!(
        classify(loaded, &Ok(at(150, t1, 7))),
        Some(DiskChange::Grew { from: 100, to: 150 })
    );
    assert_eq!(
        classify(loaded, &Ok(at(40, t1, 7))),
        Some(DiskChange::Shrank { from: 100, to: 40 })
    );
    assert_eq!(
        classify(loaded, &Ok(at(100, t1, 7))),
        Some(DiskChange::Rewritten { from: 100, to: 100 })
    );
    // Renamed over (another inode), even when longer: not more of the same file.
    assert_eq!(
        classify(loaded, &Ok(at(150, t1, 8))),
        Some(DiskChange::Rewritten { from: 100, to: 150 })
    );
    assert!(matches!(
        classify(loaded, &Err("No such file".into())),
        Some(DiskChange::Vanished(_))
    ));
}

#[test]
fn a_failing_file_fails_alone_and_is_retried_when_it_grows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.csv");
    let bad = dir.path().join("bad.csv");
    std::fs::write(&good, format!("{HEADER}{}", allocations(1, 5))).expect("write");
    // A trace whose writer has not written anything yet.
    std::fs::write(&bad, "").expect("write");
    let mut files = fast();
    let g = files.open(LoadSource::File(good.clone()), || {});
    let b = files.open(LoadSource::File(bad.clone()), || {});
    let mut events = wait(&mut files, |e| *e == FileEvent::Failed(b));
    if !events.contains(&FileEvent::Opened(g)) {
        events = wait(&mut files, |e| *e == FileEvent::Opened(g));
    }
    assert!(events.contains(&FileEvent::Opened(g)));
    let Some(Status::Failed(message)) = files.get(b).map(|f| f.status.clone()) else {
        panic!("bad.csv did not fail");
    };
    // The error names the file and says what is wrong, once.
    assert!(message.contains("bad.csv"), "{message}");
    assert!(message.contains("empty"), "{message}");
    assert_eq!(files.get(g).map(|f| f.status.clone()), Some(Status::Loaded));
    assert_eq!(blocks(&files, g), 5);
    // The writer catches up: the failed file is retried by itself and now loads.
    append(&bad, &format!("{HEADER}{}", allocations(1, 3)));
    wait(&mut files, |e| *e == FileEvent::Reloaded(b));
    assert_eq!(files.get(b).map(|f| f.status.clone()), Some(Status::Loaded));
    assert_eq!(blocks(&files, b), 3);
    assert_eq!(blocks(&files, g), 5, "the other file is untouched");
}

#[test]
fn a_growing_file_is_followed_and_a_truncated_one_keeps_its_data_until_reloaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("live.csv");
    std::fs::write(&path, format!("{HEADER}{}", allocations(1, 10))).expect("write");
    let mut files = fast();
    let id = files.open(LoadSource::File(path.clone()), || {});
    wait(&mut files, |e| *e == FileEvent::Opened(id));
    assert_eq!(blocks(&files, id), 10);

    // Growth: detected by the watcher, reloaded without being asked.
    append(&path, &allocations(11, 30));
    let events = wait(&mut files, |e| *e == FileEvent::Reloaded(id));
    assert!(events.contains(&FileEvent::Changed(id)), "{events:?}");
    assert_eq!(blocks(&files, id), 40);
    let file = files.get(id).expect("open");
    assert!(file.follows >= 1);
    assert_eq!(file.change, None);

    // Truncation in the middle of a line: shown as a change, the loaded data stays.
    let len = std::fs::metadata(&path).expect("stat").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open")
        .set_len(len / 2 + 3)
        .expect("truncate");
    wait(&mut files, |e| *e == FileEvent::Changed(id));
    let file = files.get(id).expect("open");
    assert!(
        matches!(file.change, Some(DiskChange::Shrank { from, .. }) if from == len),
        "{:?}",
        file.change
    );
    assert!(
        file.change
            .as_ref()
            .is_some_and(|c| c.describe().contains("truncated"))
    );
    assert_eq!(blocks(&files, id), 40, "no reload without asking");
    // Asked: the new (shorter) data, its cut last line a warning.
    files.reload(id, || {});
    wait(&mut files, |e| *e == FileEvent::Reloaded(id));
    let now = blocks(&files, id);
    assert!(now > 0 && now < 40, "{now}");

    // Truncated to nothing: the reload fails, says why, and the data stays.
    std::fs::write(&path, "").expect("truncate");
    wait(&mut files, |e| *e == FileEvent::Changed(id));
    files.reload(id, || {});
    wait(&mut files, |e| *e == FileEvent::ReloadFailed(id));
    let file = files.get(id).expect("open");
    let error = file.reload_error.clone().unwrap_or_default();
    assert!(
        error.contains("live.csv") && error.contains("empty"),
        "{error}"
    );
    assert_eq!(file.status, Status::Loaded);
    assert_eq!(blocks(&files, id), now, "the last good data stays");
}

#[test]
fn a_deleted_file_is_reported_and_keeps_its_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gone.csv");
    std::fs::write(&path, format!("{HEADER}{}", allocations(1, 4))).expect("write");
    let mut files = fast();
    let id = files.open(LoadSource::File(path.clone()), || {});
    wait(&mut files, |e| *e == FileEvent::Opened(id));
    std::fs::remove_file(&path).expect("remove");
    wait(&mut files, |e| *e == FileEvent::Changed(id));
    let file = files.get(id).expect("open");
    assert!(matches!(file.change, Some(DiskChange::Vanished(_))));
    assert_eq!(blocks(&files, id), 4);
}

/// What the loader would make of `path` now (a live recording's snapshot, in these tests).
fn snapshot(path: &Path) -> Arc<Dataset> {
    let d = memscape_views::dataset::load(&LoadSource::File(path.to_owned()), &|_, _| {})
        .expect("the snapshot loads");
    Arc::new(d)
}

#[test]
fn a_live_recording_is_an_open_file_fed_by_its_snapshots_then_watched_once_finished() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rec.csv");
    std::fs::write(&path, format!("{HEADER}{}", allocations(1, 5))).expect("write");
    let mut files = fast();
    let id = files.open_live(path.clone());
    assert_eq!(
        files.get(id).map(|f| f.status.clone()),
        Some(Status::Loading)
    );

    // The first snapshot opens it, later ones are new data; the loader never runs.
    assert_eq!(
        files.live_data(id, snapshot(&path), false),
        Some(FileEvent::Opened(id))
    );
    assert_eq!(blocks(&files, id), 5);
    append(&path, &allocations(6, 5));
    files.reload(id, || {});
    assert!(files.loader.is_idle(), "a live file is not reloaded");
    std::thread::sleep(Duration::from_millis(100));
    let (events, _) = files.poll(|| {});
    assert!(events.is_empty(), "not watched while live: {events:?}");
    assert_eq!(
        files.live_data(id, snapshot(&path), true),
        Some(FileEvent::Reloaded(id))
    );
    assert_eq!(blocks(&files, id), 10);
    assert!(!files.get(id).expect("open").live);

    // Finished: it grows on disk (another run appending) and is followed like any file.
    append(&path, &allocations(11, 5));
    wait(&mut files, |e| *e == FileEvent::Reloaded(id));
    assert_eq!(blocks(&files, id), 15);

    // A recording that fails before its first snapshot is a failed file.
    let other = files.open_live(dir.path().join("never.msc"));
    assert_eq!(
        files.live_failed(other, "never.msc: the program could not start".into()),
        Some(FileEvent::Failed(other))
    );
    assert!(matches!(
        files.get(other).map(|f| &f.status),
        Some(Status::Failed(e)) if e.contains("could not start")
    ));
}

//! Versions 3–5: block columns decoded on first use from the kept (or mapped) file.

use super::*;

/// Loads a version-3 file held in 8-byte-aligned `words` (`len` bytes): the directory,
/// checksums, metadata, call tree and strings are checked and decoded now; each block column is
/// decoded on its first use, from these words (the compressed file, kept by the columns).
pub(super) fn from_msc_words(
    source: &str,
    words: Vec<u64>,
    len: usize,
    version: u32,
) -> Result<Trace, LoadError> {
    from_msc_storage(source, Storage::Words(words, len), version)
}

/// Where a lazily loaded file's bytes are.
pub(super) enum Storage {
    /// Read into 8-byte-aligned words (`len` bytes of them are the file).
    Words(Vec<u64>, usize),
    /// Memory-mapped (files with raw block columns, [`MscOptions::mappable`]).
    Mapped(Arc<memscape_map::Mapping>),
}

impl Storage {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Storage::Words(words, len) => bytemuck::cast_slice::<u64, u8>(words)
                .get(..*len)
                .unwrap_or_default(),
            Storage::Mapped(map) => map.bytes(),
        }
    }
}

/// Whether the start of a file (its header and directory) says that it has raw block columns
/// to map: a version-3/4 file with a block section of packing 0.
pub(super) fn wants_mapping(head: &[u8]) -> bool {
    if head.len() < HEADER
        || &head[..8] != MAGIC
        || !matches!(read_u32(head, 8), Some(VERSION | VERSION_V4 | VERSION_V3))
    {
        return false;
    }
    let n = read_u32(head, 12).unwrap_or(0).min(MAX_SECTIONS) as usize;
    (0..n).any(|i| {
        let at = HEADER + DIR_ENTRY * i;
        matches!(
            (read_u32(head, at), head.get(at + 6)),
            (Some(id), Some(&packing)) if is_mappable(id, packing)
        )
    })
}

pub(super) fn from_msc_storage(
    source: &str,
    storage: Storage,
    version: u32,
) -> Result<Trace, LoadError> {
    let bytes = storage.bytes();
    let d = Decoder::new(source, bytes, version)?;
    let (meta, n, has_event_times) = d.checked_meta()?;
    // What the lazy decoders will meet is checked now, as far as it is without decoding.
    for (section, elem_size) in [
        (id::ADDRESS, 8),
        (id::SIZE, 8),
        (id::REQUESTED, 8),
        (id::USABLE, 8),
        (id::ALLOC_EVENT, 8),
        (id::FREE_EVENT, 8),
        (id::THREAD, 4),
        (id::SITE, 4),
        (id::FLAGS, 1),
    ] {
        let s = d.need(section)?;
        if s.elem_size != elem_size
            || !matches!(s.packing, PACK_BITS | PACK_PLANES | PACK_RAW)
            || s.transform > XF_PLUS_BASE
        {
            return Err(d.corrupt(
                s,
                format!("section {section} with {elem_size}-byte elements, a known packing and transform"),
            ));
        }
    }
    // Raw block columns (all of them, times included) hold exactly their values.
    for s in d.sections.iter().filter(|s| is_mappable(s.id, s.packing)) {
        if s.count.checked_mul(u64::from(s.elem_size)) != Some(s.len as u64) || s.shift != 0 {
            return Err(d.corrupt(
                s,
                format!(
                    "{} raw values of {} bytes in section {}, unshifted",
                    s.count, s.elem_size, s.id
                ),
            ));
        }
    }
    let (call_tree, strings, threads) = d.tree_strings_threads()?;
    let warnings = restore_warnings(source, meta.warnings)?;
    let mut meta_out = meta.meta;
    meta_out.source = source.to_owned();
    meta_out.format = crate::model::TraceFormat::Msc;
    let (processes, thread_process, pools) = d.process_tables(&meta_out, threads.len())?;
    let sections = d.sections.clone();
    drop(d);
    let blocks = usize::try_from(n)
        .map_err(|_| corrupt(source, HEADER, "a block count that fits memory"))?;
    let shared = Arc::new(LazyFile {
        source: source.to_owned(),
        version,
        storage,
        sections,
        blocks,
        events: meta_out.events,
        has_event_times,
        nodes: call_tree.len(),
        thread_count: threads.len().max(1),
        optional_limits: [
            (id::PROCESS, processes.len() as u64),
            (id::FREE_SITE, call_tree.len() as u64),
            (id::FREE_THREAD, threads.len() as u64 + 1),
            (id::POOL, pools.len() as u64 + 1),
        ],
        groups: Default::default(),
    });
    /// A column decoded on first use, or, where the file is mapped and the column raw, borrowed
    /// from the mapping once `check` has found it usable as it is (`check` returns the
    /// repaired values of a column that is not: only a forged file has one).
    pub(super) fn lazy<T: bytemuck::Pod + Default + Send + Sync + 'static>(
        shared: &Arc<LazyFile>,
        name: &'static str,
        section: u32,
        check: fn(&LazyFile, &[T]) -> Option<Vec<T>>,
        decode: fn(&LazyFile) -> Result<Vec<T>, LoadError>,
    ) -> Column<T> {
        let shared = Arc::clone(shared);
        Column::lazy_values(move || {
            if let Some(mapped) = shared.mapped::<T>(section) {
                return match check(&shared, &mapped) {
                    None => Values::Mapped(mapped),
                    Some(repaired) => {
                        tracing::warn!(
                            "{}: the {name} column breaks what the views rely on; repaired",
                            shared.source
                        );
                        Values::Owned(repaired)
                    }
                };
            }
            Values::Owned(match decode(&shared) {
                Ok(values) => values,
                Err(e) => {
                    // Only a forged file gets here (its checksums matched): zeros keep every
                    // invariant the views rely on.
                    tracing::warn!("{e}; the {name} column reads as zeros");
                    vec![T::default(); shared.blocks]
                }
            })
        })
    }
    pub(super) fn any<T>(_: &LazyFile, _: &[T]) -> Option<Vec<T>> {
        None
    }
    let blocks = BlockColumns {
        address: lazy(&shared, "address", id::ADDRESS, any, |f| {
            f.decoder().numeric(id::ADDRESS, None)
        }),
        size: lazy(&shared, "size", id::SIZE, any, |f| {
            f.grouped(SIZES, id::SIZE)
        }),
        requested_size: lazy(&shared, "requested size", id::REQUESTED, any, |f| {
            f.grouped(SIZES, id::REQUESTED)
        }),
        usable_size: lazy(&shared, "usable size", id::USABLE, any, |f| {
            f.grouped(SIZES, id::USABLE)
        }),
        alloc_time_ns: lazy(&shared, "alloc time", id::ALLOC_TIME, any, |f| {
            f.grouped(TIMES, id::ALLOC_TIME)
        }),
        free_time_ns: lazy(
            &shared,
            "free time",
            id::FREE_TIME,
            LazyFile::check_free_times,
            LazyFile::free_times_or_alloc,
        ),
        alloc_event: lazy(
            &shared,
            "alloc event",
            id::ALLOC_EVENT,
            LazyFile::check_alloc_events,
            |f| f.grouped(EVENTS, id::ALLOC_EVENT),
        ),
        free_event: lazy(
            &shared,
            "free event",
            id::FREE_EVENT,
            LazyFile::check_free_events,
            LazyFile::free_events_or_alloc,
        ),
        thread: lazy(
            &shared,
            "thread",
            id::THREAD,
            |f, t| below(t, f.thread_count as u64),
            LazyFile::thread,
        ),
        site: lazy(
            &shared,
            "site",
            id::SITE,
            |f, s| below(s, f.nodes as u64),
            LazyFile::site,
        ),
        flags: lazy(&shared, "flags", id::FLAGS, any, |f| {
            f.decoder().numeric(id::FLAGS, None)
        }),
        process: lazy(
            &shared,
            "process",
            id::PROCESS,
            |f, v| below(v, f.limit(id::PROCESS)),
            |f| f.optional(id::PROCESS),
        ),
        free_site: lazy(
            &shared,
            "free site",
            id::FREE_SITE,
            |f, v| below(v, f.limit(id::FREE_SITE)),
            |f| f.optional(id::FREE_SITE),
        ),
        free_thread: lazy(
            &shared,
            "free thread",
            id::FREE_THREAD,
            |f, v| below(v, f.limit(id::FREE_THREAD)),
            |f| f.optional(id::FREE_THREAD),
        ),
        pool: lazy(
            &shared,
            "pool",
            id::POOL,
            |f, v| below(v, f.limit(id::POOL)),
            |f| f.optional(id::POOL),
        ),
    };
    Ok(Trace {
        meta: meta_out,
        blocks,
        strings,
        call_tree,
        threads,
        thread_process,
        processes,
        pools,
        warnings,
        event_order_cache: Default::default(),
    })
}

/// A version-3 file after its checks, kept by its lazily decoded block columns. Decoders
/// repair what the eager checks could not see (event indices beyond the event count, frees
/// before allocs, unknown sites or threads) instead of failing: a file whose checksums match
/// was written so, or forged.
pub(super) struct LazyFile {
    pub(super) source: String,
    pub(super) version: u32,
    pub(super) storage: Storage,
    pub(super) sections: Vec<Section>,
    pub(super) blocks: usize,
    pub(super) events: u64,
    pub(super) has_event_times: bool,
    pub(super) nodes: usize,
    pub(super) thread_count: usize,
    /// (section, exclusive limit of its values) of the optional block sections (version 5).
    pub(super) optional_limits: [(u32, u64); 4],
    /// Per group of columns decoded together ([`SIZES`], [`EVENTS`], [`TIMES`]): the columns
    /// already asked for, and the ones decoded on the way and not asked for yet.
    pub(super) groups: [Mutex<Group>; 3],
}

/// Requested size, size (requested + code) and usable size (size + code).
pub(super) const SIZES: usize = 0;
/// Alloc event and free event (alloc + code).
pub(super) const EVENTS: usize = 1;
/// Alloc and free times (both gathered from the event times).
pub(super) const TIMES: usize = 2;

#[derive(Default)]
pub(super) struct Group {
    /// Bit `1 << id` for every section whose column has asked for its values.
    pub(super) asked: u64,
    /// Values decoded on the way, waiting for their column.
    pub(super) kept: Vec<(u32, Vec<u64>)>,
}

impl LazyFile {
    pub(super) fn decoder(&self) -> Decoder<'_> {
        Decoder {
            source: &self.source,
            bytes: self.storage.bytes(),
            sections: self.sections.clone(),
            version: self.version,
        }
    }

    /// The values of a raw block section of a mapped file, borrowed from the mapping; `None`
    /// when the file is not mapped or the section is not raw.
    pub(super) fn mapped<T: bytemuck::Pod>(
        &self,
        section: u32,
    ) -> Option<memscape_map::MappedSlice<T>> {
        let Storage::Mapped(map) = &self.storage else {
            return None;
        };
        let s = self.sections.iter().find(|s| s.id == section)?;
        if !is_mappable(s.id, s.packing)
            || s.transform != XF_NONE
            || s.shift != 0
            || usize::from(s.elem_size) != std::mem::size_of::<T>()
            || s.count != self.blocks as u64
        {
            return None;
        }
        memscape_map::MappedSlice::new(Arc::clone(map), s.offset, self.blocks)
    }

    /// Alloc events of a block at most the event count.
    pub(super) fn check_alloc_events(&self, alloc: &[u64]) -> Option<Vec<u64>> {
        let events = self.events;
        let bad = alloc.iter().fold(false, |bad, &a| bad | (a > events));
        bad.then(|| alloc.iter().map(|&a| a.min(events)).collect())
    }

    /// Free events between the block's alloc event and the event count.
    pub(super) fn check_free_events(&self, free: &[u64]) -> Option<Vec<u64>> {
        let events = self.events;
        let decoded;
        let mapped = self.mapped::<u64>(id::ALLOC_EVENT);
        let alloc: &[u64] = match &mapped {
            Some(m) => m,
            None => {
                decoded = self.grouped(EVENTS, id::ALLOC_EVENT).unwrap_or_default();
                &decoded
            }
        };
        let bad = alloc.len() != free.len()
            || free.iter().zip(alloc).fold(false, |bad, (&f, &a)| {
                bad | (f > events) | (f < a.min(events))
            });
        bad.then(|| {
            free.iter()
                .enumerate()
                .map(|(i, &f)| f.clamp(alloc.get(i).map_or(0, |&a| a.min(events)), events))
                .collect()
        })
    }

    /// The free events, or where their section cannot be decoded (a forged directory entry)
    /// the alloc events as the alloc column reads them (mapped or decoded): zeros would end
    /// blocks before they start.
    pub(super) fn free_events_or_alloc(&self) -> Result<Vec<u64>, LoadError> {
        self.grouped(EVENTS, id::FREE_EVENT).or_else(|e| {
            tracing::warn!("{e}; the free event column reads as the alloc events");
            let events = self.events;
            Ok(match self.mapped::<u64>(id::ALLOC_EVENT) {
                Some(m) => m.iter().map(|&a| a.min(events)).collect(),
                None => self
                    .grouped(EVENTS, id::ALLOC_EVENT)
                    .unwrap_or_else(|_| vec![0; self.blocks]),
            })
        })
    }

    /// The free times, or where their section cannot be decoded the alloc times as the alloc
    /// column reads them (see `free_events_or_alloc`).
    pub(super) fn free_times_or_alloc(&self) -> Result<Vec<u64>, LoadError> {
        self.grouped(TIMES, id::FREE_TIME).or_else(|e| {
            tracing::warn!("{e}; the free time column reads as the alloc times");
            Ok(match self.mapped::<u64>(id::ALLOC_TIME) {
                Some(m) => m.to_vec(),
                None => self
                    .grouped(TIMES, id::ALLOC_TIME)
                    .unwrap_or_else(|_| vec![0; self.blocks]),
            })
        })
    }

    /// Free times not before the block's alloc time.
    pub(super) fn check_free_times(&self, free: &[u64]) -> Option<Vec<u64>> {
        let decoded;
        let mapped = self.mapped::<u64>(id::ALLOC_TIME);
        let alloc: &[u64] = match &mapped {
            Some(m) => m,
            None => {
                decoded = self.grouped(TIMES, id::ALLOC_TIME).unwrap_or_default();
                &decoded
            }
        };
        let bad = alloc.len() != free.len()
            || free
                .iter()
                .zip(alloc)
                .fold(false, |bad, (&f, &a)| bad | (f < a));
        bad.then(|| {
            free.iter()
                .enumerate()
                .map(|(i, &f)| f.max(alloc.get(i).copied().unwrap_or(0)))
                .collect()
        })
    }

    /// The values of `section` of a group: kept from an earlier decoding of the group, or
    /// decoded now with what it needs; what was decoded on the way and not yet asked for is
    /// kept for its column (so that size, requested and usable sizes, say, decode once).
    pub(super) fn grouped(&self, group: usize, section: u32) -> Result<Vec<u64>, LoadError> {
        let Some(lock) = self.groups.get(group) else {
            return Err(corrupt(&self.source, HEADER, "a known column group"));
        };
        let mut g = lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.asked |= 1 << (section % 64);
        if let Some(at) = g.kept.iter().position(|(id, _)| *id == section) {
            return Ok(g.kept.swap_remove(at).1);
        }
        let decoded = match group {
            SIZES => self.sizes(section)?,
            EVENTS => {
                let (alloc, free) = self.events()?;
                vec![(id::ALLOC_EVENT, alloc), (id::FREE_EVENT, free)]
            }
            _ => {
                let (alloc_event, free_event) = self.events()?;
                let (alloc, free) = self.times(&alloc_event, &free_event)?;
                // The events were decoded on the way: kept for their columns if not read yet
                // (the events group never waits on this one, so the two locks cannot deadlock).
                if let Some(events) = self.groups.get(EVENTS) {
                    let mut e = events
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    for (id, values) in
                        [(id::ALLOC_EVENT, alloc_event), (id::FREE_EVENT, free_event)]
                    {
                        if e.asked & (1 << id) == 0 && e.kept.iter().all(|(k, _)| *k != id) {
                            e.kept.push((id, values));
                        }
                    }
                }
                vec![(id::ALLOC_TIME, alloc), (id::FREE_TIME, free)]
            }
        };
        let mut mine = None;
        for (id, values) in decoded {
            if id == section {
                mine = Some(values);
            } else if g.asked & (1 << (id % 64)) == 0 {
                g.kept.push((id, values));
            }
        }
        mine.ok_or_else(|| corrupt(&self.source, HEADER, format!("a section with id {section}")))
    }

    /// `section` (requested, size or usable size) and the sizes it is stored relative to.
    pub(super) fn sizes(&self, section: u32) -> Result<Vec<(u32, Vec<u64>)>, LoadError> {
        let d = self.decoder();
        let based =
            |s: u32| -> Result<bool, LoadError> { Ok(d.need(s)?.transform == XF_PLUS_BASE) };
        let need_size = section == id::SIZE || (section == id::USABLE && based(id::USABLE)?);
        let need_requested = section == id::REQUESTED || (need_size && based(id::SIZE)?);
        let requested = match need_requested {
            true => Some(d.numeric::<u64>(id::REQUESTED, None)?),
            false => None,
        };
        let size = match need_size {
            true => Some(d.numeric::<u64>(id::SIZE, requested.as_deref())?),
            false => None,
        };
        let usable = match section == id::USABLE {
            true => Some(d.numeric::<u64>(id::USABLE, size.as_deref())?),
            false => None,
        };
        Ok([
            (id::REQUESTED, requested),
            (id::SIZE, size),
            (id::USABLE, usable),
        ]
        .into_iter()
        .filter_map(|(id, values)| Some((id, values?)))
        .collect())
    }

    /// Alloc and free events, clamped so that `alloc <= free <= events`.
    pub(super) fn events(&self) -> Result<(Vec<u64>, Vec<u64>), LoadError> {
        let d = self.decoder();
        let mut alloc = d.numeric::<u64>(id::ALLOC_EVENT, None)?;
        let base = (d.need(id::FREE_EVENT)?.transform == XF_PLUS_BASE).then_some(alloc.as_slice());
        let mut free = d.numeric::<u64>(id::FREE_EVENT, base)?;
        let events = self.events;
        for (a, f) in alloc.iter_mut().zip(&mut free) {
            *a = (*a).min(events);
            *f = (*f).clamp(*a, events);
        }
        Ok((alloc, free))
    }

    /// Block times: from the event times when the file has them, else from the per-block
    /// sections; a free time is never before its alloc time.
    pub(super) fn times(
        &self,
        alloc_event: &[u64],
        free_event: &[u64],
    ) -> Result<(Vec<u64>, Vec<u64>), LoadError> {
        let d = self.decoder();
        if self.has_event_times {
            let times = if d.need(id::EVENT_TIME)?.packing == PACK_CONTEXT {
                // Contexts: the event order and the blocks' call sites.
                let order = crate::ppm::event_order(alloc_event, free_event, self.events);
                let site = self.site()?;
                let contexts = crate::ppm::EventTimeContexts {
                    order: &order,
                    site: &site,
                    // The decoder takes the model from the section's first byte.
                    model: crate::ppm::MODEL_EVENT_TIMES,
                };
                d.numeric_ctx::<u64>(id::EVENT_TIME, None, Some(&contexts))?
            } else {
                d.numeric::<u64>(id::EVENT_TIME, None)?
            };
            let time_of = |e: u64| {
                usize::try_from(e)
                    .ok()
                    .and_then(|e| times.get(e).copied())
                    .unwrap_or(0)
            };
            let alloc: Vec<u64> = alloc_event.iter().map(|&e| time_of(e)).collect();
            let free = free_event
                .iter()
                .zip(&alloc)
                .map(|(&e, &at)| time_of(e).max(at))
                .collect();
            Ok((alloc, free))
        } else {
            let alloc = d.numeric::<u64>(id::ALLOC_TIME, None)?;
            let base =
                (d.need(id::FREE_TIME)?.transform == XF_PLUS_BASE).then_some(alloc.as_slice());
            let mut free = d.numeric::<u64>(id::FREE_TIME, base)?;
            for (f, &a) in free.iter_mut().zip(&alloc) {
                *f = (*f).max(a);
            }
            Ok((alloc, free))
        }
    }

    pub(super) fn thread(&self) -> Result<Vec<u32>, LoadError> {
        let mut thread = self.decoder().numeric::<u32>(id::THREAD, None)?;
        for t in &mut thread {
            if *t as usize >= self.thread_count {
                *t = 0;
            }
        }
        Ok(thread)
    }

    /// The exclusive limit of an optional section's values.
    pub(super) fn limit(&self, section: u32) -> u64 {
        self.optional_limits
            .iter()
            .find(|(s, _)| *s == section)
            .map_or(1, |&(_, limit)| limit)
    }

    /// An optional block section (version 5): zeros when absent, values past its limit zeroed.
    pub(super) fn optional(&self, section: u32) -> Result<Vec<u32>, LoadError> {
        if !self.sections.iter().any(|s| s.id == section) {
            return Ok(vec![0; self.blocks]);
        }
        let values = self.decoder().numeric::<u32>(section, None)?;
        let limit = self.limit(section);
        Ok(below(&values, limit).unwrap_or(values))
    }

    pub(super) fn site(&self) -> Result<Vec<u32>, LoadError> {
        let mut site = self.decoder().numeric::<u32>(id::SITE, None)?;
        for s in &mut site {
            if *s as usize >= self.nodes {
                *s = crate::model::NO_SITE;
            }
        }
        Ok(site)
    }
}

/// `None` when every value is below `limit`; else the values with those at or above it set to
/// 0 (the "none" thread or call site).
pub(super) fn below<T: Copy + Into<u64> + Default>(values: &[T], limit: u64) -> Option<Vec<T>> {
    let bad = values
        .iter()
        .fold(false, |bad, &v| bad | (v.into() >= limit));
    bad.then(|| {
        values
            .iter()
            .map(|&v| if v.into() < limit { v } else { T::default() })
            .collect()
    })
}

/// The result of a decoding thread (a panic, which would be a bug, becomes an error).
pub(super) fn joined<T>(
    source: &str,
    r: std::thread::Result<Result<T, LoadError>>,
) -> Result<T, LoadError> {
    r.unwrap_or_else(|_| Err(corrupt(source, HEADER, "a decodable block column")))
}

/// Rebuilds the warning summary: the kept locations, then the rest of the count by doubling
/// (`Warnings` only counts up one at a time; merging a copy into itself doubles it), so a
/// count of a billion costs 30 merges, not a billion additions.
pub(super) fn restore_warnings(
    source: &str,
    records: Vec<WarningRecord>,
) -> Result<Warnings, LoadError> {
    let mut warnings = Warnings::new();
    for w in records {
        let Some(kind) = warn::static_kind(&w.kind) else {
            return Err(corrupt(
                source,
                HEADER,
                format!("a known warning kind, found {:?}", w.kind),
            ));
        };
        if w.count > MAX_RESTORED_WARNINGS || (w.first.len() as u64) > w.count {
            return Err(corrupt(source, HEADER, "a plausible warning count"));
        }
        let mut this = Warnings::new();
        for (file, line, offset) in w.first {
            this.add(kind, warn::message(kind), Location { file, line, offset });
        }
        let kept = this.kinds().first().map_or(0, |k: &WarningKind| k.count);
        let rest = w.count - kept;
        if rest > 0 {
            let mut one = Warnings::new();
            one.add(kind, warn::message(kind), Location::offset(source, 0));
            let mut extra = Warnings::new();
            for bit in (0..64 - rest.leading_zeros()).rev() {
                extra.merge(extra.clone());
                if rest >> bit & 1 == 1 {
                    extra.merge(one.clone());
                }
            }
            this.merge(extra);
        }
        warnings.merge(this);
    }
    Ok(warnings)
}

//! Whole-file decoding (version 2) and the tables every version decodes at load: call tree,
//! strings and thread names.

use super::*;

impl<'a> Decoder<'a> {
    /// Decodes every column now (version 2).
    pub(super) fn decode(&self) -> Result<Trace, LoadError> {
        let source = self.source;
        let (meta, _, has_event_times) = self.checked_meta()?;
        let events = meta.meta.events;
        type Res<T> = Result<T, LoadError>;
        let (address, sizes, events_times, rest) = std::thread::scope(|scope| {
            let address = scope.spawn(|| self.numeric::<u64>(id::ADDRESS, None));
            let sizes = scope.spawn(|| -> Res<(Vec<u64>, Vec<u64>, Vec<u64>)> {
                let requested = self.numeric::<u64>(id::REQUESTED, None)?;
                let size = self.numeric::<u64>(id::SIZE, Some(&requested))?;
                let usable = self.numeric::<u64>(id::USABLE, Some(&size))?;
                Ok((requested, size, usable))
            });
            let times = scope.spawn(|| -> Res<Option<Vec<u64>>> {
                if has_event_times {
                    Ok(Some(self.numeric::<u64>(id::EVENT_TIME, None)?))
                } else {
                    Ok(None)
                }
            });
            // Events, then the block times: gathered from the event times, or decoded. Blocks
            // must end after they start, in events and in time (views subtract them).
            let not_ordered = || {
                corrupt(
                    source,
                    HEADER,
                    "blocks freed after they were allocated (events and times)",
                )
            };
            let event_cols = scope.spawn(move || -> Res<[Vec<u64>; 4]> {
                let alloc_event = self.numeric::<u64>(id::ALLOC_EVENT, None)?;
                let free_event = self.numeric::<u64>(id::FREE_EVENT, Some(&alloc_event))?;
                let (alloc_time, free_time) = match joined(source, times.join())? {
                    Some(times) => {
                        let bad_event =
                            || corrupt(source, HEADER, "event indices below the event count");
                        let time_of = |e: u64| {
                            usize::try_from(e)
                                .ok()
                                .and_then(|e| times.get(e).copied())
                                .ok_or_else(bad_event)
                        };
                        let mut alloc_time = Vec::with_capacity(alloc_event.len());
                        for &e in &alloc_event {
                            alloc_time.push(time_of(e)?);
                        }
                        // Free times, checking on the way that blocks end after they start.
                        let mut free_time = Vec::with_capacity(free_event.len());
                        for ((&fe, &ae), &at) in
                            free_event.iter().zip(&alloc_event).zip(&alloc_time)
                        {
                            let ft = time_of(fe)?;
                            if fe < ae || ft < at {
                                return Err(not_ordered());
                            }
                            free_time.push(ft);
                        }
                        (alloc_time, free_time)
                    }
                    None => {
                        let alloc_time = self.numeric::<u64>(id::ALLOC_TIME, None)?;
                        let free_time = self.numeric::<u64>(id::FREE_TIME, Some(&alloc_time))?;
                        if alloc_event.iter().chain(&free_event).any(|&e| e > events) {
                            return Err(corrupt(
                                source,
                                HEADER,
                                "event indices below the event count",
                            ));
                        }
                        let ordered = alloc_event
                            .iter()
                            .zip(&free_event)
                            .zip(alloc_time.iter().zip(&free_time))
                            .all(|((ae, fe), (at, ft))| ae <= fe && at <= ft);
                        if !ordered {
                            return Err(not_ordered());
                        }
                        (alloc_time, free_time)
                    }
                };
                Ok([alloc_event, free_event, alloc_time, free_time])
            });
            let rest = self.small_columns();
            (
                joined(source, address.join()),
                joined(source, sizes.join()),
                joined(source, event_cols.join()),
                rest,
            )
        });
        let address = address?;
        let (requested_size, size, usable_size) = sizes?;
        let [alloc_event, free_event, alloc_time_ns, free_time_ns] = events_times?;
        let (thread, site, flags, tree, strings, threads) = rest?;
        let blocks = BlockColumns::from(BlockVecs {
            address,
            size,
            requested_size,
            usable_size,
            alloc_time_ns,
            free_time_ns,
            alloc_event,
            free_event,
            thread,
            site,
            flags,
        });
        if !blocks.is_consistent() {
            return Err(corrupt(source, HEADER, "block columns of equal length"));
        }
        let warnings = restore_warnings(source, meta.warnings)?;
        let mut meta_out = meta.meta;
        meta_out.source = source.to_owned();
        meta_out.format = crate::model::TraceFormat::Msc;
        let (processes, thread_process, pools) = self.process_tables(&meta_out, threads.len())?;
        Ok(Trace {
            meta: meta_out,
            blocks,
            strings,
            call_tree: tree,
            threads,
            thread_process,
            processes,
            pools,
            warnings,
            event_order_cache: Default::default(),
        })
    }

    #[allow(clippy::type_complexity)]
    /// The process table, each thread's process and the pools (version 5; one process made
    /// from the metadata, and no pools, before), checked against each other.
    pub(super) fn process_tables(
        &self,
        meta: &TraceMeta,
        threads: usize,
    ) -> Result<(Vec<Process>, Vec<u32>, Vec<Pool>), LoadError> {
        let source = self.source;
        let processes: Vec<Process> = match self.find(id::PROCESSES) {
            Some(_) => serde_json::from_slice(&self.byte_section(id::PROCESSES)?)
                .map_err(|e| corrupt(source, HEADER, format!("process table JSON ({e})")))?,
            None => Vec::new(),
        };
        let processes = if processes.is_empty() {
            vec![Process::from_meta(meta)]
        } else {
            processes
        };
        let thread_process = match self.find(id::THREAD_PROCESS) {
            Some(_) => self.numeric::<u32>(id::THREAD_PROCESS, None)?,
            None => vec![0; threads],
        };
        if thread_process.len() != threads
            || thread_process
                .iter()
                .any(|&p| p as usize >= processes.len())
        {
            return Err(corrupt(
                source,
                HEADER,
                "one process that exists per thread",
            ));
        }
        let pools: Vec<Pool> = match self.find(id::POOLS) {
            Some(_) => serde_json::from_slice(&self.byte_section(id::POOLS)?)
                .map_err(|e| corrupt(source, HEADER, format!("pool table JSON ({e})")))?,
            None => Vec::new(),
        };
        if pools
            .iter()
            .any(|p| p.process as usize >= processes.len() || p.start > p.end)
        {
            return Err(corrupt(
                source,
                HEADER,
                "pools of processes that exist, each range start ≤ end",
            ));
        }
        Ok((processes, thread_process, pools))
    }

    /// Thread, site and flag columns, the call tree, strings and thread names, all checked
    /// against each other.
    #[allow(clippy::type_complexity)]
    pub(super) fn small_columns(
        &self,
    ) -> Result<(Vec<u32>, Vec<u32>, Vec<u8>, CallTree, Strings, Vec<u32>), LoadError> {
        let source = self.source;
        let thread = self.numeric::<u32>(id::THREAD, None)?;
        let site = self.numeric::<u32>(id::SITE, None)?;
        let flags = self.numeric::<u8>(id::FLAGS, None)?;
        let (tree, strings, threads) = self.tree_strings_threads()?;
        let nodes = tree.len();
        let thread_count = threads.len().max(1);
        if site.iter().any(|&s| s as usize >= nodes)
            || thread.iter().any(|&t| t as usize >= thread_count)
        {
            return Err(corrupt(
                source,
                HEADER,
                "block sites and threads that exist",
            ));
        }
        Ok((thread, site, flags, tree, strings, threads))
    }

    /// The call tree, strings and thread names, checked against each other.
    pub(super) fn tree_strings_threads(&self) -> Result<(CallTree, Strings, Vec<u32>), LoadError> {
        let source = self.source;
        let parent = self.numeric::<u32>(id::TREE_PARENT, None)?;
        let ips = self.numeric::<u64>(id::TREE_IP, None)?;
        let function = self.numeric::<u32>(id::TREE_FUNCTION, None)?;
        let file = self.numeric::<u32>(id::TREE_FILE, None)?;
        let line = self.numeric::<u32>(id::TREE_LINE, None)?;
        let module = self.numeric::<u32>(id::TREE_MODULE, None)?;
        let module_offset = self.numeric::<u64>(id::TREE_MODULE_OFFSET, None)?;
        let nodes = parent.len();
        if nodes == 0
            || [
                ips.len(),
                function.len(),
                file.len(),
                line.len(),
                module.len(),
                module_offset.len(),
            ]
            .iter()
            .any(|&l| l != nodes)
        {
            return Err(corrupt(
                source,
                HEADER,
                "call-tree columns of equal, non-zero length",
            ));
        }
        if parent
            .iter()
            .enumerate()
            .skip(1)
            .any(|(n, &p)| p as usize >= n)
        {
            return Err(corrupt(
                source,
                HEADER,
                "call-tree parents numbered before their children",
            ));
        }
        let string_bytes = self.byte_section(id::STRING_BYTES)?;
        let string_ends = self.numeric::<u64>(id::STRING_ENDS, None)?;
        let mut strings = Vec::with_capacity(string_ends.len());
        let mut start = 0usize;
        for &end in &string_ends {
            let end = usize::try_from(end).unwrap_or(usize::MAX);
            let Some(s) = string_bytes.get(start..end) else {
                return Err(corrupt(
                    source,
                    HEADER,
                    "string offsets inside the string section",
                ));
            };
            let Ok(s) = std::str::from_utf8(s) else {
                return Err(corrupt(source, HEADER, "UTF-8 strings"));
            };
            strings.push(s.to_owned());
            start = end;
        }
        if strings.first().is_none_or(|s| !s.is_empty()) {
            return Err(corrupt(source, HEADER, "the empty string as string 0"));
        }
        let string_count = strings.len();
        let threads = self.numeric::<u32>(id::THREADS, None)?;
        let str_ok = |id: &u32| (*id as usize) < string_count;
        if !(function.iter().all(str_ok)
            && file.iter().all(str_ok)
            && module.iter().all(str_ok)
            && threads.iter().all(str_ok))
        {
            return Err(corrupt(source, HEADER, "string ids below the string count"));
        }
        let frames = (0..nodes)
            .map(|n| Frame {
                ip: ips[n],
                function: function[n],
                file: file[n],
                line: line[n],
                module: module[n],
                module_offset: module_offset[n],
            })
            .collect();
        Ok((
            CallTree::from_columns(parent, frames),
            Strings::from_vec(strings),
            threads,
        ))
    }
}

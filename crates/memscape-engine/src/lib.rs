//! The heavy aggregations behind memscape's views, run by Apache DataFusion over the Parquet
//! datasets of `memscape-parquet` (partitioned by host, process and time window): embedded in
//! the process by default, or on a Ballista cluster (`ballista://HOST:PORT`) with the same
//! logical plans. This is the only crate that depends on DataFusion.
//!
//! What runs on the engine is the scan, filter and group-by over every row; what is small and
//! topological (mapping a few hundred distinct (cpu, level, node) keys onto a hardware tree,
//! scoring a window from its per-resource totals) runs natively on the result, with the same
//! code as the native path (`memscape-samples`), so both paths give equal answers.
//!
//! Entry points: [`Engine::embedded`], [`Engine::connect`], [`Engine::open`], then
//! [`trace`]'s and [`samples`]'s queries on the [`Dataset`].

pub mod bins;
pub mod clusters;
pub mod heap;
pub mod heap_kept;
pub mod lod;
pub mod lod_index;
mod ranks;
pub mod samples;
pub mod trace;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::DataType;
use datafusion::prelude::{DataFrame, ParquetReadOptions, SessionConfig, SessionContext};
use memscape_parquet::{DatasetKind, Manifest};

/// Errors of the engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Parquet(#[from] memscape_parquet::ParquetError),
    #[error("query engine: {0}")]
    DataFusion(#[from] datafusion::error::DataFusionError),
    #[error("{0}")]
    Samples(#[from] memscape_samples::SamplesError),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot start the query engine's runtime: {0}")]
    Runtime(std::io::Error),
}

pub type Result<T> = std::result::Result<T, EngineError>;

/// Where the plans run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineSpec {
    /// DataFusion in this process (the default).
    Embedded,
    /// A Ballista scheduler at `ballista://HOST:PORT` (`df://` is accepted too).
    Ballista(String),
    /// A Ballista scheduler and this many executors started in this process, on loopback
    /// (Ballista's standalone mode: for tests and for measuring the distributed path).
    Standalone { executors: usize, slots: usize },
}

impl EngineSpec {
    /// `embedded`, `ballista://HOST:PORT` or `standalone[:EXECUTORS]`.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        if text.is_empty() || text == "embedded" || text == "datafusion" {
            return Ok(EngineSpec::Embedded);
        }
        if let Some(rest) = text.strip_prefix("standalone") {
            let executors = match rest.strip_prefix(':') {
                Some(n) => n.parse().map_err(|_| {
                    EngineError::Invalid(format!("--engine {text:?}: expected standalone:N"))
                })?,
                None if rest.is_empty() => 1,
                None => return Err(EngineError::Invalid(format!("--engine {text:?}"))),
            };
            return Ok(EngineSpec::Standalone {
                executors,
                slots: 1,
            });
        }
        if text.starts_with("ballista://") || text.starts_with("df://") {
            return Ok(EngineSpec::Ballista(text.to_owned()));
        }
        Err(EngineError::Invalid(format!(
            "--engine {text:?}: expected embedded, ballista://HOST:PORT or standalone[:N]"
        )))
    }
}

/// A query engine: a DataFusion session and the runtime its plans run on.
pub struct Engine {
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
    spec: EngineSpec,
    /// How many (segment, route key) totals a cluster tree keeps for its glyphs
    /// ([`clusters::KEYED_ENTRIES_MAX`] unless set): past it, a glyph is a query of its own
    /// (`Engine::cluster_aggregate`).
    keyed_entries_max: usize,
    /// At most this many blocks of a trace to one range of events of a level's aggregation
    /// ([`lod::LEVEL_RANGE_BLOCKS`] unless set; `lod::level_ranges`).
    level_range_blocks: u64,
}

impl Engine {
    /// DataFusion in this process, `partitions` plans in parallel (0: one per core).
    pub fn embedded(partitions: usize) -> Result<Self> {
        let runtime = runtime()?;
        let mut config = SessionConfig::new();
        if partitions > 0 {
            config = config.with_target_partitions(partitions);
        }
        Ok(Self {
            ctx: SessionContext::new_with_config(config),
            runtime,
            spec: EngineSpec::Embedded,
            keyed_entries_max: clusters::KEYED_ENTRIES_MAX,
            level_range_blocks: lod::LEVEL_RANGE_BLOCKS,
        })
    }

    /// [`Engine::embedded`] whose plans hold at most `memory_limit` bytes, sorts and
    /// aggregations spilling to temporary files past it: the GUI's engine, beside the window
    /// (its cluster trees sorted every sample by value until wave 12: 3.6 GB of RSS at 25 M
    /// samples unbounded, more than 12 GB at 100 M).
    pub fn embedded_bounded(partitions: usize, memory_limit: usize) -> Result<Self> {
        let runtime = runtime()?;
        let mut config = SessionConfig::new();
        if partitions > 0 {
            config = config.with_target_partitions(partitions);
        }
        // Fair among the plan's spilling operators: with the greedy pool one partition's sort
        // could take the memory another's merge then could not get ("Not enough memory to
        // continue external sort": BENCHMARKS.md, wave 30).
        let pool = datafusion::execution::memory_pool::FairSpillPool::new(memory_limit);
        let env = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
            .with_memory_pool(Arc::new(pool))
            .build_arc()?;
        Ok(Self {
            ctx: SessionContext::new_with_config_rt(config, env),
            runtime,
            spec: EngineSpec::Embedded,
            keyed_entries_max: clusters::KEYED_ENTRIES_MAX,
            level_range_blocks: lod::LEVEL_RANGE_BLOCKS,
        })
    }

    /// The engine `spec` names.
    pub fn connect(spec: &EngineSpec) -> Result<Self> {
        match spec {
            EngineSpec::Embedded => Self::embedded(0),
            #[cfg(feature = "ballista")]
            EngineSpec::Ballista(url) => distributed::remote(url),
            #[cfg(feature = "ballista")]
            EngineSpec::Standalone { executors, slots } => {
                distributed::standalone(*executors, *slots)
            }
            #[cfg(not(feature = "ballista"))]
            _ => Err(EngineError::Invalid(String::from(
                "this memscape was built without Ballista (feature `ballista` of memscape-engine)",
            ))),
        }
    }

    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }

    /// Keeps at most `entries` (segment, route key) totals for a cluster tree's glyphs (a
    /// tree past it has none, `ClusterTree::keyed` None, and each glyph is asked of
    /// [`Engine::cluster_aggregate`] when hovered). Tests lower it to cross it on small data.
    pub fn with_keyed_entries_max(mut self, entries: usize) -> Self {
        self.keyed_entries_max = entries;
        self
    }

    /// See [`Engine::with_keyed_entries_max`].
    pub fn keyed_entries_max(&self) -> usize {
        self.keyed_entries_max
    }

    /// Aggregates a level's blocks in ranges of events of at most `blocks` blocks of the trace
    /// (at least `lod::LEVEL_CHUNKS` ranges): what bounds the level's hash tables. Tests lower it
    /// to cross many ranges on small traces.
    pub fn with_level_range_blocks(mut self, blocks: u64) -> Self {
        self.level_range_blocks = blocks.max(1);
        self
    }

    /// See [`Engine::with_level_range_blocks`].
    pub fn level_range_blocks(&self) -> u64 {
        self.level_range_blocks
    }

    /// Registers the dataset at `dir` (its tables become `blocks`, `events`, … or `samples`).
    pub fn open(&self, dir: &Path) -> Result<Dataset> {
        let manifest = Manifest::read(dir)?;
        let dir = std::fs::canonicalize(dir)
            .map_err(|e| EngineError::Invalid(format!("{}: {e}", dir.display())))?;
        let host = ("host".to_owned(), DataType::Utf8);
        let process = ("process".to_owned(), DataType::UInt32);
        let window = ("window".to_owned(), DataType::UInt64);
        let tables: Vec<(&str, Vec<(String, DataType)>)> = match manifest.kind {
            DatasetKind::Trace => vec![
                (
                    "blocks",
                    vec![host.clone(), process.clone(), window.clone()],
                ),
                ("events", vec![host.clone(), process, window]),
                ("threads", vec![host.clone()]),
                ("call_sites", vec![host.clone()]),
                ("processes", vec![host]),
            ],
            DatasetKind::Samples => vec![("samples", vec![host, window])],
        };
        self.runtime.block_on(async {
            for (table, cols) in tables {
                let path = dir.join(table);
                if !path.is_dir() {
                    continue;
                }
                let _ = self.ctx.deregister_table(table);
                let options = ParquetReadOptions::default().table_partition_cols(cols);
                self.ctx
                    .register_parquet(table, format!("{}/", path.display()), options)
                    .await?;
            }
            Ok::<_, EngineError>(())
        })?;
        Ok(Dataset { dir, manifest })
    }

    /// Runs `df` and returns its batches.
    pub(crate) fn collect(&self, df: DataFrame) -> Result<Vec<RecordBatch>> {
        Ok(self.runtime.block_on(df.collect())?)
    }

    /// Runs `df` and hands its batches to `each` as they come, none kept: a result as big as
    /// the samples walked in bounded memory.
    pub(crate) fn for_each_batch(
        &self,
        df: DataFrame,
        mut each: impl FnMut(&RecordBatch) -> Result<()>,
    ) -> Result<()> {
        use futures::StreamExt as _;
        self.runtime.block_on(async {
            let mut stream = df.execute_stream().await?;
            while let Some(batch) = stream.next().await {
                each(&batch?)?;
            }
            Ok(())
        })
    }

    /// A table of the opened dataset.
    pub(crate) fn table(&self, name: &str) -> Result<DataFrame> {
        Ok(self.runtime.block_on(self.ctx.table(name))?)
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("memscape-engine")
        .build()
        .map_err(EngineError::Runtime)
}

/// An opened dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl Dataset {
    /// The host to query: `host` when given (it must exist), else the only one.
    pub fn host(&self, host: Option<&str>) -> Result<String> {
        Ok(self.manifest.pick_host(&self.dir, host)?)
    }
}

/// Typed reading of result batches.
pub(crate) mod rows {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
    use arrow_array::{Array, RecordBatch};
    use arrow_schema::DataType;

    use super::{EngineError, Result};

    fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a dyn Array> {
        batch
            .column_by_name(name)
            .map(|c| c.as_ref())
            .ok_or_else(|| EngineError::Invalid(format!("result has no column {name:?}")))
    }

    /// An integer column as u64 values (null → `None`), whatever its integer type.
    pub fn u64s(batch: &RecordBatch, name: &str) -> Result<Vec<Option<u64>>> {
        let c = column(batch, name)?;
        Ok(match c.data_type() {
            DataType::UInt64 => c.as_primitive::<UInt64Type>().iter().collect(),
            DataType::UInt32 => c
                .as_primitive::<UInt32Type>()
                .iter()
                .map(|v| v.map(u64::from))
                .collect(),
            DataType::Int64 => c
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.and_then(|x| u64::try_from(x).ok()))
                .collect(),
            other => {
                return Err(EngineError::Invalid(format!(
                    "result column {name:?}: expected an integer, found {other}"
                )));
            }
        })
    }

    pub fn i64s(batch: &RecordBatch, name: &str) -> Result<Vec<Option<i64>>> {
        let c = column(batch, name)?;
        match c.data_type() {
            DataType::Int64 => Ok(c.as_primitive::<Int64Type>().iter().collect()),
            other => Err(EngineError::Invalid(format!(
                "result column {name:?}: expected Int64, found {other}"
            ))),
        }
    }

    pub fn f64s(batch: &RecordBatch, name: &str) -> Result<Vec<Option<f64>>> {
        let c = column(batch, name)?;
        match c.data_type() {
            DataType::Float64 => Ok(c.as_primitive::<Float64Type>().iter().collect()),
            other => Err(EngineError::Invalid(format!(
                "result column {name:?}: expected Float64, found {other}"
            ))),
        }
    }

    pub fn strs(batch: &RecordBatch, name: &str) -> Result<Vec<Option<String>>> {
        let c = column(batch, name)?;
        let c = arrow_cast_utf8(c, name)?;
        Ok(c)
    }

    fn arrow_cast_utf8(c: &dyn Array, name: &str) -> Result<Vec<Option<String>>> {
        match c.data_type() {
            DataType::Utf8 => Ok(c
                .as_string::<i32>()
                .iter()
                .map(|s| s.map(str::to_owned))
                .collect()),
            DataType::Utf8View => Ok(c
                .as_string_view()
                .iter()
                .map(|s| s.map(str::to_owned))
                .collect()),
            DataType::LargeUtf8 => Ok(c
                .as_string::<i64>()
                .iter()
                .map(|s| s.map(str::to_owned))
                .collect()),
            other => Err(EngineError::Invalid(format!(
                "result column {name:?}: expected text, found {other}"
            ))),
        }
    }
}

#[cfg(feature = "ballista")]
mod distributed {
    use ballista::prelude::SessionContextExt;
    use datafusion::prelude::SessionContext;

    use super::{Engine, EngineError, EngineSpec, Result, runtime};

    /// A client of the Ballista scheduler at `url`.
    pub fn remote(url: &str) -> Result<Engine> {
        let runtime = runtime()?;
        let ctx = runtime.block_on(SessionContext::remote(url))?;
        Ok(Engine {
            ctx,
            runtime,
            spec: EngineSpec::Ballista(url.to_owned()),
            keyed_entries_max: crate::clusters::KEYED_ENTRIES_MAX,
            level_range_blocks: crate::lod::LEVEL_RANGE_BLOCKS,
        })
    }

    /// A scheduler and `executors` executors (each running `slots` tasks at once) in this
    /// process on loopback, and a client of them.
    pub fn standalone(executors: usize, slots: usize) -> Result<Engine> {
        use ballista_core::serde::BallistaCodec;
        use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
        let runtime = runtime()?;
        let ctx = runtime.block_on(async {
            let addr = ballista_scheduler::standalone::new_standalone_scheduler()
                .await
                .map_err(|e| EngineError::Invalid(format!("Ballista scheduler: {e}")))?;
            let url = format!("http://localhost:{}", addr.port());
            let mut tries = 0;
            let scheduler = loop {
                match SchedulerGrpcClient::connect(url.clone()).await {
                    Ok(s) => break s,
                    Err(e) if tries > 50 => {
                        return Err(EngineError::Invalid(format!(
                            "Ballista scheduler at {url}: {e}"
                        )));
                    }
                    Err(_) => {
                        tries += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            };
            for _ in 0..executors.max(1) {
                ballista_executor::new_standalone_executor(
                    scheduler.clone(),
                    slots.max(1),
                    BallistaCodec::default(),
                )
                .await
                .map_err(|e| EngineError::Invalid(format!("Ballista executor: {e}")))?;
            }
            Ok::<_, EngineError>(
                SessionContext::remote(&format!("df://localhost:{}", addr.port())).await?,
            )
        })?;
        Ok(Engine {
            ctx,
            runtime,
            spec: EngineSpec::Standalone { executors, slots },
            keyed_entries_max: crate::clusters::KEYED_ENTRIES_MAX,
            level_range_blocks: crate::lod::LEVEL_RANGE_BLOCKS,
        })
    }
}

/// Which dataset kind a directory holds, for callers that pick a path (native or engine).
pub fn dataset_kind(dir: &Path) -> Option<DatasetKind> {
    memscape_parquet::dataset_kind(dir)
}

/// Shared handle for views that run queries from a worker thread.
pub type SharedEngine = Arc<Engine>;

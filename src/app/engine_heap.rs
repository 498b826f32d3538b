//! The heap views of a Parquet trace dataset drawn from the query engine (`--features engine`):
//! the dataset's heap tree, curve and time points are `memscape_engine::Engine::heap_timeline`'s,
//! handed to the views as a [`HeapQuery`], its engine part kept in the cache directory beside the
//! dataset's level-of-detail index (`memscape_engine::heap_kept`) so that a reopened dataset's
//! heap panes do not ask the engine again. Without the feature, a Parquet trace dataset's heap
//! views say how to get it.

use std::path::Path;

use memscape_views::Dataset;
#[cfg(feature = "engine")]
use memscape_views::dataset::HeapQuery;

/// Whether `path` is a Parquet allocation-trace dataset (what the engine can aggregate).
pub fn is_trace_dataset(path: &Path) -> bool {
    path.is_dir()
        && memscape_parquet::dataset_kind(path) == Some(memscape_parquet::DatasetKind::Trace)
}

/// Makes the heap views of `dataset`, loaded from the Parquet trace dataset `dir`, draw from
/// the engine `spec` names (`embedded`, `ballista://HOST:PORT`, `standalone[:N]`).
#[cfg(feature = "engine")]
pub fn attach(dataset: &mut Dataset, dir: &Path, spec: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use memscape_engine::{Engine, EngineSpec};
    let Some(trace) = dataset.alloc_trace_mut() else {
        return Ok(());
    };
    let spec = EngineSpec::parse(spec)?;
    let engine = Engine::connect(&spec).with_context(|| format!("--engine {spec:?}"))?;
    let opened = engine.open(dir)?;
    let kept = memscape_engine::heap_kept::KeptHeap::in_cache_dir(&opened);
    trace.heap_query = Some(std::sync::Arc::new(EngineHeap {
        engine,
        dataset: opened,
        kept,
    }));
    Ok(())
}

/// A Parquet trace dataset `dir` for its heap views alone: the call tree, processes and
/// threads without the blocks or events (`read_trace_skeleton`), the heap from the engine
/// `spec` names.
pub fn heap_dataset(dir: &Path, spec: &str) -> anyhow::Result<Dataset> {
    use memscape_views::dataset::{AllocTraceData, DatasetContent};
    let skeleton = memscape_parquet::trace::read_trace_skeleton(dir, None)?;
    let mut dataset = Dataset {
        name: dir.display().to_string(),
        content: DatasetContent::AllocTrace(Box::new(AllocTraceData::new(skeleton))),
        links: Default::default(),
    };
    attach(&mut dataset, dir, spec)?;
    Ok(dataset)
}

/// Without the engine, the heap views of a Parquet trace dataset are refused with the feature
/// to build (as `memscape index` does).
#[cfg(not(feature = "engine"))]
pub fn attach(_dataset: &mut Dataset, dir: &Path, _spec: &str) -> anyhow::Result<()> {
    anyhow::bail!(
        "{}: the heap views of a Parquet dataset are computed by the query engine, and this \
         memscape was built without it; rebuild it with `cargo build --release --features engine`",
        dir.display()
    )
}

#[cfg(feature = "engine")]
struct EngineHeap {
    engine: memscape_engine::Engine,
    dataset: memscape_engine::Dataset,
    /// The engine's answers kept from an earlier open of the dataset.
    kept: memscape_engine::heap_kept::KeptHeap,
}

#[cfg(feature = "engine")]
impl HeapQuery for EngineHeap {
    fn timeline(
        &self,
        keys: &[memscape_heap::GroupKey],
        metric: memscape_heap::Metric,
        points: usize,
        options: &memscape_heap::HeapOptions,
    ) -> Result<memscape_views::dataset::HeapModel, String> {
        let (timeline, sizes) = self
            .kept
            .heap_timeline(
                &self.engine,
                &self.dataset,
                None,
                keys,
                metric,
                points,
                options,
            )
            .map_err(|e| e.to_string())?;
        Ok((timeline, Box::new(sizes)))
    }

    fn engine(&self) -> String {
        format!("{:?}", self.engine.spec())
    }
}

//! The Arrow schemas of the tables, and the small typed helpers that write and read them.
//! Partition columns (`host`, `process`, `window`) are in the directory names, not in the
//! files (Hive layout): pyarrow's `dataset(…, partitioning="hive")` and DataFusion's listing
//! tables add them back.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt8Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::{ParquetError, Result, invalid, io_err};

fn u64f(name: &str) -> Field {
    Field::new(name, DataType::UInt64, false)
}
fn u32f(name: &str) -> Field {
    Field::new(name, DataType::UInt32, false)
}
fn strf(name: &str) -> Field {
    Field::new(name, DataType::Utf8, false)
}

/// `blocks`: one row per block (allocation), in allocation order within a file.
pub fn blocks() -> SchemaRef {
    Arc::new(Schema::new(vec![
        u64f("block"),
        u64f("address"),
        u64f("size"),
        u64f("requested_size"),
        u64f("usable_size"),
        u64f("alloc_time_ns"),
        u64f("free_time_ns"),
        u64f("alloc_event"),
        u64f("free_event"),
        u32f("thread"),
        u32f("site"),
        Field::new("flags", DataType::UInt8, false),
        u32f("free_site"),
        u32f("free_thread"),
        u32f("pool"),
    ]))
}

/// `events`: one row per allocation or free of a block, in event order within a file.
pub fn events() -> SchemaRef {
    Arc::new(Schema::new(vec![
        u64f("event"),
        u64f("time_ns"),
        Field::new("kind", DataType::UInt8, false),
        u64f("block"),
        u64f("address"),
        u64f("size"),
        u32f("thread"),
        u32f("site"),
        Field::new("flags", DataType::UInt8, false),
    ]))
}

/// Event `kind` values.
pub const EVENT_ALLOC: u8 = 0;
pub const EVENT_FREE: u8 = 1;

/// `processes`: one row per process image.
pub fn processes() -> SchemaRef {
    Arc::new(Schema::new(vec![
        u32f("process"),
        u32f("pid"),
        u32f("parent_pid"),
        strf("command_line"),
        strf("executable"),
        u64f("start_ns"),
        u64f("end_ns"),
        strf("end"),
        u64f("events"),
        u64f("allocs"),
        u64f("frees"),
        u64f("unknown_frees"),
        u64f("inherited_frees"),
        u64f("peak_live_bytes"),
        u64f("peak_time_ns"),
    ]))
}

/// `pools`: pools a custom allocator declared (`memscape.h`); `blocks.pool` is 1 + `pool`.
pub fn pools() -> SchemaRef {
    Arc::new(Schema::new(vec![
        u32f("pool"),
        strf("name"),
        u32f("process"),
        u64f("start"),
        u64f("end"),
        u64f("block_size"),
        u64f("declared_ns"),
    ]))
}

/// `threads`: one row per thread.
pub fn threads() -> SchemaRef {
    Arc::new(Schema::new(vec![
        u32f("thread"),
        strf("name"),
        u32f("process"),
    ]))
}

/// `call_sites`: the call-stack tree, one row per node (node 0 is the root).
pub fn call_sites() -> SchemaRef {
    Arc::new(Schema::new(vec![
        u32f("node"),
        u32f("parent"),
        u64f("ip"),
        strf("function"),
        strf("file"),
        u32f("line"),
        strf("module"),
        u64f("module_offset"),
    ]))
}

/// How every table's files are written (zstd; the writer's default row groups of 1 Mi rows).
pub(crate) fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_created_by(String::from("memscape"))
        .build()
}

/// Writes `batch` to `path` (zstd, one file), creating its directory.
pub fn write_batch(path: &Path, batch: &RecordBatch) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    let file = File::create(path).map_err(io_err(path))?;
    let pq = |source| ParquetError::Parquet {
        path: path.display().to_string(),
        source,
    };
    let mut writer =
        ArrowWriter::try_new(file, batch.schema(), Some(writer_properties())).map_err(pq)?;
    writer.write(batch).map_err(pq)?;
    writer.close().map_err(pq)?;
    Ok(())
}

/// A batch from columns, checked against `schema`.
pub fn batch(path: &Path, schema: SchemaRef, columns: Vec<ArrayRef>) -> Result<RecordBatch> {
    RecordBatch::try_new(schema, columns).map_err(|source| ParquetError::Arrow {
        path: path.display().to_string(),
        source,
    })
}

/// Every batch of one Parquet file.
pub fn read_file(path: &Path) -> Result<Vec<RecordBatch>> {
    file_batches(path)?.collect()
}

/// The record batches of one Parquet file, read as they are asked for (a bounded read stops
/// there).
pub fn file_batches(path: &Path) -> Result<impl Iterator<Item = Result<RecordBatch>> + use<>> {
    let file = File::open(path).map_err(io_err(path))?;
    let pq = |source| ParquetError::Parquet {
        path: path.display().to_string(),
        source,
    };
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(pq)?
        .with_batch_size(64 * 1024)
        .build()
        .map_err(pq)?;
    let shown = path.display().to_string();
    Ok(reader.map(move |b| {
        b.map_err(|source| ParquetError::Arrow {
            path: shown.clone(),
            source,
        })
    }))
}

/// Rows of a Parquet file, from its footer.
pub fn file_rows(path: &Path) -> Result<u64> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let file = File::open(path).map_err(io_err(path))?;
    let reader = SerializedFileReader::new(file).map_err(|source| ParquetError::Parquet {
        path: path.display().to_string(),
        source,
    })?;
    u64::try_from(reader.metadata().file_metadata().num_rows())
        .map_err(|_| invalid(path, "negative row count"))
}

/// Typed access to the columns of a batch read from `path`, with errors naming the file and
/// the column when it is missing or of another type.
pub struct Columns<'a> {
    pub path: &'a Path,
    pub batch: &'a RecordBatch,
}

impl<'a> Columns<'a> {
    pub fn new(path: &'a Path, batch: &'a RecordBatch) -> Self {
        Self { path, batch }
    }

    fn column(&self, name: &str, want: &DataType) -> Result<&'a ArrayRef> {
        let col = self
            .batch
            .column_by_name(name)
            .ok_or_else(|| invalid(self.path, format!("no column {name:?}")))?;
        if col.data_type() != want {
            return Err(invalid(
                self.path,
                format!(
                    "column {name:?}: expected {want}, found {}",
                    col.data_type()
                ),
            ));
        }
        Ok(col)
    }

    /// Like [`Columns::u64`], for a column that datasets written by older versions lack.
    pub fn u64_or_none(&self, name: &str) -> Result<Option<&'a [u64]>> {
        match self.batch.column_by_name(name) {
            None => Ok(None),
            Some(_) => self.u64(name).map(Some),
        }
    }

    fn no_nulls(&self, name: &str, col: &dyn Array) -> Result<()> {
        if col.null_count() > 0 {
            return Err(invalid(self.path, format!("column {name:?} has nulls")));
        }
        Ok(())
    }

    pub fn u64(&self, name: &str) -> Result<&'a [u64]> {
        let col = self.column(name, &DataType::UInt64)?;
        self.no_nulls(name, col)?;
        Ok(col.as_primitive::<UInt64Type>().values())
    }

    pub fn u32(&self, name: &str) -> Result<&'a [u32]> {
        let col = self.column(name, &DataType::UInt32)?;
        self.no_nulls(name, col)?;
        Ok(col.as_primitive::<UInt32Type>().values())
    }

    pub fn u8(&self, name: &str) -> Result<&'a [u8]> {
        let col = self.column(name, &DataType::UInt8)?;
        self.no_nulls(name, col)?;
        Ok(col.as_primitive::<UInt8Type>().values())
    }

    /// Values and validity (`None` where null).
    pub fn opt_u64(&self, name: &str) -> Result<Vec<Option<u64>>> {
        let col = self.column(name, &DataType::UInt64)?;
        Ok(col.as_primitive::<UInt64Type>().iter().collect())
    }

    pub fn opt_u32(&self, name: &str) -> Result<Vec<Option<u32>>> {
        let col = self.column(name, &DataType::UInt32)?;
        Ok(col.as_primitive::<UInt32Type>().iter().collect())
    }

    pub fn opt_f64(&self, name: &str) -> Result<Vec<Option<f64>>> {
        let col = self.column(name, &DataType::Float64)?;
        Ok(col.as_primitive::<Float64Type>().iter().collect())
    }

    pub fn opt_str(&self, name: &str) -> Result<Vec<Option<&'a str>>> {
        let col = self.column(name, &DataType::Utf8)?;
        Ok(col.as_string::<i32>().iter().collect())
    }

    pub fn str(&self, name: &str) -> Result<Vec<&'a str>> {
        let col = self.column(name, &DataType::Utf8)?;
        self.no_nulls(name, col)?;
        Ok(col
            .as_string::<i32>()
            .iter()
            .map(Option::unwrap_or_default)
            .collect())
    }
}

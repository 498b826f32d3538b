//! The crate's error: a message saying what failed (which file, which option and what was
//! expected), with the error of the model crate or the system that caused it as its source, so
//! that the binary prints the whole chain once (`memscape: error: A: B: C`).

use std::fmt::Display;

/// What went wrong while loading, analysing or drawing a view.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A message of this crate, with what caused it.
    #[error("{message}")]
    Message {
        message: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    #[error(transparent)]
    Input(#[from] memscape_io::InputError),
    #[error(transparent)]
    Trace(#[from] memscape_trace::LoadError),
    #[error(transparent)]
    Massif(#[from] memscape_heap::massif::MassifError),
    #[error(transparent)]
    Heap(#[from] memscape_heap::report::HeapError),
    #[error(transparent)]
    Profile(#[from] memscape_heap::profile::ProfileError),
    #[error(transparent)]
    Cycles(#[from] memscape_cycles::CyclesError),
    #[error(transparent)]
    Graph(#[from] memscape_graph::GraphError),
    #[error(transparent)]
    Samples(#[from] memscape_samples::SamplesError),
    #[error(transparent)]
    Parquet(#[from] memscape_parquet::ParquetError),
    #[error(transparent)]
    Topology(#[from] memscape_topology::TopologyError),
    #[error(transparent)]
    Render(#[from] memscape_render::RenderError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = ViewError> = std::result::Result<T, E>;

/// Messages of parsers that report a plain string.
impl From<String> for ViewError {
    fn from(message: String) -> Self {
        ViewError::msg(message)
    }
}

impl ViewError {
    /// An error that is only a message.
    pub fn msg(message: impl Display) -> Self {
        ViewError::Message {
            message: message.to_string(),
            source: None,
        }
    }

    /// `message`, caused by `source`.
    pub fn caused(
        message: impl Display,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ViewError::Message {
            message: message.to_string(),
            source: Some(Box::new(source)),
        }
    }
}

/// `.context(…)` and `.with_context(|| …)` on results and options: the message says what was
/// being done, the original error becomes its source.
pub trait Context<T> {
    fn context(self, message: impl Display) -> Result<T>;
    fn with_context<M: Display>(self, message: impl FnOnce() -> M) -> Result<T>;
}

impl<T, E: Into<ViewError>> Context<T> for std::result::Result<T, E> {
    fn context(self, message: impl Display) -> Result<T> {
        self.map_err(|e| ViewError::caused(message, e.into()))
    }

    fn with_context<M: Display>(self, message: impl FnOnce() -> M) -> Result<T> {
        self.map_err(|e| ViewError::caused(message(), e.into()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, message: impl Display) -> Result<T> {
        self.ok_or_else(|| ViewError::msg(message))
    }

    fn with_context<M: Display>(self, message: impl FnOnce() -> M) -> Result<T> {
        self.ok_or_else(|| ViewError::msg(message()))
    }
}

/// Returns early with a [`ViewError`] made of a formatted message.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::ViewError::msg(format!($($arg)*)))
    };
}

/// [`bail!`] unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            $crate::bail!($($arg)*);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_the_cause_as_the_source() {
        let io: std::result::Result<(), std::io::Error> = Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file",
        ));
        let e = io.context("x.msc: cannot read").unwrap_err();
        assert_eq!(e.to_string(), "x.msc: cannot read");
        let source = std::error::Error::source(&e).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("no such file"));
        let none: Option<u8> = None;
        assert_eq!(none.context("missing").unwrap_err().to_string(), "missing");
    }
}

//! A block column that is decoded, derived or shared on first use ([`Column`]).

use std::sync::{Arc, OnceLock};

/// One column of [`BlockColumns`]: a slice of `T` (it dereferences to `&[T]`, so indexing,
/// `len`, `iter`, `partition_point` and every other slice method work as on the `Vec` it used
/// to be). A column loaded from an `.msc` file is decoded on first use (once, thread-safe):
/// loading costs only what the views really read. Columns derived from others (a heaptrack
/// trace's block times, from its event indices and ticks) are computed on first use the same
/// way, and a column equal to another (extent = requested size when usable sizes are unknown)
/// shares its values.
pub struct Column<T> {
    value: OnceLock<Values<T>>,
    pending: Option<Arc<dyn Fn() -> Values<T> + Send + Sync>>,
}

/// Where a column's values live.
#[allow(private_interfaces)]
pub(crate) enum Values<T> {
    /// A vector of its own.
    Owned(Vec<T>),
    /// A vector shared with other columns (or with the decoder of another column).
    Shared(Arc<Vec<T>>),
    /// Values stored as they are in memory in a memory-mapped `.msc` file (not copied).
    Mapped(memscape_map::MappedSlice<T>),
    /// The first values of a column a trace builder is still appending to (a live snapshot:
    /// not copied, see [`memscape_map::AppendVec`]).
    Appended(memscape_map::Frozen<T>),
}

impl<T> Values<T> {
    #[inline]
    fn as_slice(&self) -> &[T] {
        match self {
            Values::Owned(v) => v,
            Values::Shared(v) => v,
            Values::Mapped(v) => v,
            Values::Appended(v) => v,
        }
    }
}

impl<T> Column<T> {
    /// A column whose values `decode` computes on first use.
    pub(crate) fn lazy(decode: impl Fn() -> Vec<T> + Send + Sync + 'static) -> Self {
        Self::lazy_values(move || Values::Owned(decode()))
    }

    /// A column whose values (owned, shared or mapped) `find` gives on first use.
    pub(crate) fn lazy_values(find: impl Fn() -> Values<T> + Send + Sync + 'static) -> Self {
        Self {
            value: OnceLock::new(),
            pending: Some(Arc::new(find)),
        }
    }

    /// `n` zeros, materialized on first use (zeroed memory costs nothing until touched).
    pub(crate) fn zeros(n: usize) -> Self
    where
        T: Default + Clone + Send + Sync + 'static,
    {
        Self::lazy(move || vec![T::default(); n])
    }

    /// Whether the values are read from a memory-mapped file rather than held in memory.
    pub fn is_mapped(&self) -> bool {
        matches!(self.value.get(), Some(Values::Mapped(_)))
    }

    /// A column holding shared values (cloning the column clones the `Arc`, not the values).
    pub(crate) fn shared(values: Arc<Vec<T>>) -> Self {
        Self {
            value: OnceLock::from(Values::Shared(values)),
            pending: None,
        }
    }

    /// A column holding the frozen prefix of a growing column (cloning it clones the `Arc`).
    pub(crate) fn appended(values: memscape_map::Frozen<T>) -> Self {
        Self {
            value: OnceLock::from(Values::Appended(values)),
            pending: None,
        }
    }

    /// The values, decoding them now if that has not happened yet.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        self.value
            .get_or_init(|| match &self.pending {
                Some(decode) => decode(),
                None => Values::Owned(Vec::new()),
            })
            .as_slice()
    }

    /// Whether the values are in memory (false while a lazily loaded column is unread).
    pub fn is_decoded(&self) -> bool {
        self.value.get().is_some()
    }

    /// The values as a vector (decoded now if they were not yet; copied if they are shared).
    pub fn into_vec(mut self) -> Vec<T>
    where
        T: Clone,
    {
        match self.value.take() {
            Some(values) => values.into_vec(),
            None => self
                .pending
                .take()
                .map_or_else(Vec::new, |decode| decode().into_vec()),
        }
    }
}

impl<T: Clone> Values<T> {
    fn into_vec(self) -> Vec<T> {
        match self {
            Values::Owned(v) => v,
            Values::Shared(v) => Arc::unwrap_or_clone(v),
            Values::Mapped(v) => v.to_vec(),
            Values::Appended(v) => v.to_vec(),
        }
    }
}

/// Decoding a column on its own, whatever its element type (for parallel prefetching).
pub(crate) trait Force: Sync {
    fn force(&self);
}

impl<T: Send + Sync> Force for Column<T> {
    fn force(&self) {
        self.as_slice();
    }
}

impl<T> Default for Column<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T> From<Vec<T>> for Column<T> {
    fn from(values: Vec<T>) -> Self {
        Self {
            value: OnceLock::from(Values::Owned(values)),
            pending: None,
        }
    }
}

impl<T> std::ops::Deref for Column<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Clone> std::ops::DerefMut for Column<T> {
    /// Decodes the column first if needed (the decoder is then dropped); shared values are
    /// copied first.
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_slice();
        self.pending = None;
        if let Some(values @ (Values::Shared(_) | Values::Mapped(_) | Values::Appended(_))) =
            self.value.get()
        {
            let owned = Values::Owned(values.as_slice().to_vec());
            self.value = OnceLock::from(owned);
        }
        match self.value.get_mut() {
            Some(Values::Owned(v)) => v.as_mut_slice(),
            _ => &mut [],
        }
    }
}

impl<'a, T> IntoIterator for &'a Column<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Clone> Clone for Column<T> {
    /// A decoded column is copied; an unread one shares its decoder (and stays unread).
    fn clone(&self) -> Self {
        match (self.value.get(), &self.pending) {
            (Some(Values::Shared(values)), _) => Self::shared(Arc::clone(values)),
            (Some(Values::Mapped(values)), _) => Self {
                value: OnceLock::from(Values::Mapped(values.clone())),
                pending: None,
            },
            (Some(Values::Owned(values)), _) => values.clone().into(),
            (Some(Values::Appended(values)), _) => Self::appended(values.clone()),
            (None, pending) => Self {
                value: OnceLock::new(),
                pending: pending.clone(),
            },
        }
    }
}

impl<T: PartialEq> PartialEq for Column<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for Column<T> {}

impl<T: PartialEq> PartialEq<Vec<T>> for Column<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

//! Data for the cycle views (the CPU half of the views issue): the baseline 2-D projection of
//! the windows by classical multidimensional scaling, and the tables the circular, spiral and
//! projection views colour by (source line, function, file, address, kind, time).
//!
//! Everything here is plain data with `serde::Serialize`, so that the CLI and the GUI can dump
//! or upload it as is.

use rayon::prelude::*;

use crate::cycles::CyclesOptions;
use crate::error::CyclesError;
use crate::landmarks::maxmin_landmarks;
use crate::levenshtein::{make_windows, window_distances_with};
use crate::metric::DistanceMatrix;
use crate::progress::Control;
use crate::records::{TraceRecord, record_symbols};
use crate::trace::AccessKind;

/// The label of an unknown function, file or line.
pub const UNKNOWN: &str = "??";

/// Classical (Torgerson) multidimensional scaling of a finite metric into the plane.
///
/// With `D²` the matrix of squared distances and `J = I − 11ᵀ/n` the centring projector, the
/// double-centred Gram matrix is `B = −½ J D² J`; the embedding is `X = V Λ^½` for the `dims`
/// largest eigenvalues Λ of B (negative ones, which a non-Euclidean metric such as Levenshtein
/// distances can have, give a zero coordinate, as R's `cmdscale` does) and their unit
/// eigenvectors V.
///
/// B is never formed: its products with a vector cost one pass over the stored triangle
/// (`O(n²)`, parallel, in a fixed chunking so that the sums and hence the result do not
/// depend on the thread count or scheduling). The top eigenpairs come from Lanczos iterations
/// with full reorthogonalization from a fixed start vector, stopped when the Ritz residuals of
/// the wanted pairs fall below 1e-10 of the largest eigenvalue (typically 30–80 products).
/// Each axis is oriented so that its largest-magnitude coordinate is positive: the output is
/// deterministic, and equal to any other classical MDS up to a reflection of each axis (and a
/// rotation inside an eigenspace of repeated eigenvalues).
///
/// `dims` is 1 or 2 (with 1, the second coordinate is 0). Returns one point per point of
/// `dist`.
pub fn classical_mds<D: DistanceMatrix>(
    dist: &D,
    dims: usize,
) -> Result<Vec<[f64; 2]>, CyclesError> {
    if !(1..=2).contains(&dims) {
        return Err(CyclesError::InvalidParameter(format!(
            "classical MDS into {dims} dimensions: expected 1 or 2"
        )));
    }
    let n = dist.size();
    let mut out = vec![[0.0; 2]; n];
    if n < 2 {
        return Ok(out);
    }
    let gram = CentredGram::new(dist);
    let pairs = lanczos_top(&gram, dims);
    for (axis, (value, vector)) in pairs.iter().enumerate() {
        let scale = value.max(0.0).sqrt();
        for (point, v) in out.iter_mut().zip(vector) {
            point[axis] = scale * v;
        }
    }
    Ok(out)
}

/// `x ↦ B x` with `B = −½ J D² J`, computed from the stored triangle.
struct CentredGram<'a, D> {
    dist: &'a D,
    n: usize,
    /// Row ranges of the triangle with about equal numbers of entries: the unit of parallel
    /// work, fixed so that floating-point sums are always added in the same order.
    chunks: Vec<(usize, usize)>,
}

impl<'a, D: DistanceMatrix> CentredGram<'a, D> {
    fn new(dist: &'a D) -> Self {
        let n = dist.size();
        let total = n * n.saturating_sub(1) / 2;
        let target = (total / 64).max(4096);
        let mut chunks = Vec::new();
        let (mut start, mut filled) = (0, 0);
        for i in 0..n {
            filled += i;
            if filled >= target || i + 1 == n {
                chunks.push((start, i + 1));
                start = i + 1;
                filled = 0;
            }
        }
        Self { dist, n, chunks }
    }

    /// `y = D² x` (symmetric, zero diagonal): each chunk of rows adds its lower-triangle part
    /// `Σ_j<i d²(i,j) x_j` to its own rows and its transpose part to a private vector; the
    /// private vectors are summed in chunk order.
    fn squared_distances_times(&self, x: &[f64]) -> Vec<f64> {
        let partial: Vec<(usize, Vec<f64>, Vec<f64>)> = self
            .chunks
            .par_iter()
            .map(|&(start, end)| {
                let mut own = vec![0.0; end - start];
                let mut transposed = vec![0.0; end];
                for i in start..end {
                    let row = i * i.saturating_sub(1) / 2;
                    let xi = x[i];
                    let mut sum = 0.0;
                    for j in 0..i {
                        let d = f64::from(self.dist.edge_length(row + j));
                        let d2 = d * d;
                        sum += d2 * x[j];
                        transposed[j] += d2 * xi;
                    }
                    own[i - start] = sum;
                }
                (start, own, transposed)
            })
            .collect();
        let mut y = vec![0.0; self.n];
        for (start, own, transposed) in partial {
            for (slot, v) in y[start..].iter_mut().zip(&own) {
                *slot += v;
            }
            for (slot, v) in y.iter_mut().zip(&transposed) {
                *slot += v;
            }
        }
        y
    }

    fn apply(&self, x: &[f64]) -> Vec<f64> {
        let centred = centre(x);
        let mut y = self.squared_distances_times(&centred);
        y = centre(&y);
        y.iter_mut().for_each(|v| *v *= -0.5);
        y
    }
}

fn centre(x: &[f64]) -> Vec<f64> {
    let mean = x.iter().sum::<f64>() / x.len().max(1) as f64;
    x.iter().map(|v| v - mean).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The `wanted` largest eigenpairs of the symmetric operator, largest first, each vector of
/// unit length with its largest-magnitude entry positive.
fn lanczos_top<D: DistanceMatrix>(
    gram: &CentredGram<'_, D>,
    wanted: usize,
) -> Vec<(f64, Vec<f64>)> {
    let n = gram.n;
    let max_steps = n.min(400);
    // A fixed start vector, centred (B's range is orthogonal to the constants).
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let start: Vec<f64> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    let mut v = centre(&start);
    let norm = dot(&v, &v).sqrt();
    v.iter_mut().for_each(|x| *x /= norm);

    let mut basis: Vec<Vec<f64>> = vec![v];
    let mut alpha: Vec<f64> = Vec::new();
    let mut beta: Vec<f64> = Vec::new();
    let mut ritz: Vec<(f64, Vec<f64>)> = Vec::new();
    for step in 0..max_steps {
        let mut w = gram.apply(&basis[step]);
        let a = dot(&w, &basis[step]);
        alpha.push(a);
        // Full reorthogonalization, twice ("twice is enough").
        for _ in 0..2 {
            for q in &basis {
                let c = dot(&w, q);
                w.iter_mut().zip(q).for_each(|(x, y)| *x -= c * y);
            }
        }
        let b = dot(&w, &w).sqrt();
        let m = alpha.len();
        let scale = alpha
            .iter()
            .chain(&beta)
            .fold(0.0f64, |acc, x| acc.max(x.abs()))
            .max(f64::MIN_POSITIVE);
        // A breakdown (b ≈ 0: the Krylov space is invariant, e.g. a metric of rank 1) ends the
        // iteration even before `wanted` steps; missing pairs are then 0.
        let check =
            (m >= wanted && m.is_multiple_of(5)) || b <= 1e-12 * scale || step + 1 == max_steps;
        if check {
            let (values, vectors) = tridiagonal_eigen(&alpha, &beta);
            // Ritz pairs by decreasing value; residual of pair k is |b · s_{m−1,k}|.
            let mut order: Vec<usize> = (0..m).collect();
            order.sort_by(|&x, &y| values[y].total_cmp(&values[x]));
            let top = &order[..wanted.min(m)];
            let converged = top
                .iter()
                .all(|&k| (b * vectors[k][m - 1]).abs() <= 1e-10 * scale);
            if converged || b <= 1e-12 * scale || step + 1 == max_steps {
                ritz = top
                    .iter()
                    .map(|&k| {
                        let mut x = vec![0.0; n];
                        for (q, s) in basis.iter().zip(&vectors[k]) {
                            x.iter_mut().zip(q).for_each(|(xi, qi)| *xi += s * qi);
                        }
                        let norm = dot(&x, &x).sqrt().max(f64::MIN_POSITIVE);
                        let largest = x
                            .iter()
                            .fold(0.0f64, |acc, v| if v.abs() > acc.abs() { *v } else { acc });
                        let sign = if largest < 0.0 { -1.0 } else { 1.0 };
                        x.iter_mut().for_each(|xi| *xi *= sign / norm);
                        (values[k], x)
                    })
                    .collect();
                tracing::debug!(
                    "classical MDS: {n} points, {m} Lanczos steps, eigenvalues {:?}",
                    ritz.iter().map(|r| r.0).collect::<Vec<_>>()
                );
                break;
            }
        }
        if b <= 1e-12 * scale {
            break;
        }
        beta.push(b);
        w.iter_mut().for_each(|x| *x /= b);
        basis.push(w);
    }
    while ritz.len() < wanted {
        ritz.push((0.0, vec![0.0; n]));
    }
    ritz
}

/// Eigenvalues and eigenvectors (`vectors[k][i]`: component i of eigenvector k) of the
/// symmetric tridiagonal matrix with diagonal `alpha` and off-diagonal `beta`, by the implicit
/// QL algorithm with Wilkinson-type shifts (`tqli` of Numerical Recipes, §11.3).
fn tridiagonal_eigen(alpha: &[f64], beta: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let m = alpha.len();
    let mut d = alpha.to_vec();
    // e[i] couples rows i and i + 1.
    let mut e: Vec<f64> = (0..m)
        .map(|i| beta.get(i).copied().unwrap_or(0.0))
        .collect();
    // z[k][i]: row k, column i; column i ends as eigenvector i.
    let mut z = vec![vec![0.0; m]; m];
    for (k, row) in z.iter_mut().enumerate() {
        row[k] = 1.0;
    }
    for l in 0..m {
        for _iteration in 0..64 {
            let mut split = l;
            while split + 1 < m {
                let dd = d[split].abs() + d[split + 1].abs();
                if e[split].abs() <= f64::EPSILON * dd {
                    break;
                }
                split += 1;
            }
            if split == l {
                break;
            }
            let mut g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            let mut r = g.hypot(1.0);
            g = d[split] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (1.0, 1.0, 0.0);
            let mut deflated = false;
            for i in (l..split).rev() {
                let f = s * e[i];
                let b = c * e[i];
                r = f.hypot(g);
                e[i + 1] = r;
                if r == 0.0 {
                    d[i + 1] -= p;
                    e[split] = 0.0;
                    deflated = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                for row in z.iter_mut() {
                    let f = row[i + 1];
                    row[i + 1] = s * row[i] + c * f;
                    row[i] = c * row[i] - s * f;
                }
            }
            if deflated {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[split] = 0.0;
        }
    }
    let vectors = (0..m).map(|k| (0..m).map(|i| z[i][k]).collect()).collect();
    (d, vectors)
}

/// Labels interned as dense ids.
#[derive(Debug, Default)]
struct Interner {
    ids: std::collections::HashMap<String, u32>,
    labels: Vec<String>,
}

impl Interner {
    fn id(&mut self, label: String) -> u32 {
        if let Some(&id) = self.ids.get(&label) {
            return id;
        }
        let id = self.labels.len() as u32;
        self.ids.insert(label.clone(), id);
        self.labels.push(label);
        id
    }
}

/// The source keys of a record at the three granularities of the colour legend.
fn source_labels(r: &TraceRecord) -> (String, String, String) {
    let function = r.function.clone().unwrap_or_else(|| UNKNOWN.to_owned());
    let file = r.file.clone().unwrap_or_else(|| UNKNOWN.to_owned());
    let line = if r.function.is_none() && r.file.is_none() && r.line.is_none() {
        UNKNOWN.to_owned()
    } else {
        let number = r.line.map_or_else(|| UNKNOWN.to_owned(), |l| l.to_string());
        format!("{function} {file}:{number}")
    };
    (line, function, file)
}

/// Per-record columns for "colour by address / kind / source" (aligned with the records, and
/// so with every parameterization's `theta`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecordColumns {
    pub address: Vec<u64>,
    pub kind: Vec<AccessKind>,
    /// Ids into [`ViewTables::line_labels`] etc.
    pub line: Vec<u32>,
    pub function: Vec<u32>,
    pub file: Vec<u32>,
}

/// Per-window columns: window k starts at record k (a position in the records, not the trace
/// index) and covers `record_start[k]..record_end[k]` (w records); its source keys are those
/// of its first record; `unique[k]` is its point in the metric (identical windows merged), the
/// index into a projection of the unique windows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WindowColumns {
    pub record_start: Vec<u32>,
    pub record_end: Vec<u32>,
    pub unique: Vec<u32>,
    pub line: Vec<u32>,
    pub function: Vec<u32>,
    pub file: Vec<u32>,
}

/// The colouring tables of the cycle views. Labels: line `"function file:line"`, function,
/// file; `"??"` for what is unknown (a record without any symbol is `"??"` at every level).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ViewTables {
    /// Window width w.
    pub width: usize,
    pub windows: WindowColumns,
    pub records: RecordColumns,
    pub line_labels: Vec<String>,
    pub function_labels: Vec<String>,
    pub file_labels: Vec<String>,
}

/// Which functions "colour by line, functions collapsed" draws in one colour each (the paper
/// collapses a function's lines into one colour): names as in
/// [`ViewTables::function_labels`]; `*` stands for every function and `!name` keeps a
/// function's lines apart (`["*", "!matmul"]`: every function one colour, but matmul's lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollapsedFunctions(pub Vec<String>);

impl CollapsedFunctions {
    /// Whether `function`'s lines share one colour.
    pub fn collapses(&self, function: &str) -> bool {
        let mut collapsed = false;
        for pattern in &self.0 {
            match pattern.strip_prefix('!') {
                Some(name) if name == function || name == "*" => collapsed = false,
                Some(_) => {}
                None if pattern == function || pattern == "*" => collapsed = true,
                None => {}
            }
        }
        collapsed
    }
}

/// Colour keys of the records by line with some functions collapsed: `key[r]` indexes
/// `labels`, whose entries are line labels (`"function file:line"`) or, for a collapsed
/// function, the function's name; `collapsed[k]` says which.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LineKeys {
    pub key: Vec<u32>,
    pub labels: Vec<String>,
    pub collapsed: Vec<bool>,
}

impl ViewTables {
    /// The functions of the records with their record counts, most records first (ties by
    /// name): the list "functions collapsed" chooses from.
    pub fn functions_by_count(&self) -> Vec<(String, usize)> {
        let mut counts = vec![0usize; self.function_labels.len()];
        for &f in &self.records.function {
            counts[f as usize] += 1;
        }
        let mut out: Vec<(String, usize)> = self
            .function_labels
            .iter()
            .cloned()
            .zip(counts)
            .filter(|(_, c)| *c > 0)
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// "Colour by line, functions collapsed": each record keyed by its line, except that
    /// the records of a function `collapsed` collapses share one key per function.
    pub fn line_keys(&self, collapsed: &CollapsedFunctions) -> LineKeys {
        let function_collapsed: Vec<bool> = self
            .function_labels
            .iter()
            .map(|f| f != UNKNOWN && collapsed.collapses(f))
            .collect();
        let mut interner = Interner::default();
        let mut is_function: Vec<bool> = Vec::new();
        let key = self
            .records
            .line
            .iter()
            .zip(&self.records.function)
            .map(|(&line, &function)| {
                let (label, whole) = if function_collapsed[function as usize] {
                    (self.function_labels[function as usize].clone(), true)
                } else {
                    (self.line_labels[line as usize].clone(), false)
                };
                // A line label never equals a function name (it holds " file:line").
                let id = interner.id(label);
                if id as usize == is_function.len() {
                    is_function.push(whole);
                }
                id
            })
            .collect();
        LineKeys {
            key,
            labels: interner.labels,
            collapsed: is_function,
        }
    }
}

/// The tables of [`ViewTables`] for records analysed with `options` (window width and symbol
/// mode are taken from there, so `unique` matches the analysis).
pub fn view_tables(
    records: &[TraceRecord],
    options: &CyclesOptions,
) -> Result<ViewTables, CyclesError> {
    let (symbols, _) = record_symbols(records, options.symbol)?;
    let windows = make_windows(&symbols, options.window)?;
    let to_u32 =
        |x: usize| u32::try_from(x).map_err(|_| CyclesError::TooLarge(format!("{x} records")));
    let mut lines = Interner::default();
    let mut functions = Interner::default();
    let mut files = Interner::default();
    let mut record_columns = RecordColumns {
        address: Vec::with_capacity(records.len()),
        kind: Vec::with_capacity(records.len()),
        line: Vec::with_capacity(records.len()),
        function: Vec::with_capacity(records.len()),
        file: Vec::with_capacity(records.len()),
    };
    for r in records {
        let (line, function, file) = source_labels(r);
        record_columns.address.push(r.address);
        record_columns.kind.push(r.kind);
        record_columns.line.push(lines.id(line));
        record_columns.function.push(functions.id(function));
        record_columns.file.push(files.id(file));
    }
    let count = windows.window_to_unique.len();
    let mut window_columns = WindowColumns {
        record_start: Vec::with_capacity(count),
        record_end: Vec::with_capacity(count),
        unique: windows.window_to_unique.clone(),
        line: Vec::with_capacity(count),
        function: Vec::with_capacity(count),
        file: Vec::with_capacity(count),
    };
    for k in 0..count {
        window_columns.record_start.push(to_u32(k)?);
        window_columns.record_end.push(to_u32(k + options.window)?);
        window_columns.line.push(record_columns.line[k]);
        window_columns.function.push(record_columns.function[k]);
        window_columns.file.push(record_columns.file[k]);
    }
    Ok(ViewTables {
        width: options.window,
        windows: window_columns,
        records: record_columns,
        line_labels: lines.labels,
        function_labels: functions.labels,
        file_labels: files.labels,
    })
}

/// The baseline projection view (the paper's Figure 5): classical MDS of the unique windows'
/// Levenshtein distances, one point per unique window (`ViewTables::windows.unique` maps each
/// window to its point).
///
/// With more unique windows than `options.detail` allows, the MDS is of the landmarks (as in
/// the analysis) and every window is drawn at its landmark's point.
pub fn window_projection(
    records: &[TraceRecord],
    options: &CyclesOptions,
) -> Result<Vec<[f64; 2]>, CyclesError> {
    window_projection_with(records, options, &Control::new())
}

/// [`window_projection`] with progress reports (landmarks, distances) and cancellation.
pub fn window_projection_with(
    records: &[TraceRecord],
    options: &CyclesOptions,
    control: &Control,
) -> Result<Vec<[f64; 2]>, CyclesError> {
    let (symbols, alphabet) = record_symbols(records, options.symbol)?;
    let windows = make_windows(&symbols, options.window)?;
    let unique = windows.unique_count();
    let landmarks = options
        .detail
        .landmarks_for(unique)
        .map(|(count, _)| maxmin_landmarks(&windows, alphabet, count, control))
        .transpose()?;
    let points = landmarks.as_ref().map(|l| l.windows(&windows));
    let dist = window_distances_with(points.as_ref().unwrap_or(&windows), alphabet, control)?;
    control.check()?;
    let embedding = classical_mds(&dist, 2)?;
    Ok(match landmarks {
        None => embedding,
        Some(l) => l.nearest.iter().map(|&k| embedding[k as usize]).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::LowerDistanceMatrix;

    #[test]
    fn an_ellipse_is_recovered_up_to_reflection() {
        let points: Vec<Vec<f64>> = (0..50)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 50.0;
                vec![3.0 * a.cos(), a.sin()]
            })
            .collect();
        let m = LowerDistanceMatrix::from_points(&points).unwrap();
        let x = classical_mds(&m, 2).unwrap();
        // Centred already; axes may flip.
        let flip0 = (x[0][0] * points[0][0]).signum();
        let flip1 = (x[12][1] * points[12][1]).signum();
        for (p, q) in x.iter().zip(&points) {
            assert!((p[0] * flip0 - q[0]).abs() < 1e-5, "{p:?} vs {q:?}");
            assert!((p[1] * flip1 - q[1]).abs() < 1e-5, "{p:?} vs {q:?}");
        }
        assert!(classical_mds(&m, 3).is_err());
        let one = classical_mds(&m, 1).unwrap();
        assert!(one.iter().all(|p| p[1] == 0.0));
    }

    #[test]
    fn degenerate_metrics_give_finite_points() {
        for points in [
            vec![],
            vec![vec![1.0]],
            vec![vec![0.0], vec![2.0]],
            vec![vec![5.0, 5.0]; 7],
        ] {
            let m = LowerDistanceMatrix::from_points(&points).unwrap();
            let x = classical_mds(&m, 2).unwrap();
            assert_eq!(x.len(), points.len());
            assert!(x.iter().flatten().all(|v| v.is_finite()), "{x:?}");
        }
        // Two points 2 apart: ±1 on the first axis.
        let m = LowerDistanceMatrix::from_points(&[vec![0.0], vec![2.0]]).unwrap();
        let x = classical_mds(&m, 2).unwrap();
        assert!((x[0][0].abs() - 1.0).abs() < 1e-9 && (x[0][0] + x[1][0]).abs() < 1e-9);
        assert!(x[0][1].abs() < 1e-9);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Planar point sets are recovered up to an isometry: pairwise distances agree.
        #[test]
        fn planar_points_keep_their_distances(
            coordinates in proptest::collection::vec((-10.0f64..10.0, -10.0f64..10.0), 3..40)
        ) {
            let points: Vec<Vec<f64>> = coordinates.iter().map(|&(a, b)| vec![a, b]).collect();
            let m = LowerDistanceMatrix::from_points(&points).unwrap();
            let x = classical_mds(&m, 2).unwrap();
            for i in 0..points.len() {
                for j in 0..i {
                    let d = ((x[i][0] - x[j][0]).powi(2) + (x[i][1] - x[j][1]).powi(2)).sqrt();
                    // The metric is stored in f32.
                    let want = f64::from(m.distance(i, j));
                    proptest::prop_assert!((d - want).abs() <= 1e-4 * want.max(1.0), "{} vs {}", d, want);
                }
            }
        }
    }

    #[test]
    fn collapsed_functions_share_one_key_and_others_keep_their_lines() {
        let record = |function: &str, line: u32| TraceRecord {
            index: 0,
            address: 0x1000,
            kind: AccessKind::Load,
            ip: 0,
            function: Some(function.to_owned()),
            file: Some("m.c".to_owned()),
            line: Some(line),
            size: 8,
            frames: Vec::new(),
        };
        let records: Vec<TraceRecord> = [
            ("matmul", 5),
            ("matmul", 6),
            ("init", 2),
            ("init", 3),
            ("main", 9),
        ]
        .iter()
        .cycle()
        .take(20)
        .map(|&(f, l)| record(f, l))
        .collect();
        let options = CyclesOptions {
            window: 3,
            ..CyclesOptions::default()
        };
        let tables = view_tables(&records, &options).unwrap();
        assert_eq!(
            tables.functions_by_count(),
            vec![
                ("init".to_owned(), 8),
                ("matmul".to_owned(), 8),
                ("main".to_owned(), 4)
            ]
        );
        let none = tables.line_keys(&CollapsedFunctions::default());
        assert_eq!(none.labels.len(), 5);
        assert!(none.collapsed.iter().all(|c| !c));
        let init = tables.line_keys(&CollapsedFunctions(vec!["init".into()]));
        assert_eq!(
            init.labels,
            vec!["matmul m.c:5", "matmul m.c:6", "init", "main m.c:9"]
        );
        assert_eq!(init.collapsed, vec![false, false, true, false]);
        assert_eq!(init.key[2], init.key[3]);
        let all_but = tables.line_keys(&CollapsedFunctions(vec!["*".into(), "!matmul".into()]));
        assert_eq!(
            all_but.labels,
            vec!["matmul m.c:5", "matmul m.c:6", "init", "main"]
        );
        assert_eq!(all_but.key.len(), records.len());
    }

    #[test]
    fn labels_fall_back_to_question_marks() {
        let record = |function: Option<&str>, file: Option<&str>, line: Option<u32>| TraceRecord {
            index: 0,
            address: 0x1000,
            kind: AccessKind::Load,
            ip: 0,
            function: function.map(str::to_owned),
            file: file.map(str::to_owned),
            line,
            size: 8,
            frames: Vec::new(),
        };
        assert_eq!(
            source_labels(&record(Some("f"), Some("a.c"), Some(3))),
            ("f a.c:3".to_owned(), "f".to_owned(), "a.c".to_owned())
        );
        assert_eq!(
            source_labels(&record(None, None, None)),
            ("??".to_owned(), "??".to_owned(), "??".to_owned())
        );
        assert_eq!(
            source_labels(&record(Some("f"), None, None)).0,
            "f ??:??".to_owned()
        );
    }
}

//! The histograms' picture: parallel or single, the linked selection over the whole, strips and
//! cluster markers; and the texts of cluster glyphs. Shared by the histograms pane and
//! `memscape render --view histograms|histogram`.

use std::sync::Arc;

use egui::Rect;
use memscape_samples::metrics::{ClusterTree, Metric, WindowScore};
use memscape_samples::{LinkedIndex, LinkedResult, SelectionSpec};

use super::histograms_draw::{self as draw, AxisInput, ClusterMark, Drawn, Scale};

/// Parallel or single.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// These axes, in this order.
    Parallel(Vec<usize>),
    Single(usize),
}

impl Layout {
    /// The axes shown, in order.
    pub fn axes(&self) -> Vec<usize> {
        match self {
            Layout::Parallel(a) => a.clone(),
            Layout::Single(a) => vec![*a],
        }
    }
}

/// Cluster markers along one axis.
pub struct MarkerSet {
    pub axis: usize,
    pub marks: Vec<ClusterMark>,
}

/// What a histograms picture shows besides the data: shared by the pane and `memscape render`.
pub struct HistogramSpec<'a> {
    pub layout: &'a Layout,
    pub scale: Scale,
    /// Window-score strips by axis.
    pub strips: &'a [(usize, Arc<Vec<WindowScore>>)],
    pub markers: Option<&'a MarkerSet>,
    pub hovered_marker: Option<usize>,
}

/// The histograms of `result` (the linked selection `spec`) inside `rect`.
pub fn histograms(
    index: &LinkedIndex,
    result: &LinkedResult,
    spec: &SelectionSpec,
    hs: &HistogramSpec<'_>,
    rect: Rect,
) -> Drawn {
    let input = |a: usize| -> Option<AxisInput<'_>> {
        let axis = index.axes.get(a)?;
        let markers = hs.markers.filter(|m| m.axis == a);
        Some(AxisInput {
            index: a,
            axis,
            selected: (!result.everything)
                .then(|| result.selected_bins.get(a).map(Vec::as_slice))
                .flatten(),
            brush: spec.brush(a),
            strip: hs
                .strips
                .iter()
                .find(|(s, _)| *s == a)
                .map(|(_, v)| v.as_slice()),
            markers: markers.map(|m| m.marks.as_slice()),
            hovered_marker: markers.and(hs.hovered_marker),
        })
    };
    match hs.layout {
        Layout::Parallel(axes) => {
            let inputs: Vec<AxisInput<'_>> = axes.iter().filter_map(|&a| input(a)).collect();
            draw::parallel(&inputs, rect, hs.scale)
        }
        Layout::Single(a) => match input(*a) {
            Some(i) => draw::single(&i, rect, hs.scale),
            None => Drawn::default(),
        },
    }
}

/// The markers of a tree cut into `k` clusters.
pub fn marks_of(tree: &ClusterTree, k: usize) -> Vec<ClusterMark> {
    tree.cut(k)
        .into_iter()
        .map(|n| ClusterMark {
            range: n.range,
            samples: n.samples,
            metric: n.metric,
        })
        .collect()
}

/// `attribute lo … hi`, the end as an offset from the start for long values (time stamps);
/// both ends in one notation (`short` writes integers below 10^16 in full and larger ones
/// with an exponent, which would give `3617250629717268 … 4.283e18`).
pub fn span_text(attribute: &str, lo: f64, hi: f64) -> String {
    let short = memscape_samples::linked::short;
    let huge = lo.abs().max(hi.abs()) >= 1e16;
    let value = |v: f64| {
        if huge && v.is_finite() && v != 0.0 {
            format!("{v:.3e}")
        } else {
            short(v)
        }
    };
    if lo != 0.0 && (hi - lo).abs() < 1e-3 * lo.abs() {
        format!("{attribute} {} … +{}", value(lo), short(hi - lo))
    } else {
        format!("{attribute} {} … {}", value(lo), value(hi))
    }
}

/// A glyph's title (two lines): the cluster's range, then its size and score.
pub fn glyph_title(tree: &ClusterTree, mark: &ClusterMark) -> String {
    format!(
        "{}\n{} samples · {} {} {:.3}",
        span_text(&tree.params.attribute, mark.range[0], mark.range[1]),
        mark.samples,
        tree.params.kind,
        match tree.params.metric {
            Metric::Latency => "latency",
            Metric::Imbalance => "imbalance",
        },
        mark.metric
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_spans_ends_share_one_notation() {
        assert_eq!(
            super::span_text("time", 3_617_250_629_717_268.0, 4.283e18),
            "time 3.617e15 … 4.283e18"
        );
        assert_eq!(super::span_text("line", 12.0, 181.0), "line 12 … 181");
        assert_eq!(
            super::span_text("time", 1.0e15, 1.0e15 + 5000.0),
            "time 1000000000000000 … +5000"
        );
    }
}

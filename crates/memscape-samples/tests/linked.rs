//! The linked selection (`linked::recompute`) against direct computations on the LULESH data:
//! the brushed bitset against per-sample predicates, and every view's numbers (topology
//! aggregate, histogram overlays, offenders, selection panel) against the crate's one-off
//! functions run on that bitset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use memscape_samples::linked::{axis_scores, brush_bits, selection_of};
use memscape_samples::metrics::{Metric, subset_score};
use memscape_samples::{
    AttrKind, AxisBrush, Bitset, Brush, ImportOptions, LinkedIndex, Mapping, OffenderKey, Picked,
    RangeSpec, Samples, SelectionSpec, histogram, load_samples, recompute, select_offender,
    summarize, top_offenders,
};
use memscape_topology::{ResourceKind, Topology, shared_data_dir};

fn lulesh() -> (Samples, Topology, Mapping) {
    let dir = shared_data_dir().join("memaxes/lulesh");
    let samples = load_samples(&dir.join("samples.out"), ImportOptions::default()).unwrap();
    let topology = Topology::from_file(&dir.join("hardware.xml")).unwrap();
    let mapping = Mapping::new(&samples, &topology);
    (samples, topology, mapping)
}

fn value(samples: &Samples, attr: &str, i: usize) -> Option<f64> {
    samples.column(attr).unwrap().value(i)
}

#[test]
fn index_bins_equal_the_histograms() {
    let (samples, _, _) = lulesh();
    let index = LinkedIndex::new(&samples, 24);
    assert_eq!(index.axes.len(), samples.columns.len());
    for (axis, column) in index.axes.iter().zip(&samples.columns) {
        let h = histogram(&samples, &column.name, 24, None).unwrap();
        assert_eq!(axis.bins, h.bins, "{}", column.name);
        assert_eq!(axis.unknown, h.unknown, "{}", column.name);
        // Every sample's bin holds its value.
        for i in 0..samples.len() {
            match (axis.bin_of(i), column.value(i)) {
                (None, None) => {}
                (Some(b), Some(v)) => {
                    let bin = &axis.bins[b];
                    match axis.kind {
                        AttrKind::Qualitative => assert_eq!(bin.lo, v),
                        AttrKind::Quantitative => {
                            assert!(v >= bin.lo - 1e-9 && v <= bin.hi + 1e-9, "{}", column.name)
                        }
                    }
                }
                other => panic!("{}: sample {i}: {other:?}", column.name),
            }
        }
    }
}

#[test]
fn brushes_select_exactly_the_matching_samples() {
    let (samples, _, _) = lulesh();
    let index = LinkedIndex::new(&samples, 32);
    // Quantitative range.
    let lat = index.axis("latency").unwrap();
    let b = AxisBrush {
        axis: lat,
        brush: Brush::Range {
            lo: 30.0,
            hi: 120.0,
        },
    };
    let bits = brush_bits(&samples, &index, &b);
    for i in 0..samples.len() {
        let want = value(&samples, "latency", i).is_some_and(|v| (30.0..=120.0).contains(&v));
        assert_eq!(bits.get(i), want, "sample {i}");
    }
    // Qualitative bins: the first and third cpu values in order of appearance.
    let cpu = index.axis("cpu").unwrap();
    let values = [index.axes[cpu].bins[0].lo, index.axes[cpu].bins[2].lo];
    let c = AxisBrush {
        axis: cpu,
        brush: Brush::Bins(vec![0, 2]),
    };
    let bits = brush_bits(&samples, &index, &c);
    for i in 0..samples.len() {
        let want = value(&samples, "cpu", i).is_some_and(|v| values.contains(&v));
        assert_eq!(bits.get(i), want);
    }
    // The CLI's ATTR=LO..HI on a qualitative axis: the values in the range.
    let spec = RangeSpec::parse("cpu=4..9").unwrap();
    let from = AxisBrush::from_range(&index, &spec).unwrap();
    let bits = brush_bits(&samples, &index, &from);
    assert_eq!(
        bits,
        memscape_samples::select_range(&samples, &spec).unwrap()
    );
    // Unknown values (`source` is `??` in some rows) never match a brush.
    let source = index.axis("source").unwrap();
    let all = Brush::Bins((0..index.axes[source].bins.len() as u32).collect());
    let bits = brush_bits(
        &samples,
        &index,
        &AxisBrush {
            axis: source,
            brush: all,
        },
    );
    let unknown = index.axes[source].unknown as usize;
    assert!(unknown > 0, "LULESH has ?? sources");
    assert_eq!(bits.count(), samples.len() - unknown);
    assert!(AxisBrush::from_range(&index, &RangeSpec::parse("nope=1..2").unwrap()).is_err());
}

#[test]
fn every_view_equals_a_direct_computation_of_the_selection() {
    let (samples, _, mapping) = lulesh();
    let index = LinkedIndex::new(&samples, 32);
    let lat = index.axis("latency").unwrap();
    let z = index.axis("zidx").unwrap();
    // Two element arrays (they have z indices; m_x, a node array, has none).
    let zeta = select_offender(&samples, OffenderKey::Symbol, "m_delv_zeta");
    let vdov = select_offender(&samples, OffenderKey::Symbol, "m_vdov");
    let mut spec = SelectionSpec::default();
    spec.set_brush(AxisBrush {
        axis: lat,
        brush: Brush::Range { lo: 0.0, hi: 60.0 },
    });
    spec.set_brush(AxisBrush {
        axis: z,
        brush: Brush::Range { lo: 3.0, hi: 20.0 },
    });
    // The union of two offenders, as a shift-click builds it.
    spec.picked = Some(Picked {
        label: "m_delv_zeta or m_vdov".into(),
        samples: Arc::new(zeta.union(&vdov)),
        terms: None,
    });
    let direct = Bitset::from_fn(samples.len(), |i| {
        let l = value(&samples, "latency", i).is_some_and(|v| v <= 60.0);
        let zz = value(&samples, "zidx", i).is_some_and(|v| (3.0..=20.0).contains(&v));
        let symbol = samples.symbols.get(samples.symbol[i] as usize);
        let picked = symbol.is_some_and(|s| s == "m_delv_zeta" || s == "m_vdov");
        l && zz && picked
    });
    assert!(
        direct.count() > 100 && direct.count() < samples.len() / 2,
        "{}",
        direct.count()
    );
    let r = recompute(&samples, &mapping, &index, &spec, 10);
    assert_eq!(r.selection, direct);
    assert!(!r.everything);
    assert_eq!(r.aggregate, mapping.aggregate(&samples, Some(&direct)));
    for (a, axis) in index.axes.iter().enumerate() {
        let h = histogram(&samples, &axis.attribute, 32, Some(&direct)).unwrap();
        let want: Vec<u64> = h.bins.iter().map(|b| b.selected).collect();
        assert_eq!(r.selected_bins[a], want, "{}", axis.attribute);
    }
    assert_eq!(
        r.top_lines,
        top_offenders(&samples, OffenderKey::SourceLine, Some(&direct), 10)
    );
    assert_eq!(
        r.top_symbols,
        top_offenders(&samples, OffenderKey::Symbol, Some(&direct), 10)
    );
    assert_eq!(r.summary, summarize(&samples, &direct));
    // The selected part of every offender bar.
    for (code, name) in samples.symbols.iter().enumerate() {
        let mut only = select_offender(&samples, OffenderKey::Symbol, name);
        only.intersect_with(&direct);
        let s = summarize(&samples, &only);
        assert_eq!(r.symbol_totals[code], (s.samples, s.cycles), "{name}");
    }
    for (code, name) in samples.source_lines.iter().enumerate() {
        let mut only = select_offender(&samples, OffenderKey::SourceLine, name);
        only.intersect_with(&direct);
        let s = summarize(&samples, &only);
        assert_eq!(r.line_totals[code], (s.samples, s.cycles), "{name}");
    }
    assert!(spec.describe(&index).contains("latency in [0, 60]"));
    // Nothing selected = everything, with the whole-data numbers.
    let all = recompute(&samples, &mapping, &index, &SelectionSpec::default(), 10);
    assert!(all.everything);
    assert_eq!(all.selection.count(), samples.len());
    assert_eq!(all.aggregate, mapping.aggregate(&samples, None));
    assert_eq!(all.summary.share, 1.0);
    // The same spec through `selection_of` alone.
    assert_eq!(selection_of(&samples, &index, &spec), direct);
}

#[test]
fn qualitative_strips_score_each_value() {
    let (samples, topology, mapping) = lulesh();
    let index = LinkedIndex::new(&samples, 16);
    let cpu = index.axis("cpu").unwrap();
    let scores = axis_scores(
        &samples,
        &topology,
        &mapping,
        &index,
        cpu,
        10,
        Metric::Latency,
        ResourceKind::L1,
    )
    .unwrap();
    assert_eq!(scores.len(), index.axes[cpu].bins.len());
    for (b, s) in scores.iter().enumerate() {
        let only = Bitset::from_fn(samples.len(), |i| index.axes[cpu].bin_of(i) == Some(b));
        assert_eq!(s.samples, only.count() as u64);
        let direct = subset_score(
            &samples,
            &topology,
            &mapping,
            Metric::Latency,
            ResourceKind::L1,
            Some(&only),
        )
        .unwrap();
        assert_eq!(s.metric, direct, "bin {b}");
    }
    // Quantitative: N equal-width windows, exactly `window_scores`.
    let z = index.axis("zidx").unwrap();
    let q = axis_scores(
        &samples,
        &topology,
        &mapping,
        &index,
        z,
        7,
        Metric::Imbalance,
        ResourceKind::Pu,
    )
    .unwrap();
    assert_eq!(q.len(), 7);
    assert_eq!(
        q,
        memscape_samples::metrics::window_scores(
            &samples,
            &topology,
            &mapping,
            "zidx",
            7,
            Metric::Imbalance,
            ResourceKind::Pu,
            None
        )
        .unwrap()
    );
}

mod random {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Any mix of brushes and a picked subset: `recompute` equals the one-off functions on
        /// the selection computed sample by sample.
        #[test]
        fn any_spec_equals_its_direct_computation(
            lat in (0.0f64..400.0, 0.0f64..400.0),
            z in proptest::option::of((0.0f64..32.0, 0.0f64..32.0)),
            cpus in proptest::collection::vec(0u32..32, 0..6),
            every in proptest::option::of(1usize..7),
        ) {
            let (samples, _, mapping) = lulesh_cached();
            let index = LinkedIndex::new(samples, 16);
            let mut spec = SelectionSpec::default();
            let (l0, l1) = (lat.0.min(lat.1), lat.0.max(lat.1));
            spec.set_brush(AxisBrush {
                axis: index.axis("latency").unwrap(),
                brush: Brush::Range { lo: l0, hi: l1 },
            });
            let z = z.map(|(a, b)| (a.min(b), a.max(b)));
            if let Some((z0, z1)) = z {
                spec.set_brush(AxisBrush {
                    axis: index.axis("zidx").unwrap(),
                    brush: Brush::Range { lo: z0, hi: z1 },
                });
            }
            let cpu = index.axis("cpu").unwrap();
            let cpu_bins: Vec<u32> = cpus
                .iter()
                .copied()
                .filter(|&b| (b as usize) < index.axes[cpu].bins.len())
                .collect();
            if !cpus.is_empty() {
                spec.set_brush(AxisBrush { axis: cpu, brush: Brush::Bins(cpu_bins.clone()) });
            }
            if let Some(k) = every {
                spec.picked = Some(Picked {
                    label: format!("every {k}"),
                    samples: Arc::new(Bitset::from_fn(samples.len(), |i| i % k == 0)),
                    terms: None,
                });
            }
            let direct = Bitset::from_fn(samples.len(), |i| {
                let l = value(samples, "latency", i).is_some_and(|v| v >= l0 && v <= l1);
                let zz = z.is_none_or(|(z0, z1)| {
                    value(samples, "zidx", i).is_some_and(|v| v >= z0 && v <= z1)
                });
                let c = cpus.is_empty()
                    || index.axes[cpu]
                        .bin_of(i)
                        .is_some_and(|b| cpu_bins.contains(&(b as u32)));
                let p = every.is_none_or(|k| i % k == 0);
                l && zz && c && p
            });
            let r = recompute(samples, mapping, &index, &spec, 8);
            prop_assert_eq!(&r.selection, &direct);
            prop_assert_eq!(&r.aggregate, &mapping.aggregate(samples, Some(&direct)));
            for (a, axis) in index.axes.iter().enumerate() {
                let h = histogram(samples, &axis.attribute, 16, Some(&direct)).unwrap();
                let want: Vec<u64> = h.bins.iter().map(|b| b.selected).collect();
                prop_assert_eq!(&r.selected_bins[a], &want);
            }
            prop_assert_eq!(
                &r.top_symbols,
                &top_offenders(samples, OffenderKey::Symbol, Some(&direct), 8)
            );
            prop_assert_eq!(&r.summary, &summarize(samples, &direct));
        }
    }

    fn lulesh_cached() -> &'static (Samples, Topology, Mapping) {
        static DATA: std::sync::OnceLock<(Samples, Topology, Mapping)> = std::sync::OnceLock::new();
        DATA.get_or_init(lulesh)
    }
}

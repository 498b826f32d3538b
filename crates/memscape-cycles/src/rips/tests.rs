//! The engine against its plain paths and against invariants (ripser.py comparisons are in
//! `tests/ripser_oracle.rs`).

use std::collections::BinaryHeap;

use super::column::RadixHeap;
use super::reduce::REDERIVED;
use super::*;
use crate::metric::LowerDistanceMatrix;

fn circle(n: usize) -> LowerDistanceMatrix {
    let points: Vec<Vec<f64>> = (0..n)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / n as f64;
            vec![a.cos(), a.sin()]
        })
        .collect();
    LowerDistanceMatrix::from_points(&points).unwrap()
}

#[test]
fn a_circle_has_one_long_h1_bar_and_one_component() {
    let result = rips_persistence(
        &circle(24),
        &RipsOptions {
            cocycles: true,
            ..RipsOptions::default()
        },
    )
    .unwrap();
    let dims = &result.barcode.dims;
    assert_eq!(dims[0].iter().filter(|b| b.1.is_none()).count(), 1);
    assert_eq!(dims[0].len(), 24);
    assert_eq!(dims[1].len(), 1, "{:?}", dims[1]);
    let bar = dims[1][0];
    assert!(bar.0 < 0.3 && bar.1.unwrap() > 1.5, "{bar:?}");
    assert_eq!(result.cocycles.len(), 1);
    assert!(!result.cocycles[0].entries.is_empty());
}

#[test]
fn binomials_and_vertices_round_trip() {
    let m = circle(10);
    let engine = Rips {
        dist: &m,
        n: 10,
        dim_max: 2,
        threshold: 10.0,
        modulus: 2,
        inverse: multiplicative_inverses(2),
        binomials: Binomials::new(10, 4).unwrap(),
        control: &Control::new(),
        keep_cocycles: false,
        store_bytes: MAX_STORED_BYTES,
        level_by_level: true,
        neighbors: None,
    };
    // {7, 4, 1}: C(7,3) + C(4,2) + C(1,1) = 35 + 6 + 1.
    let v = engine.simplex_vertices(42, 2);
    assert_eq!(v.as_slice(), &[7, 4, 1]);
    assert!(Binomials::new(100_000, 12).is_err());
    assert_eq!(multiplicative_inverses(47)[5] * 5 % 47, 1);
}

/// Windows of a synthetic trace with nested loops and noise: a Levenshtein metric with the
/// ties of real ones.
fn loop_windows(records: usize, seed: u64) -> crate::metric::ByteDistanceMatrix {
    let mut state = seed;
    let mut symbols = Vec::with_capacity(records);
    let mut k = 0u32;
    while symbols.len() < records {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let noise = (state >> 33).is_multiple_of(5);
        symbols.push(if noise {
            100 + (state >> 40) as u32 % 1000
        } else {
            k % 61
        });
        k += 1;
    }
    let windows = crate::levenshtein::make_windows(&symbols, 10).unwrap();
    crate::levenshtein::window_distances(&windows, 1100).unwrap()
}

fn sorted_bars(bars: &[Bar]) -> Vec<(f32, Option<f32>)> {
    let mut v: Vec<_> = bars.iter().map(|b| (b.0, b.1)).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

#[test]
fn cone_cut_and_sparse_lists_change_nothing() {
    let m = loop_windows(500, 7);
    // Both shortcuts must really be taken on this input.
    let radius = enclosing_radius(&m);
    let (below, _) = largest_length_below(&m, radius).unwrap();
    assert!(neighbor_lists(&m, below).is_some(), "{} windows", m.size());
    let options = RipsOptions {
        max_dim: 1,
        modulus: 3,
        cocycles: true,
        ..RipsOptions::default()
    };
    let plain = persistence_with(
        &m,
        &options,
        Shortcuts {
            cone_cut: false,
            sparse: false,
            ..Shortcuts::ALL
        },
        &Control::new(),
    )
    .unwrap();
    assert!(plain.barcode.dims[1].len() > 3);
    for shortcuts in [
        Shortcuts::ALL,
        Shortcuts {
            cone_cut: true,
            sparse: false,
            ..Shortcuts::ALL
        },
        Shortcuts {
            cone_cut: false,
            sparse: true,
            ..Shortcuts::ALL
        },
    ] {
        let fast = persistence_with(&m, &options, shortcuts, &Control::new()).unwrap();
        // Same bars in the same (Ripser's) order, H0 included.
        assert_eq!(fast.barcode, plain.barcode, "{shortcuts:?}");
        assert_eq!(fast.threshold, plain.threshold);
        // One cocycle per H1 bar, each a cocycle mod p on the triangles present before its
        // death (the representative may differ; the class may not).
        assert_eq!(fast.cocycles.len(), fast.barcode.dims[1].len());
        for cocycle in &fast.cocycles {
            assert_cocycle(&m, cocycle, 3);
        }
    }
    // The f32 copy of the metric takes the wide heap keys; same bars.
    let wide = rips_persistence(&m.to_f32(), &options).unwrap();
    for dim in 0..=1 {
        assert_eq!(
            sorted_bars(&wide.barcode.dims[dim]),
            sorted_bars(&plain.barcode.dims[dim])
        );
    }
    // Reduced columns that do not fit in the store are re-derived from V when added: the
    // same sums, so the same pairs and the same cocycles, with no room at all or a little
    // (narrow and wide keys).
    let full = rips_persistence(&m, &options).unwrap();
    for store_bytes in [0, 1 << 12, 1 << 16] {
        let small_store = Shortcuts {
            store_bytes,
            ..Shortcuts::ALL
        };
        REDERIVED.with(|count| count.set(0));
        let narrow = persistence_with(&m, &options, small_store, &Control::new()).unwrap();
        assert_eq!(narrow, full, "store of {store_bytes} bytes");
        if store_bytes == 0 {
            assert!(REDERIVED.with(std::cell::Cell::get) > 0);
        }
        let wide_small =
            persistence_with(&m.to_f32(), &options, small_store, &Control::new()).unwrap();
        assert_eq!(wide_small, wide, "store of {store_bytes} bytes, wide keys");
    }
    // Level by level or whole columns: the same pivots and the same V, so the same
    // result, cocycles included; with a small store too (re-derived columns).
    for store_bytes in [MAX_STORED_BYTES, 1 << 12] {
        let whole = Shortcuts {
            level_by_level: false,
            store_bytes,
            ..Shortcuts::ALL
        };
        let by_level = Shortcuts {
            store_bytes,
            ..Shortcuts::ALL
        };
        assert_eq!(
            persistence_with(&m, &options, whole, &Control::new()).unwrap(),
            persistence_with(&m, &options, by_level, &Control::new()).unwrap()
        );
    }
    // Dimension 2 (the sparse enumeration of new simplices), sparse against dense.
    let options = RipsOptions {
        max_dim: 2,
        ..options
    };
    let sparse = rips_persistence(&m, &options).unwrap();
    let dense = persistence_with(
        &m,
        &options,
        Shortcuts {
            cone_cut: true,
            sparse: false,
            ..Shortcuts::ALL
        },
        &Control::new(),
    )
    .unwrap();
    assert_eq!(sparse.barcode, dense.barcode);
    assert_eq!(sparse.barcode.dims[1], plain.barcode.dims[1]);
}

/// The edge collapse keeps both barcodes (as multisets: tied bars may come in another
/// order) and its cocycles, extended back, are cocycles of the original complex.
#[test]
fn edge_collapse_keeps_barcodes_and_extends_cocycles() {
    let m = loop_windows(700, 11);
    let options = RipsOptions {
        max_dim: 1,
        modulus: 5,
        cocycles: true,
        ..RipsOptions::default()
    };
    let plain = persistence_with(&m, &options, Shortcuts::ALL, &Control::new()).unwrap();
    assert!(plain.collapse.is_none(), "below the size gate");
    let collapsing = Shortcuts {
        collapse_min_edges: 0,
        ..Shortcuts::ALL
    };
    let collapsed = persistence_with(&m, &options, collapsing, &Control::new()).unwrap();
    let log = collapsed.collapse.as_ref().expect("collapsed");
    assert!(log.removed > log.edges / 10, "{log:?}");
    assert!(log.delayed > 0);
    assert!(plain.barcode.dims[1].len() > 10);
    for dim in 0..=1 {
        assert_eq!(
            sorted_bars(&collapsed.barcode.dims[dim]),
            sorted_bars(&plain.barcode.dims[dim]),
            "H{dim}"
        );
    }
    assert_eq!(collapsed.threshold, plain.threshold);
    // Also below the cone, with a threshold inside the filtration, and without the cone
    // cut (the collapse then runs up to the enclosing radius).
    for (threshold, cone_cut) in [(Some(4.0), true), (None, false)] {
        let options = RipsOptions {
            threshold,
            ..options
        };
        let a = persistence_with(
            &m,
            &options,
            Shortcuts {
                cone_cut,
                ..Shortcuts::ALL
            },
            &Control::new(),
        )
        .unwrap();
        let b = persistence_with(
            &m,
            &options,
            Shortcuts {
                cone_cut,
                ..collapsing
            },
            &Control::new(),
        )
        .unwrap();
        assert!(b.collapse.is_some());
        for dim in 0..=1 {
            assert_eq!(
                sorted_bars(&a.barcode.dims[dim]),
                sorted_bars(&b.barcode.dims[dim])
            );
        }
    }
    // Extended cocycles: δα = 0 mod p on every triangle of the original complex at ε,
    // for ε at the birth and inside each bar; the restriction to the collapsed complex is
    // the computed cocycle.
    let mut extended_edges = 0;
    for (k, cocycle) in collapsed.cocycles.iter().enumerate() {
        let death = cocycle.bar.1.unwrap_or(collapsed.threshold);
        for epsilon in [cocycle.bar.0, (cocycle.bar.0 + death) / 2.0] {
            if epsilon >= death {
                continue;
            }
            let lifted = collapsed.lifted_cocycle_at(k, 5, epsilon);
            assert!(!lifted.is_empty());
            let outside = lifted
                .iter()
                .filter(|&&(i, j, _)| !cocycle.entries.iter().any(|e| e.i == i && e.j == j))
                .count();
            extended_edges += outside;
            assert_integer_cocycle_mod(&m, &lifted, epsilon, 5);
        }
    }
    assert!(extended_edges > 0, "no cocycle needed an extension");
}

/// An integer metric on a circle of 90 points (hop distance / 3, rounded up: levels 1..15):
/// with and without the collapse, the longest bar gives the same circular coordinate up to
/// rotation and reflection.
#[test]
fn edge_collapse_gives_the_same_circular_coordinates() {
    let n = 90usize;
    let mut entries = Vec::new();
    for i in 0..n {
        for j in 0..i {
            let hop = (i - j).min(n - (i - j));
            entries.push(hop.div_ceil(3) as u8);
        }
    }
    let m = crate::metric::ByteDistanceMatrix::from_lower_triangle(entries).unwrap();
    let options = RipsOptions {
        cocycles: true,
        ..RipsOptions::default()
    };
    let plain = persistence_with(&m, &options, Shortcuts::ALL, &Control::new()).unwrap();
    let collapsed = persistence_with(
        &m,
        &options,
        Shortcuts {
            collapse_min_edges: 0,
            ..Shortcuts::ALL
        },
        &Control::new(),
    )
    .unwrap();
    let log = collapsed.collapse.as_ref().unwrap();
    assert!(log.removed > 0 && log.segments() > 0, "{log:?}");
    assert_eq!(
        sorted_bars(&collapsed.barcode.dims[1]),
        sorted_bars(&plain.barcode.dims[1])
    );
    let longest = |r: &RipsResult| {
        (0..r.barcode.dims[1].len())
            .max_by(|&a, &b| {
                r.barcode.dims[1][a]
                    .persistence()
                    .total_cmp(&r.barcode.dims[1][b].persistence())
            })
            .unwrap()
    };
    let (kp, kc) = (longest(&plain), longest(&collapsed));
    let bar = plain.barcode.dims[1][kp];
    assert_eq!(bar, collapsed.barcode.dims[1][kc]);
    assert!(bar.persistence() >= 5.0, "{bar:?}");
    let epsilon = (bar.0 + bar.1.unwrap()) / 2.0;
    let a = crate::circular::circular_coordinates_of_lift(
        &m,
        plain.lifted_cocycle_at(kp, 47, epsilon).into_iter(),
        epsilon,
    );
    let lifted = collapsed.lifted_cocycle_at(kc, 47, epsilon);
    assert_integer_cocycle_mod(&m, &lifted, epsilon, 47);
    let b = crate::circular::circular_coordinates_of_lift(&m, lifted.into_iter(), epsilon);
    assert!(a.lift_is_cocycle && b.lift_is_cocycle);
    let mut ta = a.theta.clone();
    ta.push(ta[0]);
    let mut tb = b.theta.clone();
    tb.push(tb[0]);
    assert!((crate::circular::winding_number(&ta).abs() - 1.0).abs() < 1e-6);
    assert!((crate::circular::winding_number(&tb).abs() - 1.0).abs() < 1e-6);
    // θ_b = ±θ_a + shift: the differences of consecutive points agree up to sign.
    let steps = |t: &[f64]| -> Vec<f64> {
        t.windows(2)
            .map(|w| {
                let d = w[1] - w[0];
                d - d.round()
            })
            .collect()
    };
    let (sa, sb) = (steps(&ta), steps(&tb));
    let same = sa.iter().zip(&sb).all(|(x, y)| (x - y).abs() < 1e-6);
    let mirrored = sa.iter().zip(&sb).all(|(x, y)| (x + y).abs() < 1e-6);
    assert!(same || mirrored, "{sa:?}\n{sb:?}");
}

/// δα = 0 mod p on every triangle of the complex at `epsilon` touching the support.
fn assert_integer_cocycle_mod(
    m: &crate::metric::ByteDistanceMatrix,
    alpha: &[(u32, u32, i64)],
    epsilon: Value,
    p: i64,
) {
    let map: HashMap<(u32, u32), i64> = alpha.iter().map(|&(i, j, a)| ((i, j), a)).collect();
    let a = |x: u32, y: u32| -> i64 {
        if x > y {
            map.get(&(x, y)).copied().unwrap_or(0)
        } else {
            -map.get(&(y, x)).copied().unwrap_or(0)
        }
    };
    let n = m.size() as u32;
    for &(i, j, _) in alpha {
        if m.distance(i as usize, j as usize) > epsilon {
            continue;
        }
        for k in 0..n {
            if k == i || k == j {
                continue;
            }
            let d = m
                .distance(i as usize, k as usize)
                .max(m.distance(j as usize, k as usize));
            if d > epsilon {
                continue;
            }
            let delta = a(i, j) + a(j, k) + a(k, i);
            assert_eq!(delta.rem_euclid(p), 0, "triangle {i} {j} {k} at {epsilon}");
        }
    }
}

/// δα = 0 mod p on every triangle with diameter below the cocycle's death.
fn assert_cocycle(m: &crate::metric::ByteDistanceMatrix, cocycle: &Cocycle, p: u32) {
    let below = cocycle.bar.1.unwrap_or(Value::INFINITY);
    let mut alpha = HashMap::new();
    for e in &cocycle.entries {
        alpha.insert((e.i, e.j), u32::from(e.coefficient));
    }
    let a = |x: u32, y: u32| alpha.get(&(x.max(y), x.min(y))).copied().unwrap_or(0);
    let n = m.size() as u32;
    for &(i, j) in alpha.keys() {
        for k in 0..n {
            if k == i || k == j {
                continue;
            }
            let d = m
                .distance(i as usize, j as usize)
                .max(m.distance(i as usize, k as usize))
                .max(m.distance(j as usize, k as usize));
            if d >= below {
                continue;
            }
            let mut t = [i, j, k];
            t.sort_unstable_by(|x, y| y.cmp(x));
            let [x, y, z] = t;
            let delta = (a(y, z) + (p - a(x, z)) + a(x, y)) % p;
            assert_eq!(delta, 0, "triangle {t:?} of {:?}", cocycle.bar);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// The radix heap pops what a binary min-heap pops, also when keys below the last
    /// minimum are pushed (they go to its side heap).
    #[test]
    fn radix_heap_is_a_min_heap(
        operations in proptest::collection::vec((0u8..3, 0u64..1 << 40), 1..300)
    ) {
        let mut radix = RadixHeap::default();
        let mut reference = BinaryHeap::new();
        for (op, key) in operations {
            if op < 2 {
                radix.push(key);
                reference.push(std::cmp::Reverse(key));
            } else {
                proptest::prop_assert_eq!(radix.peek_min(), reference.peek().map(|r| r.0));
                radix.pop_min();
                reference.pop();
            }
            proptest::prop_assert_eq!(radix.len(), reference.len());
        }
        let mut rest = radix.take_all();
        rest.sort_unstable();
        let mut want: Vec<u64> = reference.into_iter().map(|r| r.0).collect();
        want.sort_unstable();
        proptest::prop_assert_eq!(rest, want);
    }
}

#[test]
fn rejects_bad_parameters() {
    let m = circle(5);
    let opts = RipsOptions {
        modulus: 4,
        ..RipsOptions::default()
    };
    assert!(rips_persistence(&m, &opts).is_err());
}

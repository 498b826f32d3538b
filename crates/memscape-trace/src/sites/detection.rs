//! Wrapper detection ([`super::detect_from_bytes`]'s rounds) continued over a live recording's
//! snapshots: each round's effective sites and its sums of bytes by site and by frame
//! identity are kept ([`DetectionCarry`]), and the next snapshot adds only the bytes that grew
//! (the new blocks' sites) and lays out only the new call-tree nodes, for as long as every
//! round reaches the verdict it reached before; from the first round whose verdict differs it
//! is the whole pass again. Equal to detection from scratch (tested at every snapshot of a
//! replayed trace, `tests/sites_continued.rs`).
//!
//! Why that holds: an old node's frame, parent and rules' classification never change, so its
//! effective site in a round depends only on the wrappers accepted before it; a node's bytes
//! only grow, so the sums are the old ones plus the growth; and a frame identity that did not
//! grow cannot reach the share it missed before, the total having grown (the candidates are
//! the identities that were at the share, and those that grew).

use std::collections::{HashMap, HashSet};

use super::{
    CHAIN_LIMIT, CHAIN_SHARE, DETECT_CALLER_SHARE, DETECT_MIN_CALLERS, DETECT_MIN_SHARE,
    DETECT_ROUNDS, DetectedWrapper, Sites, WrapperKind, frame_identity, parent_of, short_function,
};
use crate::model::{FLAG_MMAP, Trace};

/// An effective site not resolved by the walk outwards (every frame above is a wrapper): the
/// innermost named frame is the site.
const NONE: u32 = u32::MAX;

/// What one snapshot's detection leaves for the next ([`super::SiteRules`] carries it).
#[derive(Debug, Clone, Default)]
pub(super) struct DetectionCarry {
    /// Heap bytes ever allocated per call-tree node.
    own: Vec<u64>,
    /// When `own` was summed from the trace's blocks: how many, and the last one's allocation
    /// event (a cheap check that a later trace extends them).
    blocks: Option<(usize, Option<u64>)>,
    /// Per node: its innermost named frame (the same in every round: detection never marks
    /// plumbing).
    named: Vec<u32>,
    rounds: Vec<Round>,
    /// The kinds and the sites (before the named frames fill them in) after the last round.
    kind: Vec<WrapperKind>,
    site: Vec<u32>,
    /// Rounds whose sums were continued from the last snapshot's (the rest summed whole).
    pub(super) continued: usize,
}

/// One round as it went.
#[derive(Debug, Clone)]
struct Round {
    /// Per node: its effective site in this round, [`NONE`] where it is the named frame.
    site: Vec<u32>,
    /// Heap bytes per effective site, per frame identity of the effective site, and each
    /// identity's effective sites with bytes (the candidate's nodes without a scan).
    at: HashMap<u32, u64>,
    by_identity: HashMap<u64, u64>,
    sites_of: HashMap<u64, Vec<u32>>,
    /// The identities at [`DETECT_MIN_SHARE`] of the bytes or more.
    heavy: Vec<u64>,
    verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    /// No candidate left: detection ended.
    Ended,
    Rejected(u64),
    /// A wrapper: every node of these frame identities (sorted) that no rule classifies.
    Accepted(Vec<u64>),
}

/// Heap bytes per call-tree node summed from the trace's blocks, continuing `carry`'s sums
/// where the trace's first blocks are the ones it summed; with how many were summed.
pub(super) fn own_from_blocks(
    trace: &Trace,
    carry: Option<&DetectionCarry>,
) -> (Vec<u64>, (usize, Option<u64>)) {
    let b = &trace.blocks;
    let n = b.len();
    let last_alloc = |count: usize| count.checked_sub(1).map(|i| b.alloc_event[i]);
    let kept = carry.and_then(|c| {
        let (count, last) = c.blocks?;
        (count <= n && last_alloc(count) == last && c.own.len() <= trace.call_tree.len())
            .then(|| (c.own.clone(), count))
    });
    let (mut own, from) = kept.unwrap_or_default();
    own.resize(trace.call_tree.len(), 0);
    let (site, size, flags) = (
        b.site.as_slice(),
        b.requested_size.as_slice(),
        b.flags.as_slice(),
    );
    for i in from..n {
        if flags[i] & FLAG_MMAP == 0
            && let Some(slot) = own.get_mut(site[i] as usize)
        {
            *slot = slot.saturating_add(size[i]);
        }
    }
    (own, (n, last_alloc(n)))
}

/// The effective sites of `kind` before the named frames fill them in (as [`Sites::resolve`])
/// for the nodes from `from` on, `site` holding the earlier ones; and the named frames into
/// `named` when given.
pub(super) fn resolve_from(
    trace: &Trace,
    kind: impl Fn(usize) -> WrapperKind,
    from: usize,
    site: &mut Vec<u32>,
    mut named: Option<&mut Vec<u32>>,
) {
    let n = trace.call_tree.len();
    site.resize(n, NONE);
    if let Some(named) = named.as_deref_mut() {
        named.resize(n, 0);
    }
    for node in from.max(1)..n {
        let id = node as u32;
        let p = parent_of(trace, id) as usize;
        let k = kind(node);
        if let Some(named) = named.as_deref_mut() {
            named[node] = if k == WrapperKind::Plumbing && p != 0 {
                named[p]
            } else {
                id
            };
        }
        site[node] = if k == WrapperKind::None {
            id
        } else if p != 0 {
            site[p]
        } else {
            NONE
        };
    }
}

fn effective(site: &[u32], named: &[u32], node: usize) -> u32 {
    match site[node] {
        NONE => named[node],
        s => s,
    }
}

impl Round {
    /// A round summed over every node.
    fn whole(trace: &Trace, site: Vec<u32>, named: &[u32], own: &[u64]) -> Self {
        let mut round = Self {
            site,
            at: HashMap::new(),
            by_identity: HashMap::new(),
            sites_of: HashMap::new(),
            heavy: Vec::new(),
            verdict: Verdict::Ended,
        };
        for (node, &bytes) in own.iter().enumerate().skip(1) {
            round.add(trace, named, node, bytes);
        }
        round.heavy = round.by_identity.keys().copied().collect();
        round
    }

    /// Adds `bytes` at `node`'s effective site; the identity it grew.
    fn add(&mut self, trace: &Trace, named: &[u32], node: usize, bytes: u64) -> Option<u64> {
        let s = effective(&self.site, named, node);
        if bytes == 0 || s == 0 {
            return None;
        }
        let identity = frame_identity(trace, s);
        let slot = self.at.entry(s).or_default();
        if *slot == 0 {
            self.sites_of.entry(identity).or_default().push(s);
        }
        *slot = slot.saturating_add(bytes);
        let slot = self.by_identity.entry(identity).or_default();
        *slot = slot.saturating_add(bytes);
        Some(identity)
    }

    /// The largest identity at the share among `heavy` (kept to those at it), none rejected.
    fn candidate(&mut self, total: u64, rejected: &[u64]) -> Option<(u64, u64)> {
        let by_identity = &self.by_identity;
        let bytes = |id: &u64| by_identity.get(id).copied().unwrap_or(0);
        self.heavy.sort_unstable();
        self.heavy.dedup();
        self.heavy
            .retain(|id| bytes(id) as f64 >= DETECT_MIN_SHARE * total as f64);
        self.heavy
            .iter()
            .filter(|id| !rejected.contains(id))
            .map(|&id| (id, bytes(&id)))
            .min_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)))
    }

    /// The round's verdict on its candidate `identity` of `bytes`, and the wrapper found.
    fn judge(
        &self,
        trace: &Trace,
        identity: u64,
        bytes: u64,
        total: u64,
    ) -> (Verdict, Option<DetectedWrapper>) {
        let mut level: Vec<(u32, u64)> = self
            .sites_of
            .get(&identity)
            .into_iter()
            .flatten()
            .map(|&s| (s, self.at.get(&s).copied().unwrap_or(0)))
            .collect();
        level.sort_unstable();
        let (chain, callers) = chain_of(trace, level, bytes, total);
        if callers < DETECT_MIN_CALLERS {
            return (Verdict::Rejected(identity), None);
        }
        let mut ids: Vec<u64> = chain
            .iter()
            .flatten()
            .map(|&(node, _)| frame_identity(trace, node))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let wrapper = DetectedWrapper {
            frames: chain
                .iter()
                .filter_map(|links| links.first())
                .map(|&(node, _)| short_function(trace, node))
                .collect(),
            bytes,
            share: bytes as f64 / total as f64,
            callers,
        };
        (Verdict::Accepted(ids), Some(wrapper))
    }
}

/// From a candidate's nodes (`level`, sorted, with their bytes) of `bytes` in all: the chain
/// of single callers of its module above it, and its distinct callers bringing ≥ 1 % each
/// (of `total` heap bytes, for the log).
pub(super) fn chain_of(
    trace: &Trace,
    mut level: Vec<(u32, u64)>,
    bytes: u64,
    total: u64,
) -> (Vec<Vec<(u32, u64)>>, usize) {
    let Some(&(first, _)) = level.first() else {
        return (Vec::new(), 0);
    };
    let module = trace.call_tree.frames[first as usize].module;
    let mut chain = vec![level.clone()];
    let callers = loop {
        let mut callers: HashMap<u64, u64> = HashMap::new();
        for &(node, b) in &level {
            let p = parent_of(trace, node);
            let slot = callers.entry(frame_identity(trace, p)).or_default();
            *slot = slot.saturating_add(b);
        }
        let (top_id, top_bytes) = callers
            .iter()
            .max_by_key(|&(id, b)| (*b, std::cmp::Reverse(*id)))
            .map_or((0, 0), |(&id, &b)| (id, b));
        let single = top_bytes as f64 >= CHAIN_SHARE * bytes as f64 && top_id != 0;
        let next: Vec<(u32, u64)> = level
            .iter()
            .map(|&(node, b)| (parent_of(trace, node), b))
            .filter(|&(p, _)| p != 0 && frame_identity(trace, p) == top_id)
            .collect();
        let same_module = next
            .first()
            .is_some_and(|&(p, _)| trace.call_tree.frames[p as usize].module == module);
        if single && same_module && chain.len() < CHAIN_LIMIT {
            let mut merged: HashMap<u32, u64> = HashMap::new();
            for (p, b) in next {
                let slot = merged.entry(p).or_default();
                *slot = slot.saturating_add(b);
            }
            level = merged.into_iter().collect();
            level.sort_unstable();
            chain.push(level.clone());
            continue;
        }
        break callers
            .values()
            .filter(|&&b| b as f64 >= DETECT_CALLER_SHARE * bytes as f64)
            .count();
    };
    tracing::debug!(
        "wrapper candidate {} ({:.0} % of heap bytes): chain of {}, {callers} callers",
        short_function(trace, level[0].0),
        bytes as f64 * 100.0 / total.max(1) as f64,
        chain.len()
    );
    (chain, callers)
}

/// The kind of `node` once the wrappers of `accepted` are marked, from its rules' `kind`.
fn marked(trace: &Trace, node: usize, kind: WrapperKind, accepted: &HashSet<u64>) -> WrapperKind {
    if kind == WrapperKind::None && accepted.contains(&frame_identity(trace, node as u32)) {
        WrapperKind::Detected
    } else {
        kind
    }
}

/// Detection on `sites` (classified by the rules, not detected yet) from `own`, the heap bytes
/// ever allocated per node, continuing `carry` where it fits; what the next snapshot continues.
/// `blocks`: how many blocks `own` was summed from, when it was.
pub(super) fn detect_continued(
    trace: &Trace,
    sites: &mut Sites,
    mut own: Vec<u64>,
    blocks: Option<(usize, Option<u64>)>,
    carry: Option<Box<DetectionCarry>>,
) -> Box<DetectionCarry> {
    let n = trace.call_tree.len();
    own.resize(n, 0);
    let total: u64 = own.iter().fold(0u64, |a, &x| a.saturating_add(x));
    // The carry fits a call tree that extends its own and bytes that only grew.
    let carry = carry.filter(|c| {
        let old = c.own.len();
        old <= n
            && old >= 1
            && c.named.len() == old
            && c.site.len() == old
            && c.kind.len() == old
            && c.rounds.iter().all(|r| r.site.len() == old)
            && own[..old].iter().zip(&c.own).all(|(now, was)| now >= was)
    });
    let old_n = carry.as_ref().map_or(0, |c| c.own.len());
    let DetectionCarry {
        own: own_was,
        mut named,
        rounds: old_rounds,
        kind: mut final_kind,
        site: mut final_site,
        ..
    } = carry.map(|c| *c).unwrap_or_default();
    // The nodes whose bytes grew, by how much.
    let growth: Vec<(usize, u64)> = own
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, &now)| {
            let was = own_was.get(i).copied().unwrap_or(0);
            (now > was).then(|| (i, now - was))
        })
        .collect();
    drop(own_was);
    let rules_kind = sites.kind.clone();
    resolve_from(
        trace,
        |i| rules_kind[i],
        old_n,
        &mut Vec::new(),
        Some(&mut named),
    );
    let mut rounds: Vec<Round> = Vec::new();
    let mut accepted: HashSet<u64> = HashSet::new();
    let mut rejected: Vec<u64> = Vec::new();
    // While every round reaches the verdict it reached before, its sums are continued; from
    // the first that does not, the rounds are summed over every node.
    let mut same = old_n > 0;
    let mut old_rounds = old_rounds.into_iter();
    // Whole rounds start from the kinds of every node with the wrappers accepted so far.
    let mut whole_kind: Option<Vec<WrapperKind>> = None;
    let mut continued = 0;
    if total > 0 {
        for _ in 0..DETECT_ROUNDS {
            let carried = if same { old_rounds.next() } else { None };
            let (mut round, was) = match carried {
                Some(mut round) => {
                    let kind_of = |i: usize| marked(trace, i, rules_kind[i], &accepted);
                    resolve_from(trace, kind_of, old_n, &mut round.site, None);
                    let mut grew = Vec::new();
                    for &(node, bytes) in &growth {
                        grew.extend(round.add(trace, &named, node, bytes));
                    }
                    round.heavy.extend(grew);
                    let was = std::mem::replace(&mut round.verdict, Verdict::Ended);
                    continued += 1;
                    (round, Some(was))
                }
                None => {
                    same = false;
                    let kind = whole_kind.get_or_insert_with(|| {
                        (0..n)
                            .map(|i| marked(trace, i, rules_kind[i], &accepted))
                            .collect()
                    });
                    let mut site = Vec::new();
                    resolve_from(trace, |i| kind[i], 0, &mut site, None);
                    (Round::whole(trace, site, &named, &own), None)
                }
            };
            let verdict = match round.candidate(total, &rejected) {
                None => Verdict::Ended,
                Some((identity, bytes)) => {
                    let (verdict, wrapper) = round.judge(trace, identity, bytes, total);
                    sites.detected.extend(wrapper);
                    verdict
                }
            };
            same &= was.as_ref() == Some(&verdict);
            round.verdict = verdict.clone();
            rounds.push(round);
            match verdict {
                Verdict::Ended => break,
                Verdict::Rejected(identity) => rejected.push(identity),
                Verdict::Accepted(ids) => {
                    accepted.extend(ids);
                    if let Some(kind) = &mut whole_kind {
                        for (i, k) in kind.iter_mut().enumerate().skip(1) {
                            *k = marked(trace, i, *k, &accepted);
                        }
                    }
                }
            }
        }
    } else {
        same = false;
    }
    // The kinds and sites after the last round: the last snapshot's, extended, while every
    // verdict was the same.
    let kind = if same {
        final_kind.extend((old_n..n).map(|i| marked(trace, i, rules_kind[i], &accepted)));
        final_kind
    } else {
        whole_kind.unwrap_or_else(|| {
            (0..n)
                .map(|i| marked(trace, i, rules_kind[i], &accepted))
                .collect()
        })
    };
    if !same {
        final_site.clear();
    }
    let from = if same { old_n } else { 0 };
    resolve_from(trace, |i| kind[i], from, &mut final_site, None);
    sites.site = (0..n)
        .map(|i| {
            if i == 0 {
                NONE
            } else {
                effective(&final_site, &named, i)
            }
        })
        .collect();
    sites.kind = kind.clone();
    Box::new(DetectionCarry {
        own,
        blocks,
        named,
        rounds,
        kind,
        site: final_site,
        continued,
    })
}

//! Context-modelled entropy coding of u64 sequences for `.msc` (packing 4): a range coder
//! driven by adaptive frequency tables in the style of PPM (method C escapes). Each value is
//! looked up among the values seen before in its most specific context; if it was never seen
//! there, an escape is coded and the next, less specific context is tried; a value new to every
//! context is coded by its bit length (adaptive, in a small context) and its low bits (flat).
//!
//! The contexts of value `i` are computed by the caller from data the decoder has before it
//! decodes this section (for event times: whether the event and the one before are allocations
//! or frees, and the call sites of their blocks), never from the values themselves, so both
//! sides see the same sequence of contexts.
//!
//! Decoding arbitrary bytes never panics or loops: the range decoder reads zeros past the end
//! of its input, every division is by a value ≥ 256, and the output has exactly the requested
//! length. Garbage in, garbage values out; the callers repair what the views need.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::builder::PointerHasher;

/// How many context orders a value is coded with (most specific first).
pub(crate) const ORDERS: usize = 3;
/// Counts are halved when a table's total (counts + escape weight) would exceed this; the
/// range coder needs totals ≤ 2^16.
const MAX_TOTAL: u32 = 1 << 16;
/// A context stops learning new values beyond this many (its escape weight stays ≤ this).
const MAX_SYMBOLS: usize = 4096;
/// Number of bit-length symbols: 0 (the value 0) to 64.
const LENGTHS: usize = 65;
const TOP: u32 = 1 << 24;

/// LZMA-style range encoder (carry propagated through a cached byte).
struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
}

impl Encoder {
    fn new() -> Self {
        Self {
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out: Vec::new(),
        }
    }

    #[inline]
    fn encode(&mut self, cum: u32, freq: u32, total: u32) {
        let r = self.range / total;
        self.low += u64::from(cum) * u64::from(r);
        self.range = r * freq;
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    /// `bits` (≤ 16) low bits of `value`, all equally likely.
    #[inline]
    fn bits(&mut self, value: u64, bits: u32) {
        self.encode((value & ((1 << bits) - 1)) as u32, 1, 1 << bits);
    }

    fn shift_low(&mut self) {
        if (self.low as u32) < 0xFF00_0000 || (self.low >> 32) != 0 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            loop {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xFF;
                self.cache_size -= 1;
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.cache_size += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

struct Decoder<'a> {
    range: u32,
    code: u32,
    input: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    fn new(input: &'a [u8]) -> Self {
        let mut d = Self {
            range: u32::MAX,
            code: 0,
            input,
            at: 0,
        };
        for _ in 0..5 {
            d.code = (d.code << 8) | u32::from(d.next_byte());
        }
        d
    }

    #[inline]
    fn next_byte(&mut self) -> u8 {
        let b = self.input.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// The cumulative frequency the next symbol covers, in `0..total`.
    #[inline]
    fn target(&mut self, total: u32) -> u32 {
        self.range /= total;
        (self.code / self.range).min(total - 1)
    }

    #[inline]
    fn consume(&mut self, cum: u32, freq: u32) {
        self.code = self.code.wrapping_sub(cum.wrapping_mul(self.range));
        self.range = self.range.wrapping_mul(freq);
        while self.range < TOP {
            self.code = (self.code << 8) | u32::from(self.next_byte());
            self.range <<= 8;
        }
    }

    #[inline]
    fn bits(&mut self, bits: u32) -> u64 {
        let v = self.target(1 << bits);
        self.consume(v, 1);
        u64::from(v)
    }
}

/// The values seen in one context with their counts, most frequent first (roughly: a value
/// moves up one place when its count passes its neighbour's).
#[derive(Default)]
struct Table {
    symbols: Vec<(u64, u32)>,
    /// Sum of the counts.
    total: u32,
}

impl Table {
    /// Escape weight (PPM method C: the number of distinct values).
    #[inline]
    fn escape(&self) -> u32 {
        self.symbols.len() as u32
    }

    /// Counts `symbols[j]` once more.
    #[inline]
    fn bump(&mut self, j: usize) {
        self.symbols[j].1 += 1;
        self.total += 1;
        if j > 0 && self.symbols[j].1 > self.symbols[j - 1].1 {
            self.symbols.swap(j, j - 1);
        }
        self.rescale_if_full();
    }

    #[inline]
    fn add(&mut self, value: u64) {
        if self.symbols.len() < MAX_SYMBOLS {
            self.symbols.push((value, 1));
            self.total += 1;
            self.rescale_if_full();
        }
    }

    fn rescale_if_full(&mut self) {
        if self.total + self.escape() > MAX_TOTAL - 2 {
            self.total = 0;
            for s in &mut self.symbols {
                s.1 = s.1.div_ceil(2);
                self.total += s.1;
            }
        }
    }
}

/// Adaptive frequencies of bit lengths 0..=64 (all start at 1).
struct Lengths {
    counts: [u32; LENGTHS],
    total: u32,
}

impl Default for Lengths {
    fn default() -> Self {
        Self {
            counts: [1; LENGTHS],
            total: LENGTHS as u32,
        }
    }
}

impl Lengths {
    fn update(&mut self, s: usize) {
        self.counts[s] += 32;
        self.total += 32;
        if self.total > MAX_TOTAL - 64 {
            self.total = 0;
            for c in &mut self.counts {
                *c = c.div_ceil(2);
                self.total += *c;
            }
        }
    }
}

type Contexts = HashMap<u64, Table, BuildHasherDefault<PointerHasher>>;

/// The model state shared by encoder and decoder.
struct Model {
    orders: [Contexts; ORDERS],
    lengths: Vec<Lengths>,
}

impl Model {
    fn new(length_contexts: usize) -> Self {
        Self {
            orders: Default::default(),
            lengths: (0..length_contexts.max(1))
                .map(|_| Lengths::default())
                .collect(),
        }
    }
}

/// The contexts of value `i`, given the value coded just before it ([`NO_PREVIOUS`] for the
/// first): one key per order (most specific first) and a small number `< length_contexts` for
/// the bit-length fallback.
pub(crate) trait ContextFn: Fn(usize, u64) -> ([u64; ORDERS], usize) {}
impl<F: Fn(usize, u64) -> ([u64; ORDERS], usize)> ContextFn for F {}

/// What [`ContextFn`] is given as the previous value of the first value.
pub(crate) const NO_PREVIOUS: u64 = u64::MAX;

/// Encodes `values` with the contexts `context(i)` gives.
pub(crate) fn encode(values: &[u64], length_contexts: usize, context: impl ContextFn) -> Vec<u8> {
    let mut m = Model::new(length_contexts);
    let mut e = Encoder::new();
    let mut previous = NO_PREVIOUS;
    for (i, &v) in values.iter().enumerate() {
        let (keys, small) = context(i, previous);
        previous = v;
        let mut coded = false;
        for (order, key) in m.orders.iter_mut().zip(keys) {
            let t = order.entry(key).or_default();
            let mut cum = 0;
            let mut found = None;
            for (j, &(s, c)) in t.symbols.iter().enumerate() {
                if s == v {
                    found = Some((j, c));
                    break;
                }
                cum += c;
            }
            match found {
                Some((j, c)) => {
                    e.encode(cum, c, t.total + t.escape());
                    t.bump(j);
                    coded = true;
                    break;
                }
                None => {
                    if t.total > 0 {
                        e.encode(t.total, t.escape(), t.total + t.escape());
                    }
                    t.add(v);
                }
            }
        }
        if !coded {
            let len = (64 - v.leading_zeros()) as usize;
            let l = &mut m.lengths[small.min(length_contexts.max(1) - 1)];
            let cum: u32 = l.counts[..len].iter().sum();
            e.encode(cum, l.counts[len], l.total);
            l.update(len);
            // The bits below the leading one, 16 at a time.
            let mut rest = len.saturating_sub(1) as u32;
            while rest > 0 {
                let take = rest.min(16);
                rest -= take;
                e.bits(v >> rest, take);
            }
        }
    }
    e.finish()
}

/// Decodes `count` values encoded by [`encode`] with the same contexts.
pub(crate) fn decode(
    bytes: &[u8],
    count: usize,
    length_contexts: usize,
    context: impl ContextFn,
) -> Vec<u64> {
    let mut m = Model::new(length_contexts);
    let mut d = Decoder::new(bytes);
    let mut out = Vec::with_capacity(count.min(bytes.len().saturating_mul(64) + 64));
    let mut visited: [Option<u64>; ORDERS] = [None; ORDERS];
    let mut previous = NO_PREVIOUS;
    for i in 0..count {
        let (keys, small) = context(i, previous);
        let mut value = None;
        let mut escaped = 0;
        for (o, (order, key)) in m.orders.iter_mut().zip(keys).enumerate() {
            let t = order.entry(key).or_default();
            if t.total > 0 {
                let total = t.total + t.escape();
                let target = d.target(total);
                if target < t.total {
                    let mut cum = 0;
                    let mut hit = t.symbols.len() - 1;
                    for (j, &(_, c)) in t.symbols.iter().enumerate() {
                        if target < cum + c {
                            hit = j;
                            break;
                        }
                        cum += c;
                    }
                    let (v, c) = t.symbols[hit];
                    d.consume(cum, c);
                    t.bump(hit);
                    value = Some(v);
                    break;
                }
                d.consume(t.total, t.escape());
            }
            visited[o] = Some(key);
            escaped = o + 1;
        }
        let v = match value {
            Some(v) => v,
            None => {
                let l = &mut m.lengths[small.min(length_contexts.max(1) - 1)];
                let target = d.target(l.total);
                let mut cum = 0;
                let mut len = LENGTHS - 1;
                for (s, &c) in l.counts.iter().enumerate() {
                    if target < cum + c {
                        len = s;
                        break;
                    }
                    cum += c;
                }
                d.consume(cum, l.counts[len]);
                l.update(len);
                let mut v = u64::from(len > 0);
                let mut rest = len.saturating_sub(1) as u32;
                while rest > 0 {
                    let take = rest.min(16);
                    rest -= take;
                    v = (v << take) | d.bits(take);
                }
                v
            }
        };
        // The contexts escaped from learn the value (as the encoder's did).
        for (order, key) in m.orders.iter_mut().zip(&visited).take(escaped) {
            if let Some(key) = key
                && let Some(t) = order.get_mut(key)
            {
                t.add(v);
            }
        }
        out.push(v);
        previous = v;
    }
    out
}

/// Models 1 and 2: the contexts of event times (one per event, then the trace end), from the
/// order of the events (entry `e`: `block << 1 | is_free`, `u32::MAX` for an event without a
/// block) and the call site of every block. Model 1's orders: (site of this event's block,
/// kinds of this and the previous event, site of the previous event's block); (site, kinds);
/// (kinds). The kind of an event is allocation, free, neither (a free that matched nothing) or
/// the trace end. Model 2 (the writer's since wave 32) adds the previous delta (capped, see
/// [`PREVIOUS_DELTA_CAP`]) to the most specific order: where the clock steps finer than the
/// stored resolution, a delta rounded up is mostly followed by one rounded down, and the
/// program's pace carries from one event to the next (sqlite3's times −14 % at 16 ns, −19 % at
/// 64 ns; cc1plus's +0.3–0.8 %: `BENCHMARKS.md`, wave 32).
pub(crate) struct EventTimeContexts<'a> {
    pub(crate) order: &'a [u32],
    pub(crate) site: &'a [u32],
    /// [`MODEL_EVENT_TIMES`] or [`MODEL_EVENT_TIMES_PREVIOUS`].
    pub(crate) model: u8,
}

/// Kind pairs: the bit-length contexts of models 1 and 2.
pub(crate) const EVENT_TIME_LENGTH_CONTEXTS: usize = 16;
/// Model id of [`EventTimeContexts`] without the previous delta (the first payload byte of a
/// packing-4 section; files written before wave 32).
pub(crate) const MODEL_EVENT_TIMES: u8 = 1;
/// Model id of [`EventTimeContexts`] with the previous delta (what the writer uses).
pub(crate) const MODEL_EVENT_TIMES_PREVIOUS: u8 = 2;
/// Previous deltas from this many units of the stored resolution on share one context.
pub(crate) const PREVIOUS_DELTA_CAP: u64 = 64;

impl EventTimeContexts<'_> {
    #[inline]
    fn kind_site(&self, e: usize) -> (u64, u64) {
        match self.order.get(e) {
            None => (3, 0),
            Some(&u32::MAX) => (2, 0),
            Some(&id) => (
                u64::from(id & 1),
                u64::from(self.site.get((id >> 1) as usize).copied().unwrap_or(0)),
            ),
        }
    }

    /// The contexts of event `e` whose previous delta was `previous` ([`NO_PREVIOUS`] for the
    /// first of a section).
    pub(crate) fn context(&self, e: usize, previous: u64) -> ([u64; ORDERS], usize) {
        let (kind, site) = self.kind_site(e);
        let (prev_kind, prev_site) = match e.checked_sub(1) {
            Some(p) => self.kind_site(p),
            None => (3, 0),
        };
        let kinds = kind * 4 + prev_kind;
        let o1 = site << 4 | kinds;
        let o2 = o1.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ prev_site;
        if self.model == MODEL_EVENT_TIMES {
            return ([o2, o1, kinds], kinds as usize);
        }
        // 0 for no previous delta, 1 + the capped delta otherwise.
        let pace = if previous == NO_PREVIOUS {
            0
        } else {
            1 + previous.min(PREVIOUS_DELTA_CAP)
        };
        // The previous delta joins the most specific order only: with it in (site, kinds)
        // too, or as a fourth order above the three, sqlite3's times grew 0.5–3 % and cc1plus's
        // 3 % (escapes through one more sparse order cost more than it tells).
        let o2_paced =
            (o2 ^ pace.wrapping_mul(0xD6E8_FEB8_6659_FD93)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ([o2_paced, o1, kinds], kinds as usize)
    }
}

/// The event order [`EventTimeContexts`] needs, from the blocks' event indices (what the
/// decoder has): a block's free at `free_event[i] < events` (never-freed blocks end at
/// `events`), later blocks overwriting earlier ones where a file says two blocks share an
/// event (an allocation over a live block ends it at its own event).
pub(crate) fn event_order(alloc_event: &[u64], free_event: &[u64], events: u64) -> Vec<u32> {
    let n = usize::try_from(events).unwrap_or(0);
    let mut order = vec![u32::MAX; n];
    for (i, (&a, &f)) in alloc_event.iter().zip(free_event).enumerate() {
        let id = u32::try_from(i).unwrap_or(u32::MAX >> 1) << 1;
        if let Some(slot) = usize::try_from(f).ok().and_then(|f| order.get_mut(f)) {
            *slot = id | 1;
        }
        if let Some(slot) = usize::try_from(a).ok().and_then(|a| order.get_mut(a)) {
            *slot = id;
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ctx(contexts: &[u64]) -> impl ContextFn + '_ {
        move |i, _| {
            let c = contexts[i];
            ([c * 31 + (i as u64 % 3), c, 0], (c % 4) as usize)
        }
    }

    proptest! {
        #[test]
        fn round_trip(
            values in proptest::collection::vec(prop_oneof![0u64..4, 0u64..300, any::<u64>(), Just(u64::MAX)], 0..3000),
            contexts in proptest::collection::vec(0u64..5, 3000),
        ) {
            let bytes = encode(&values, 4, ctx(&contexts));
            prop_assert_eq!(decode(&bytes, values.len(), 4, ctx(&contexts)), values);
        }

        /// Any bytes decode to exactly the requested number of values, without a panic.
        #[test]
        fn garbage_decodes_to_something(bytes in proptest::collection::vec(any::<u8>(), 0..200), count in 0usize..2000) {
            let contexts = vec![1u64; 2000];
            prop_assert_eq!(decode(&bytes, count, 4, ctx(&contexts)).len(), count);
        }
    }

    #[test]
    fn repetitive_values_cost_little() {
        let values: Vec<u64> = (0..100_000u64)
            .map(|i| [20, 30, 190][(i % 3) as usize])
            .collect();
        let contexts: Vec<u64> = (0..100_000u64).map(|i| i % 3).collect();
        let bytes = encode(&values, 4, ctx(&contexts));
        assert!(bytes.len() < 2_000, "{} bytes", bytes.len());
        assert_eq!(decode(&bytes, values.len(), 4, ctx(&contexts)), values);
    }

    /// Event times of one thread on a clock that steps 6 ns, stored at 64 ns: each rounded
    /// delta is the true step plus the rounding of this time minus that of the previous one, so
    /// a delta rounded up is mostly followed by one rounded down. Model 2 (the previous delta in
    /// the most specific order) learns that; both models decode to the same times.
    #[test]
    fn the_previous_delta_codes_rounded_times_smaller() {
        let events = 60_000usize;
        let blocks = events / 2;
        // Block b is allocated at event 2b and freed at 2b + 1, from one of 7 sites.
        let order: Vec<u32> = (0..events as u32).map(|e| (e / 2) << 1 | (e & 1)).collect();
        let site: Vec<u32> = (0..blocks as u32).map(|b| b * 5 % 7).collect();
        let mut exact = 0u64;
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut times = Vec::with_capacity(events);
        for e in 0..events {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let step = 150 + 40 * u64::from(site[e / 2]) + 60 * (e as u64 & 1) + state % 24;
            exact += step;
            times.push((exact / 6 * 6) >> 6);
        }
        let deltas: Vec<u64> = times
            .iter()
            .scan(0u64, |prev, &t| {
                let d = t - *prev;
                *prev = t;
                Some(d)
            })
            .collect();
        let coded = |model| {
            let contexts = EventTimeContexts {
                order: &order,
                site: &site,
                model,
            };
            let bytes = encode(&deltas, EVENT_TIME_LENGTH_CONTEXTS, |i, p| {
                contexts.context(i, p)
            });
            let back = decode(&bytes, deltas.len(), EVENT_TIME_LENGTH_CONTEXTS, |i, p| {
                contexts.context(i, p)
            });
            assert_eq!(back, deltas, "model {model}");
            bytes.len()
        };
        let (one, two) = (coded(MODEL_EVENT_TIMES), coded(MODEL_EVENT_TIMES_PREVIOUS));
        assert!(
            two * 100 < one * 95,
            "model 2: {two} bytes, model 1: {one} bytes"
        );
    }

    /// Many distinct values in one context: escapes and the symbol cap stay consistent.
    #[test]
    fn more_distinct_values_than_a_context_keeps() {
        let values: Vec<u64> = (0..3 * MAX_SYMBOLS as u64)
            .map(|i| i * 7919 % 100_003)
            .collect();
        let contexts = vec![0u64; values.len()];
        let bytes = encode(&values, 1, ctx(&contexts));
        assert_eq!(decode(&bytes, values.len(), 1, ctx(&contexts)), values);
    }
}

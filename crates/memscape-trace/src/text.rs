//! Line-oriented input: feeding lines to a parser from memory or from a (decompressing) stream,
//! and a tokenizer for space-separated hexadecimal fields.

use std::io::BufRead;

/// A parser fed one line at a time (without the newline; `\r` already stripped).
pub(crate) trait LineParser {
    fn line(&mut self, number: u64, line: &[u8]);
    /// The input ended inside line `number` (no final newline, or the stream broke off).
    fn truncated(&mut self, number: u64, partial: &[u8]);
    /// Every line of `data`, which is whole lines (each ending in `\n`), the first one being
    /// line `first`. Returns the number of lines. Parsers override this with a fused fast
    /// path for their common lines; the result must be as if [`LineParser::line`] had been
    /// called for each line.
    fn lines(&mut self, first: u64, data: &[u8]) -> u64 {
        let mut number = first;
        for line in data.split_inclusive(|&b| b == b'\n') {
            self.line(number, strip_eol(line));
            number += 1;
        }
        number - first
    }
}

/// A line without its `\n` and a `\r` before it.
#[inline]
pub(crate) fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Feeds every line of an in-memory input. Returns the number of lines.
pub(crate) fn feed_bytes(parser: &mut impl LineParser, data: &[u8]) -> u64 {
    let whole = data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let (complete, partial) = data.split_at(whole);
    let lines = parser.lines(1, complete);
    if partial.is_empty() {
        return lines;
    }
    let partial = partial.strip_suffix(b"\r").unwrap_or(partial);
    parser.truncated(lines + 1, partial);
    lines + 1
}

/// Feeds every line of a stream, straight from the reader's buffer: whole lines are handed to
/// [`LineParser::lines`] as they sit in the buffer; only a line split across two reads is
/// copied. A read error (a corrupt or cut compressed stream) ends the input like a
/// truncation: what was read so far stays loaded.
pub(crate) fn feed_reader(
    parser: &mut impl LineParser,
    reader: &mut impl BufRead,
) -> Result<u64, std::io::Error> {
    // The start of a line that continues in the next read.
    let mut carry: Vec<u8> = Vec::new();
    let mut number = 0u64;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                parser.truncated(number + 1, &carry);
                return Err(e);
            }
        };
        if buf.is_empty() {
            if !carry.is_empty() {
                number += 1;
                parser.truncated(number, &carry);
            }
            return Ok(number);
        }
        let mut used = 0;
        if !carry.is_empty() {
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    carry.extend_from_slice(&buf[..=i]);
                    used = i + 1;
                    number += 1;
                    parser.line(number, strip_eol(&carry));
                    carry.clear();
                }
                None => {
                    carry.extend_from_slice(buf);
                    let n = buf.len();
                    reader.consume(n);
                    continue;
                }
            }
        }
        let rest = &buf[used..];
        let whole = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        number += parser.lines(number + 1, &rest[..whole]);
        carry.extend_from_slice(&rest[whole..]);
        let n = buf.len();
        reader.consume(n);
    }
}

/// Space-separated fields of one line.
pub(crate) struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    pub(crate) fn new(rest: &'a [u8]) -> Self {
        Self { rest }
    }

    fn skip_spaces(&mut self) {
        while let [b' ' | b'\t', tail @ ..] = self.rest {
            self.rest = tail;
        }
    }

    pub(crate) fn token(&mut self) -> Option<&'a [u8]> {
        self.skip_spaces();
        if self.rest.is_empty() {
            return None;
        }
        let end = self
            .rest
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .unwrap_or(self.rest.len());
        let (tok, tail) = self.rest.split_at(end);
        self.rest = tail;
        Some(tok)
    }

    pub(crate) fn hex(&mut self) -> Option<u64> {
        parse_hex(self.token()?)
    }

    /// A string field: in file format 3 and later heaptrack writes `<hex length> <bytes>` so
    /// that paths may contain spaces; before that, a plain token.
    pub(crate) fn string(&mut self, sized: bool) -> Option<&'a [u8]> {
        if !sized {
            return self.token();
        }
        let len = usize::try_from(self.hex()?).ok()?;
        // Exactly one separator after the length, then `len` bytes.
        let rest = self.rest.strip_prefix(b" ")?;
        if rest.len() < len {
            return None;
        }
        let (s, tail) = rest.split_at(len);
        self.rest = tail;
        Some(s)
    }

    /// Everything left, without leading spaces.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        self.skip_spaces();
        self.rest
    }

    pub(crate) fn is_empty(&mut self) -> bool {
        self.skip_spaces();
        self.rest.is_empty()
    }
}

/// Hexadecimal without prefix (heaptrack writes `%zx`), at most 16 digits.
pub(crate) fn parse_hex(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() || tok.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &b in tok {
        let d = HEX_DIGIT[b as usize];
        if d == INVALID {
            return None;
        }
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

/// The hex number of 1–16 digits starting at `line[at]` and ending right before the byte
/// `end`; returns it and the position after `end`. `None` when the digits or the terminator
/// are not there (the caller then takes its general path).
#[inline]
pub(crate) fn hex_until(line: &[u8], at: usize, end: u8) -> Option<(u64, usize)> {
    let digits = line.get(at..)?;
    let mut v = 0u64;
    for (i, &b) in digits.iter().enumerate().take(17) {
        let d = HEX_DIGIT[b as usize];
        if d == INVALID {
            return (b == end && (1..=16).contains(&i)).then_some((v, at + i + 1));
        }
        v = (v << 4) | u64::from(d);
    }
    None
}

const INVALID: u8 = 0xff;

/// Digit value of every byte, [`INVALID`] for non-digits (one load per digit instead of three
/// range tests: hex parsing is the hottest loop of a heaptrack import).
static HEX_DIGIT: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// Decimal digits only, no sign, checked for overflow.
pub(crate) fn parse_dec(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() {
        return None;
    }
    let mut v = 0u64;
    for &b in tok {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

/// Text of a field, replacing invalid UTF-8; the flag says whether anything was replaced.
pub(crate) fn lossy(bytes: &[u8]) -> (std::borrow::Cow<'_, str>, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (std::borrow::Cow::Borrowed(s), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_strings_may_contain_spaces() {
        let mut f = Fields::new(b"b /a b/c d.so 7f00 0 10");
        assert_eq!(f.string(true), Some(&b"/a b/c d.so"[..]));
        assert_eq!(f.hex(), Some(0x7f00));
        assert_eq!(f.hex(), Some(0));
        assert_eq!(f.hex(), Some(0x10));
        assert!(f.is_empty());
    }

    #[test]
    fn sized_string_longer_than_line_is_none() {
        assert_eq!(Fields::new(b"ff abc").string(true), None);
    }

    #[test]
    fn hex_and_dec_reject_garbage_and_overflow() {
        assert_eq!(parse_hex(b"ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(parse_hex(b"1ffffffffffffffff"), None);
        assert_eq!(parse_hex(b"0x1"), None);
        assert_eq!(parse_dec(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_dec(b"18446744073709551616"), None);
        assert_eq!(parse_dec(b"-1"), None);
    }
}

#[cfg(test)]
mod feed_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[derive(Default, Debug, PartialEq)]
    struct Recorder(Vec<(u64, Vec<u8>, bool)>);

    impl LineParser for Recorder {
        fn line(&mut self, number: u64, line: &[u8]) {
            self.0.push((number, line.to_vec(), false));
        }
        fn truncated(&mut self, number: u64, partial: &[u8]) {
            self.0.push((number, partial.to_vec(), true));
        }
    }

    proptest! {
        /// Streaming through buffers of any size gives the lines of the whole input, numbered
        /// alike; the in-memory feed too.
        #[test]
        fn streamed_lines_equal_in_memory_lines(
            data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(b' ')], 0..200),
            capacity in 1usize..40,
        ) {
            let mut expected = Recorder::default();
            let mut number = 0;
            for line in data.split_inclusive(|&b| b == b'\n') {
                number += 1;
                if line.ends_with(b"\n") {
                    expected.line(number, strip_eol(line));
                } else {
                    expected.truncated(number, line);
                }
            }
            let mut streamed = Recorder::default();
            let mut reader = std::io::BufReader::with_capacity(capacity, data.as_slice());
            let n = feed_reader(&mut streamed, &mut reader).unwrap();
            prop_assert_eq!(n, number);
            prop_assert_eq!(&streamed, &expected);
            let mut in_memory = Recorder::default();
            prop_assert_eq!(feed_bytes(&mut in_memory, &data), number);
            // In memory, a cut last line loses a final `\r` too (as it always did).
            for (a, b) in in_memory.0.iter().zip(&expected.0) {
                prop_assert_eq!(a.0, b.0);
                prop_assert_eq!(a.2, b.2);
                prop_assert_eq!(a.1.as_slice(), if b.2 { b.1.strip_suffix(b"\r").unwrap_or(&b.1) } else { &b.1[..] });
            }
        }

        /// The fused `+`/`-` fast path accepts exactly the canonical lines and reads them as
        /// the general field parser does.
        #[test]
        fn hex_until_agrees_with_parse_hex(
            token in proptest::collection::vec(prop_oneof![Just(b'0'), Just(b'f'), Just(b'A'), Just(b'9'), Just(b'g'), Just(b'\t')], 0..20),
            end in prop_oneof![Just(b' '), Just(b'\n')],
        ) {
            let mut line = token.clone();
            line.push(end);
            line.extend_from_slice(b"rest");
            let fast = hex_until(&line, 0, end);
            let canonical = !token.is_empty() && token.len() <= 16;
            match fast {
                Some((v, at)) => {
                    prop_assert!(canonical);
                    prop_assert_eq!(Some(v), parse_hex(&token));
                    prop_assert_eq!(at, token.len() + 1);
                }
                None => prop_assert!(!canonical || parse_hex(&token).is_none()),
            }
        }
    }
}

//! Line-oriented input: feeding lines to a parser from memory or from a (decompressing) stream,
//! and a tokenizer for space-separated hexadecimal fields.

use std::io::BufRead;

/// A parser fed one line at a time (without the newline; `\r` already stripped).
pub(crate) trait LineParser {
    fn line(&mut self, number: u64, line: &[u8]);
    /// The input ended inside line `number` (no final newline, or the stream broke off).
    fn truncated(&mut self, number: u64, partial: &[u8]);
}

/// Feeds every line of an in-memory input. Returns the number of lines.
pub(crate) fn feed_bytes(parser: &mut impl LineParser, data: &[u8]) -> u64 {
    let complete = data.ends_with(b"\n");
    let mut last = 0;
    let mut lines = memscape_io::numbered_lines(data).peekable();
    while let Some((number, line)) = lines.next() {
        last = number;
        if lines.peek().is_none() && !complete {
            parser.truncated(number, line);
        } else {
            parser.line(number, line);
        }
    }
    last
}

/// Feeds every line of a stream, reusing one buffer. A read error (a corrupt or cut compressed
/// stream) ends the input like a truncation: what was read so far stays loaded.
pub(crate) fn feed_reader(
    parser: &mut impl LineParser,
    reader: &mut impl BufRead,
) -> Result<u64, std::io::Error> {
    let mut buf = Vec::with_capacity(256);
    let mut number = 0u64;
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => return Ok(number),
            Ok(_) => {
                number += 1;
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                    parser.line(number, &buf);
                } else {
                    parser.truncated(number, &buf);
                    return Ok(number);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                parser.truncated(number + 1, &buf);
                return Err(e);
            }
        }
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

//! The protobuf wire format, as much of it as `profile.proto` needs: a reader that walks the
//! fields of a message (skipping unknown ones, so newer writers stay readable) and a writer.
//! Hand-written instead of generated: no `protoc` at build time, and every length is checked
//! against the bytes that are really there.

/// Wire types.
pub const VARINT: u8 = 0;
pub const FIXED64: u8 = 1;
pub const LEN: u8 = 2;
pub const FIXED32: u8 = 5;

/// A malformed message: the offset (from the start of the decoded buffer) and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    pub offset: usize,
    pub message: String,
}

/// One field: its number and its value (a varint, fixed-size bits or a length-delimited slice).
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Varint(u64),
    Fixed(u64),
    Bytes(&'a [u8], usize),
}

impl<'a> Value<'a> {
    pub fn as_u64(&self) -> u64 {
        match *self {
            Value::Varint(v) | Value::Fixed(v) => v,
            Value::Bytes(..) => 0,
        }
    }

    pub fn as_i64(&self) -> i64 {
        self.as_u64() as i64
    }

    /// A length-delimited payload and its offset, for nested messages, strings and packed
    /// repeated fields.
    pub fn bytes(&self) -> Option<(&'a [u8], usize)> {
        match *self {
            Value::Bytes(b, at) => Some((b, at)),
            _ => None,
        }
    }
}

/// Walks the fields of one message.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of `data` in the whole buffer, for messages.
    base: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8], base: usize) -> Self {
        Self { data, pos: 0, base }
    }

    fn error(&self, message: impl Into<String>) -> WireError {
        WireError {
            offset: self.base + self.pos,
            message: message.into(),
        }
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(self.error("the message ends inside a varint"));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.error("a varint longer than 10 bytes"))
    }

    fn fixed(&mut self, n: usize) -> Result<u64, WireError> {
        let Some(bytes) = self.data.get(self.pos..self.pos + n) else {
            return Err(self.error(format!("the message ends inside a {}-byte field", n)));
        };
        self.pos += n;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(bytes);
        Ok(u64::from_le_bytes(v))
    }

    /// The next field, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, WireError> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = u32::try_from(key >> 3).map_err(|_| self.error("field number too large"))?;
        let value = match (key & 7) as u8 {
            VARINT => Value::Varint(self.varint()?),
            FIXED64 => Value::Fixed(self.fixed(8)?),
            FIXED32 => Value::Fixed(self.fixed(4)?),
            LEN => {
                let len = self.varint()?;
                let start = self.pos;
                let end = usize::try_from(len)
                    .ok()
                    .and_then(|l| start.checked_add(l))
                    .filter(|&e| e <= self.data.len())
                    .ok_or_else(|| {
                        self.error(format!(
                            "field {field}: length {len} runs past the end of the message ({} bytes left)",
                            self.data.len() - start
                        ))
                    })?;
                self.pos = end;
                Value::Bytes(&self.data[start..end], self.base + start)
            }
            other => {
                return Err(self.error(format!(
                    "field {field}: wire type {other} (groups and unknown types are not used by profile.proto)"
                )));
            }
        };
        Ok(Some((field, value)))
    }
}

/// The integers of a repeated scalar field: packed (one length-delimited run of varints) or one
/// per occurrence.
pub fn push_varints(value: &Value<'_>, out: &mut Vec<u64>) -> Result<(), WireError> {
    match *value {
        Value::Bytes(bytes, at) => {
            let mut r = Reader::new(bytes, at);
            while r.pos < bytes.len() {
                out.push(r.varint()?);
            }
            Ok(())
        }
        v => {
            out.push(v.as_u64());
            Ok(())
        }
    }
}

/// Encodes messages field by field.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.raw_varint(u64::from(field) << 3 | u64::from(wire));
    }

    /// A varint field (omitted when zero, as proto3 does).
    pub fn varint(&mut self, field: u32, v: u64) {
        if v != 0 {
            self.key(field, VARINT);
            self.raw_varint(v);
        }
    }

    pub fn int(&mut self, field: u32, v: i64) {
        self.varint(field, v as u64);
    }

    pub fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, LEN);
        self.raw_varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    pub fn message(&mut self, field: u32, message: &Writer) {
        self.bytes(field, &message.buf);
    }

    /// A packed repeated varint field.
    pub fn packed(&mut self, field: u32, values: impl IntoIterator<Item = u64>) {
        let mut inner = Writer::default();
        for v in values {
            inner.raw_varint(v);
        }
        if !inner.buf.is_empty() {
            self.bytes(field, &inner.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn fields_round_trip_and_unknown_ones_are_skipped() {
        let mut inner = Writer::default();
        inner.varint(1, 300);
        let mut w = Writer::default();
        w.int(1, -2);
        w.message(2, &inner);
        w.packed(3, [1, 2, 3]);
        w.varint(99, 7);
        let mut r = Reader::new(&w.buf, 0);
        let (f, v) = r.next_field().unwrap().unwrap();
        assert_eq!((f, v.as_i64()), (1, -2));
        let (f, v) = r.next_field().unwrap().unwrap();
        let (bytes, _) = v.bytes().unwrap();
        assert_eq!(f, 2);
        let mut nested = Reader::new(bytes, 0);
        assert_eq!(nested.next_field().unwrap().unwrap().1.as_u64(), 300);
        let (_, v) = r.next_field().unwrap().unwrap();
        let mut ints = Vec::new();
        push_varints(&v, &mut ints).unwrap();
        assert_eq!(ints, [1, 2, 3]);
        assert_eq!(r.next_field().unwrap().unwrap().0, 99);
        assert!(r.next_field().unwrap().is_none());
    }

    #[test]
    fn lengths_past_the_end_are_errors() {
        let bad = [0x12, 0x7f, 0x01];
        let e = Reader::new(&bad, 10).next_field().unwrap_err();
        assert_eq!(e.offset, 12);
        assert!(e.message.contains("past the end"), "{}", e.message);
    }
}

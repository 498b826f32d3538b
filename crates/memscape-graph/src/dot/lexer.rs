//! The DOT lexer: identifiers, numerals, quoted and HTML strings, punctuation, comments.

use memscape_io::{Location, Warnings};

use crate::GraphError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum TokenKind {
    /// A plain identifier or numeral (keywords are plain ids).
    Plain(String),
    Quoted(String),
    Html(String),
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Semi,
    Comma,
    Equals,
    Colon,
    /// `->`
    Arrow,
    /// `--`
    Line,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) kind: TokenKind,
    pub(super) line: u64,
    pub(super) column: u64,
}

pub(super) struct Lexer<'a> {
    pub(super) src: &'a [u8],
    pub(super) pos: usize,
    pub(super) line: u64,
    pub(super) line_start: usize,
    pub(super) file: &'a str,
    pub(super) warnings: &'a mut Warnings,
    /// A `+` was read after a quoted string: the next quoted string is appended to it.
    pub(super) concatenating: bool,
}

pub(super) fn is_id_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

pub(super) fn is_id_char(b: u8) -> bool {
    is_id_start(b) || b.is_ascii_digit()
}

impl Lexer<'_> {
    fn column(&self) -> u64 {
        (self.pos - self.line_start) as u64 + 1
    }

    fn error(&self, line: u64, column: u64, message: impl Into<String>) -> GraphError {
        GraphError::Syntax {
            file: self.file.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek(0)?;
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
            self.line_start = self.pos;
        }
        Some(b)
    }

    fn text(&mut self, bytes: &[u8], line: u64) -> String {
        match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            Err(_) => {
                self.warnings.add(
                    "non_utf8",
                    "text is not UTF-8 (replaced with U+FFFD)",
                    Location::line(self.file, line),
                );
                String::from_utf8_lossy(bytes).into_owned()
            }
        }
    }

    /// Skips blanks and comments; true when at the start of a line (for `#` lines).
    fn skip_trivia(&mut self) -> Result<(), GraphError> {
        loop {
            let Some(b) = self.peek(0) else {
                return Ok(());
            };
            if b.is_ascii_whitespace() {
                self.bump();
            } else if b == b'/' && self.peek(1) == Some(b'/') {
                while let Some(c) = self.peek(0) {
                    if c == b'\n' {
                        break;
                    }
                    self.bump();
                }
            } else if b == b'/' && self.peek(1) == Some(b'*') {
                let (line, column) = (self.line, self.column());
                self.bump();
                self.bump();
                loop {
                    match self.bump() {
                        None => return Err(self.error(line, column, "unterminated /* comment")),
                        Some(b'*') if self.peek(0) == Some(b'/') => {
                            self.bump();
                            break;
                        }
                        Some(_) => {}
                    }
                }
            } else if b == b'#'
                && self.src[self.line_start..self.pos]
                    .iter()
                    .all(|c| c.is_ascii_whitespace())
            {
                while let Some(c) = self.peek(0) {
                    if c == b'\n' {
                        break;
                    }
                    self.bump();
                }
            } else {
                return Ok(());
            }
        }
    }

    fn quoted(&mut self) -> Result<String, GraphError> {
        let (line, column) = (self.line, self.column());
        self.bump(); // opening quote
        let mut bytes = Vec::new();
        loop {
            match self.bump() {
                None => return Err(self.error(line, column, "unterminated quoted string")),
                Some(b'"') => break,
                Some(b'\\') => match self.peek(0) {
                    Some(b'"') => {
                        self.bump();
                        bytes.push(b'"');
                    }
                    // Line continuation: backslash-newline disappears.
                    Some(b'\n') => {
                        self.bump();
                    }
                    Some(b'\r') if self.peek(1) == Some(b'\n') => {
                        self.bump();
                        self.bump();
                    }
                    // Every other escape is kept for the label interpretation (\l, \n, \N, …).
                    _ => bytes.push(b'\\'),
                },
                Some(b) => bytes.push(b),
            }
        }
        Ok(self.text(&bytes, line))
    }

    fn html(&mut self) -> Result<String, GraphError> {
        let (line, column) = (self.line, self.column());
        self.bump();
        let start = self.pos;
        let mut depth = 1usize;
        loop {
            match self.bump() {
                None => return Err(self.error(line, column, "unterminated HTML string (<…>)")),
                Some(b'<') => depth += 1,
                Some(b'>') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Some(_) => {}
            }
        }
        let end = self.pos - 1;
        let src = self.src;
        Ok(self.text(&src[start..end], line))
    }

    pub(super) fn tokens(mut self) -> Result<Vec<Token>, GraphError> {
        let mut out: Vec<Token> = Vec::new();
        loop {
            self.skip_trivia()?;
            let Some(b) = self.peek(0) else {
                return Ok(out);
            };
            let (line, column) = (self.line, self.column());
            let kind = match b {
                b'{' => TokenKind::LBrace,
                b'}' => TokenKind::RBrace,
                b'[' => TokenKind::LBracket,
                b']' => TokenKind::RBracket,
                b';' => TokenKind::Semi,
                b',' => TokenKind::Comma,
                b'=' => TokenKind::Equals,
                b':' => TokenKind::Colon,
                b'-' if self.peek(1) == Some(b'>') => {
                    self.bump();
                    TokenKind::Arrow
                }
                b'-' if self.peek(1) == Some(b'-') => {
                    self.bump();
                    TokenKind::Line
                }
                b'"' => {
                    let s = self.quoted()?;
                    // `"a" + "b"` concatenation.
                    if let Some(Token {
                        kind: TokenKind::Quoted(prev),
                        ..
                    }) = out.last_mut()
                        && self.concatenating
                    {
                        prev.push_str(&s);
                        self.concatenating = false;
                        continue;
                    }
                    out.push(Token {
                        kind: TokenKind::Quoted(s),
                        line,
                        column,
                    });
                    continue;
                }
                b'+' if matches!(
                    out.last(),
                    Some(Token {
                        kind: TokenKind::Quoted(_),
                        ..
                    })
                ) =>
                {
                    self.bump();
                    self.concatenating = true;
                    continue;
                }
                b'<' => {
                    let s = self.html()?;
                    out.push(Token {
                        kind: TokenKind::Html(s),
                        line,
                        column,
                    });
                    continue;
                }
                b if is_id_start(b) => {
                    let start = self.pos;
                    while self.peek(0).is_some_and(is_id_char) {
                        self.bump();
                    }
                    let src = self.src;
                    let s = self.text(&src[start..self.pos], line);
                    out.push(Token {
                        kind: TokenKind::Plain(s),
                        line,
                        column,
                    });
                    continue;
                }
                b'-' | b'.' | b'0'..=b'9' => {
                    let start = self.pos;
                    if b == b'-' {
                        self.bump();
                    }
                    let mut digits = 0;
                    let mut dot = false;
                    while let Some(c) = self.peek(0) {
                        if c.is_ascii_digit() {
                            digits += 1;
                        } else if c == b'.' && !dot {
                            dot = true;
                        } else {
                            break;
                        }
                        self.bump();
                    }
                    if digits == 0 {
                        return Err(self.error(line, column, "expected a number after '-' or '.'"));
                    }
                    let src = self.src;
                    let s = self.text(&src[start..self.pos], line);
                    out.push(Token {
                        kind: TokenKind::Plain(s),
                        line,
                        column,
                    });
                    continue;
                }
                other => {
                    return Err(self.error(
                        line,
                        column,
                        format!(
                            "unexpected character {:?}: expected an ID, a punctuation mark of DOT or an edge operator",
                            other as char
                        ),
                    ));
                }
            };
            if self.concatenating {
                return Err(self.error(line, column, "expected a quoted string after '+'"));
            }
            self.bump();
            out.push(Token { kind, line, column });
        }
    }
}

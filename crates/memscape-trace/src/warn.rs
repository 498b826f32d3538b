//! The kinds of recoverable problems an import counts (keys of `Warnings`).

pub const UNKNOWN_FREE: &str = "unknown_free";
pub const DOUBLE_FREE: &str = "double_free";
pub const ALLOC_OVER_LIVE: &str = "alloc_over_live";
pub const TRUNCATED: &str = "truncated";
pub const MALFORMED_LINE: &str = "malformed_line";
pub const UNSORTED_TIME: &str = "unsorted_time";
pub const NON_UTF8: &str = "non_utf8";
pub const ABSURD_SIZE: &str = "absurd_size";
pub const BAD_REFERENCE: &str = "bad_reference";
pub const TOO_MANY_BLOCKS: &str = "too_many_blocks";
/// `memscape record`: a program started by a recorded process ran without the recorder (a
/// static binary, a setuid/setgid program); the location names it.
pub const UNRECORDED_PROGRAM: &str = "unrecorded_program";

/// Every kind, for mapping names read back from `.msc` files onto the static keys.
pub const ALL: [&str; 11] = [
    UNKNOWN_FREE,
    DOUBLE_FREE,
    ALLOC_OVER_LIVE,
    TRUNCATED,
    MALFORMED_LINE,
    UNSORTED_TIME,
    NON_UTF8,
    ABSURD_SIZE,
    BAD_REFERENCE,
    TOO_MANY_BLOCKS,
    UNRECORDED_PROGRAM,
];

/// What was expected, for each kind.
pub fn message(kind: &str) -> &'static str {
    match kind {
        UNKNOWN_FREE => "free of a pointer that was never allocated (ignored)",
        DOUBLE_FREE => "free of a pointer that was already freed (ignored)",
        ALLOC_OVER_LIVE => {
            "allocation at the address of a live block (the old block is ended there)"
        }
        TRUNCATED => "input ends in the middle of a line or record (the rest is loaded)",
        MALFORMED_LINE => "line that does not match the format (skipped)",
        UNSORTED_TIME => "time earlier than the previous event's (clamped to it)",
        NON_UTF8 => "bytes that are not UTF-8 (replaced by U+FFFD)",
        ABSURD_SIZE => "size above 128 TiB or past the end of the address space (skipped)",
        BAD_REFERENCE => {
            "reference to a string, frame or record that does not exist (treated as unknown)"
        }
        TOO_MANY_BLOCKS => "more than 4 294 967 295 blocks (the rest is skipped)",
        UNRECORDED_PROGRAM => {
            "program that ran unrecorded: the loader ignores LD_PRELOAD for it (no process in the trace)"
        }
        _ => "unexpected input",
    }
}

/// The static key for a kind name read from a file, if it is one of ours.
pub fn static_kind(name: &str) -> Option<&'static str> {
    ALL.iter().copied().find(|k| *k == name)
}

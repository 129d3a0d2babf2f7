//! A typed cursor over document text for the fast paths: reads exactly the JSON the
//! contract's documents are made of, and answers `None` (leave it to the general path) at
//! anything else: escapes, non-integer or negative numbers, unexpected types, invalid JSON.
//! It never decides an error; it only accepts what the strict reader would read the same.
//! Public for the one-pass readers of the crates built on this one (Mooncake's placement).

use crate::reader::{find_special, parse_u64, skip_whitespace};
use crate::rules::values::{at_least, is_non_empty, sort_aliases};
use crate::wire::{key, ParallelRank};

/// The result of a fast-path step: `None` hands the document to the general path.
pub type Fast<T> = Option<T>;

/// A position in the document text.
pub struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Longer strings leave the document to the general path (`max_string_bytes`).
    max_string: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`, with no string limit.
    pub fn new(text: &'a str) -> Self {
        Cursor::limited(text, usize::MAX)
    }

    /// A cursor that answers `None` at a string longer than `max_string` bytes.
    pub fn limited(text: &'a str, max_string: usize) -> Self {
        Cursor {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            max_string,
        }
    }

    /// The byte offset of the cursor.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The text between two offsets the cursor has passed.
    pub fn slice(&self, start: usize, end: usize) -> Fast<&'a str> {
        self.text.get(start..end)
    }

    /// Skips whitespace and returns the next byte, if any.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.pos = skip_whitespace(self.bytes, self.pos);
        self.bytes.get(self.pos).copied()
    }

    /// Consumes `byte` (after whitespace).
    #[inline]
    pub fn eat(&mut self, byte: u8) -> Fast<()> {
        if self.peek()? == byte {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    /// Whether the rest of the text is whitespace.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// A string without escapes (possibly empty).
    #[inline]
    pub fn string(&mut self) -> Fast<&'a str> {
        self.eat(b'"')?;
        let start = self.pos;
        let end = find_special(self.bytes, start);
        if self.bytes.get(end) != Some(&b'"') || end - start > self.max_string {
            return None;
        }
        self.pos = end + 1;
        self.text.get(start..end)
    }

    /// A non-empty string without escapes.
    #[inline]
    pub fn non_empty(&mut self) -> Fast<&'a str> {
        self.string().filter(|s| is_non_empty(s))
    }

    /// A non-negative integer written as plain digits that fits in u64.
    #[inline]
    pub fn u64(&mut self) -> Fast<u64> {
        self.peek()?;
        let start = self.pos;
        let mut end = start;
        while let Some(b'0'..=b'9') = self.bytes.get(end) {
            end += 1;
        }
        let digits = self.bytes.get(start..end)?;
        let leading_zero = digits.len() > 1 && digits.first() == Some(&b'0');
        let fraction = matches!(self.bytes.get(end), Some(b'.' | b'e' | b'E'));
        if digits.is_empty() || leading_zero || fraction {
            return None;
        }
        self.pos = end;
        parse_u64(digits)
    }

    /// An integer of at least `min`.
    #[inline]
    pub fn u64_min(&mut self, min: u64) -> Fast<u64> {
        self.u64().filter(|&n| at_least(n, min))
    }

    /// The literal `null`, if it comes next (otherwise nothing is consumed).
    pub fn null(&mut self) -> bool {
        self.literal(b"null")
    }

    /// The literal `word`, if it comes next (otherwise nothing is consumed).
    pub fn literal(&mut self, word: &[u8]) -> bool {
        if self.peek().is_some()
            && self
                .bytes
                .get(self.pos..)
                .is_some_and(|r| r.starts_with(word))
        {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    /// An array, calling `element` for each element.
    #[inline]
    pub fn array(&mut self, mut element: impl FnMut(&mut Self) -> Fast<()>) -> Fast<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An array of integers of at least `min`, allocated at its exact length.
    #[inline]
    pub fn u64s(&mut self, min: u64) -> Fast<Vec<u64>> {
        let mut inline = [0u64; 8];
        let mut len = 0usize;
        let mut spilled: Vec<u64> = Vec::new();
        self.array(|c| {
            let value = c.u64_min(min)?;
            if let Some(slot) = inline.get_mut(len) {
                *slot = value;
            } else {
                if spilled.is_empty() {
                    spilled.extend_from_slice(&inline);
                }
                spilled.push(value);
            }
            len += 1;
            Some(())
        })?;
        Some(if spilled.is_empty() {
            inline.get(..len)?.to_vec()
        } else {
            spilled
        })
    }

    /// An array of integers of at least `min`, into `out` (cleared first): the per-record
    /// arrays of a large document reuse one buffer instead of allocating each.
    #[inline]
    pub fn u64s_into(&mut self, min: u64, out: &mut Vec<u64>) -> Fast<()> {
        out.clear();
        self.array(|c| {
            out.push(c.u64_min(min)?);
            Some(())
        })
    }

    /// An object whose keys are among `keys` (at most 32), each at most once, calling
    /// `member` with the key's index (the cursor then at its value). Returns the set of
    /// keys met, bit i for `keys[i]`. Keys are predicted by `order` (the order the previous
    /// object of this kind used): the predicted key is tried first as a literal, so
    /// documents whose objects share one key order skip the scan and the lookup.
    #[inline]
    pub fn members(
        &mut self,
        keys: &[&str],
        order: &mut KeyOrder,
        mut member: impl FnMut(&mut Self, usize) -> Fast<()>,
    ) -> Fast<u32> {
        let mut seen = 0u32;
        let mut previous = KeyOrder::START;
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(seen);
        }
        loop {
            let predicted = usize::from(order.next[previous]);
            let index = if self.predicted_key(keys.get(predicted).copied()) {
                predicted
            } else {
                let key = self.string()?;
                keys.iter().position(|k| *k == key)?
            };
            self.eat(b':')?;
            let bit = 1u32.checked_shl(u32::try_from(index).ok()?)?;
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            order.next[previous] = u8::try_from(index).ok()?;
            previous = index;
            member(self, index)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(seen);
                }
                _ => return None,
            }
        }
    }

    /// Consumes `"key"` if it comes next, byte for byte.
    #[inline]
    fn predicted_key(&mut self, key: Option<&str>) -> bool {
        let (Some(key), Some(_)) = (key, self.peek()) else {
            return false;
        };
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let end = key.len() + 1;
        let found = rest.first() == Some(&b'"')
            && rest
                .get(1..end)
                .is_some_and(|k| same_bytes(k, key.as_bytes()))
            && rest.get(end) == Some(&b'"');
        if found {
            self.pos += end + 1;
        }
        found
    }

    /// Skips a value of the shapes the cursor reads (a string, an integer, `null`, `true`,
    /// `false`, or an array of integers), returning its text.
    pub fn raw_simple(&mut self) -> Fast<&'a str> {
        let start = self.peek().map(|_| self.pos)?;
        match self.bytes.get(start)? {
            b'"' => {
                self.string()?;
            }
            b'[' => {
                self.array(|c| c.u64().map(drop))?;
            }
            b'n' => self.null().then_some(())?,
            b't' => self.literal(b"true").then_some(())?,
            b'f' => self.literal(b"false").then_some(())?,
            _ => {
                self.u64()?;
            }
        }
        self.slice(start, self.pos)
    }
}

/// Whether `a` and `b` are the same bytes; inline word compares for the short keys and
/// values the fast paths compare once per member (a `memcmp` call costs more than the
/// comparison).
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        let mut w = [0u8; N];
        if let Some(bytes) = s.get(at..at + N) {
            w.copy_from_slice(bytes);
        }
        w
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two overlapping words of N bytes cover N..=2N bytes.
    match n {
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// The key order of the last object of one kind: `next[i]` is the index of the key that
/// followed key i (`next[START]`: the first key).
pub struct KeyOrder {
    next: [u8; 33],
}

impl KeyOrder {
    const START: usize = 32;

    /// Predicts the listed order.
    pub fn listed() -> Self {
        let mut next = [0u8; 33];
        for (i, slot) in next.iter_mut().enumerate().take(32) {
            *slot = u8::try_from(i + 1).unwrap_or(0);
        }
        KeyOrder { next }
    }
}

/// The index of member `key` in `keys` (a schema's field list), at compile time: the
/// `usize` [`Cursor::members`] hands over for it.
pub use crate::wire::field_index as index_of;

/// The bits of `names` among `keys`, as [`Cursor::members`] reports the members seen.
pub const fn mask_of(keys: &[&str], names: &[&str]) -> u32 {
    let mut mask = 0;
    let mut i = 0;
    while i < names.len() {
        mask |= 1 << index_of(keys, names[i]);
        i += 1;
    }
    mask
}

/// Distinct non-empty alias names, sorted (ALIASES); duplicates leave it to the general
/// path.
pub fn aliases(cursor: &mut Cursor<'_>) -> Fast<Vec<String>> {
    let mut names = Vec::new();
    cursor.array(|c| {
        names.push(c.non_empty()?.to_owned());
        Some(())
    })?;
    sort_aliases(&mut names).then_some(names)
}

/// A rank object with exactly dp, ep, pp, tp, each a u64 (the §2.1 checks hold for any).
pub(crate) fn rank(cursor: &mut Cursor<'_>, order: &mut KeyOrder) -> Fast<ParallelRank> {
    const FIELDS: &[&str] = ParallelRank::FIELDS;
    const DP: usize = index_of(FIELDS, key::DP);
    const EP: usize = index_of(FIELDS, key::EP);
    const PP: usize = index_of(FIELDS, key::PP);
    const TP: usize = index_of(FIELDS, key::TP);
    let mut rank = [0u64; 4];
    let seen = cursor.members(FIELDS, order, |c, key| {
        *rank.get_mut(key)? = c.u64()?;
        Some(())
    })?;
    (seen == mask_of(FIELDS, ParallelRank::REQUIRED)).then_some(ParallelRank {
        dp: rank[DP],
        ep: rank[EP],
        pp: rank[PP],
        tp: rank[TP],
    })
}

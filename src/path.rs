//! JSON pointers built lazily: a borrowed chain of segments that is rendered only when
//! an error is reported, so the accepting path allocates nothing for locations.

use std::fmt::Write as _;

/// A location in a document: the root, or a key or index below a parent location.
#[derive(Clone, Copy, Debug)]
pub enum Path<'p> {
    /// The document root (pointer `""`).
    Root,
    /// Member `key` of the object at the parent location.
    Key(&'p Path<'p>, &'p str),
    /// Element `index` of the array at the parent location.
    Index(&'p Path<'p>, usize),
}

impl<'p> Path<'p> {
    /// The location of member `key` below this one.
    #[must_use]
    pub fn key(&'p self, key: &'p str) -> Path<'p> {
        Path::Key(self, key)
    }

    /// The location of element `index` below this one.
    #[must_use]
    pub fn index(&'p self, index: usize) -> Path<'p> {
        Path::Index(self, index)
    }

    /// Renders the RFC 6901 pointer (`~` as `~0`, `/` as `~1`).
    pub fn to_pointer(&self) -> String {
        let mut segments = Vec::new();
        let mut at = self;
        loop {
            match at {
                Path::Root => break,
                Path::Key(parent, key) => {
                    segments.push(Segment::Key(key));
                    at = parent;
                }
                Path::Index(parent, index) => {
                    segments.push(Segment::Index(*index));
                    at = parent;
                }
            }
        }
        let mut out = String::new();
        for segment in segments.iter().rev() {
            out.push('/');
            match segment {
                Segment::Key(key) => {
                    for c in key.chars() {
                        match c {
                            '~' => out.push_str("~0"),
                            '/' => out.push_str("~1"),
                            c => out.push(c),
                        }
                    }
                }
                Segment::Index(index) => {
                    let _ = write!(out, "{index}");
                }
            }
        }
        out
    }
}

enum Segment<'p> {
    Key(&'p str),
    Index(usize),
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn renders_rfc6901_pointers() {
        let root = Path::Root;
        assert_eq!(root.to_pointer(), "");
        let tensors = root.key("tensors");
        let third = tensors.index(3);
        let odd = third.key("a/b~c");
        assert_eq!(third.to_pointer(), "/tensors/3");
        assert_eq!(odd.to_pointer(), "/tensors/3/a~1b~0c");
    }
}

//! The automaton of every term starting with a prefix, for tantivy's term dictionary.

use tantivy_fst::Automaton;

/// Accepts the terms that start with its bytes.
#[derive(Debug, Clone)]
pub(super) struct Prefix(Vec<u8>);

impl Prefix {
    pub(super) fn new(prefix: &[u8]) -> Self {
        Self(prefix.to_vec())
    }
}

impl Automaton for Prefix {
    /// How many bytes of the prefix were read; `None` once a byte differed.
    type State = Option<usize>;

    fn start(&self) -> Self::State {
        Some(0)
    }

    fn is_match(&self, state: &Self::State) -> bool {
        *state == Some(self.0.len())
    }

    fn can_match(&self, state: &Self::State) -> bool {
        state.is_some()
    }

    fn will_always_match(&self, state: &Self::State) -> bool {
        *state == Some(self.0.len())
    }

    fn accept(&self, state: &Self::State, byte: u8) -> Self::State {
        match *state {
            Some(read) if read == self.0.len() => Some(read),
            Some(read) if self.0[read] == byte => Some(read + 1),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(prefix: &str, term: &str) -> bool {
        let automaton = Prefix::new(prefix.as_bytes());
        let mut state = automaton.start();
        for b in term.bytes() {
            state = automaton.accept(&state, b);
        }
        automaton.is_match(&state)
    }

    #[test]
    fn it_accepts_the_terms_that_start_with_the_prefix() {
        assert!(accepts("bird", "bird"));
        assert!(accepts("bird", "birds"));
        assert!(accepts("bird", "birdsong"));
        assert!(!accepts("bird", "bir"));
        assert!(!accepts("bird", "abird"));
        assert!(!accepts("bird", "bard"));
        assert!(accepts("é", "école"));
        assert!(!accepts("é", "ecole"));
    }
}

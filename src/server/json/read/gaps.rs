//! What the flat reader remembers of the bodies a member buffer read before (see [`Gaps`]).

use super::flat::MEMBERS_GUESS;

/// The text before each member's value in the bodies read last (from the end of the value
/// before, or the body's start, through the colon and the whitespace after it), with that
/// member's name, by the member's place. The reader reads such a text to the same name
/// wherever it stands at that place, so a body repeating it is read past it with one
/// comparison: an SDK batch's bodies differ only in some values. Only names without
/// escapes (borrowed from a body) are noted.
#[derive(Debug, Clone, Default)]
pub(super) struct Gaps<'de> {
    noted: Vec<(&'de [u8], &'de str)>,
    /// Whether a body was read with these gaps before.
    armed: bool,
}

impl<'de> Gaps<'de> {
    /// Whether a body was read with these gaps before (so this one notes its gaps); from
    /// now on one was.
    pub(super) fn arm(&mut self) -> bool {
        std::mem::replace(&mut self.armed, true)
    }

    /// The text noted before the value of member `index`, with the name it reads to.
    pub(super) fn get(&self, index: usize) -> Option<(&'de [u8], &'de str)> {
        self.noted.get(index).copied()
    }

    /// Notes `gap`, read to `name`, as the text before the value of member `index`.
    pub(super) fn note(&mut self, index: usize, gap: &'de [u8], name: &'de str) {
        let len = self.noted.len();
        match self.noted.get_mut(index) {
            Some(slot) => *slot = (gap, name),
            None if len == index => {
                // Room for a typical body's members at once (pushed one by one, the vector
                // regrew twice per batch).
                self.noted.reserve(MEMBERS_GUESS);
                self.noted.push((gap, name));
            }
            None => {}
        }
    }
}

/// Remembered texts do not make two member lists differ.
impl PartialEq for Gaps<'_> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

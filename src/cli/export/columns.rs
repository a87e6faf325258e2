//! Mapping each stored property of a row to its export column, cheaply.

use std::collections::HashMap;

use strata::model::EdmType;

/// Finds the column of a (property name, EDM type) pair. Rows of one table mostly store the
/// same properties in the same order, so the column found at each position of the previous
/// row is tried first (one byte compare) and only a miss hashes the name. Names are looked up
/// as stored bytes: a name equal to a known column's is valid UTF-8, so only new names need
/// checking, by whoever inserts them.
#[derive(Debug, Default)]
pub struct ColumnMap {
    /// Column index -> (property, type).
    keys: Vec<(String, EdmType)>,
    /// Property -> its columns, one per type seen.
    by_name: HashMap<Box<[u8]>, Vec<(EdmType, usize)>>,
    /// Stored position -> column found there in the previous row.
    shape: Vec<usize>,
}

impl ColumnMap {
    /// A map over `keys`, column `i` being `keys[i]`.
    pub fn with_columns(keys: impl IntoIterator<Item = (String, EdmType)>) -> Self {
        let mut map = Self::default();
        for (name, edm) in keys {
            map.insert(name, edm);
        }
        map
    }

    /// The (property, type) of every column, in column order.
    pub fn into_keys(self) -> Vec<(String, EdmType)> {
        self.keys
    }

    /// The column of `name` with type `edm`, the property stored at `position` of its row.
    // Called for every stored property: the call's register saves were a third of its cost.
    #[inline(always)]
    pub fn get(&mut self, position: usize, name: &[u8], edm: EdmType) -> Option<usize> {
        if let Some(&column) = self.shape.get(position)
            && let Some((known, known_edm)) = self.keys.get(column)
            && *known_edm == edm
            && known.as_bytes() == name
        {
            return Some(column);
        }
        let column = self
            .by_name
            .get(name)?
            .iter()
            .find(|(t, _)| *t == edm)
            .map(|&(_, column)| column)?;
        self.remember(position, column);
        Some(column)
    }

    /// Adds the column of a pair [`Self::get`] did not find at `position`.
    pub fn insert_at(&mut self, position: usize, name: &str, edm: EdmType) -> usize {
        let column = self.insert(name.to_owned(), edm);
        self.remember(position, column);
        column
    }

    fn insert(&mut self, name: String, edm: EdmType) -> usize {
        let column = self.keys.len();
        self.by_name
            .entry(name.as_bytes().into())
            .or_default()
            .push((edm, column));
        self.keys.push((name, edm));
        column
    }

    fn remember(&mut self, position: usize, column: usize) {
        if position >= self.shape.len() {
            // Slots never filled stay out of range of `keys`, so they always miss.
            self.shape.resize(position + 1, usize::MAX);
        }
        if let Some(slot) = self.shape.get_mut(position) {
            *slot = column;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `get`, then `insert_at` on a miss, as the schema scan does; the flag says whether the
    /// pair was new.
    fn get_or_insert(
        map: &mut ColumnMap,
        position: usize,
        name: &str,
        edm: EdmType,
    ) -> (usize, bool) {
        match map.get(position, name.as_bytes(), edm) {
            Some(column) => (column, false),
            None => (map.insert_at(position, name, edm), true),
        }
    }

    #[test]
    fn lookups_agree_whatever_the_order_of_properties() {
        let mut map = ColumnMap::default();
        assert_eq!(get_or_insert(&mut map, 0, "A", EdmType::Int32), (0, true));
        assert_eq!(get_or_insert(&mut map, 1, "B", EdmType::String), (1, true));
        assert_eq!(get_or_insert(&mut map, 0, "B", EdmType::String), (1, false));
        assert_eq!(get_or_insert(&mut map, 1, "A", EdmType::Int32), (0, false));
        assert_eq!(get_or_insert(&mut map, 1, "A", EdmType::Int64), (2, true));
        assert_eq!(map.get(0, b"A", EdmType::Int32), Some(0));
        assert_eq!(map.get(0, b"C", EdmType::Int32), None);
        assert_eq!(map.get(5, b"A", EdmType::Double), None);
        assert_eq!(map.into_keys().len(), 3);
    }

    #[test]
    fn names_that_are_not_utf8_never_match_a_column() {
        let mut map = ColumnMap::with_columns([("A".to_owned(), EdmType::Int32)]);
        assert_eq!(map.get(0, b"A", EdmType::Int32), Some(0));
        assert_eq!(map.get(0, b"\xFF", EdmType::Int32), None);
        assert_eq!(map.get(0, b"A\xFF", EdmType::Int32), None);
    }
}

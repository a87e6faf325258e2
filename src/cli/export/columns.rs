//! Mapping each stored property of a row to its export column, cheaply.

use std::collections::HashMap;

use strata::model::EdmType;

/// Finds the column of a (property name, EDM type) pair. Rows of one table mostly store the
/// same properties in the same order, so the column found at each position of the previous
/// row is tried first (one string compare) and only a miss hashes the name.
#[derive(Debug, Default)]
pub struct ColumnMap {
    /// Column index -> (property, type).
    keys: Vec<(String, EdmType)>,
    /// Property -> its columns, one per type seen.
    by_name: HashMap<String, Vec<(EdmType, usize)>>,
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
    #[inline]
    pub fn get(&mut self, position: usize, name: &str, edm: EdmType) -> Option<usize> {
        if let Some(&column) = self.shape.get(position)
            && let Some((known, known_edm)) = self.keys.get(column)
            && *known_edm == edm
            && known == name
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

    /// As [`Self::get`], adding a column when the pair is new; the flag says whether it was.
    #[inline]
    pub fn get_or_insert(&mut self, position: usize, name: &str, edm: EdmType) -> (usize, bool) {
        if let Some(column) = self.get(position, name, edm) {
            return (column, false);
        }
        let column = self.insert(name.to_owned(), edm);
        self.remember(position, column);
        (column, true)
    }

    fn insert(&mut self, name: String, edm: EdmType) -> usize {
        let column = self.keys.len();
        self.by_name
            .entry(name.clone())
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

    #[test]
    fn lookups_agree_whatever_the_order_of_properties() {
        let mut map = ColumnMap::default();
        assert_eq!(map.get_or_insert(0, "A", EdmType::Int32), (0, true));
        assert_eq!(map.get_or_insert(1, "B", EdmType::String), (1, true));
        assert_eq!(map.get_or_insert(0, "B", EdmType::String), (1, false));
        assert_eq!(map.get_or_insert(1, "A", EdmType::Int32), (0, false));
        assert_eq!(map.get_or_insert(1, "A", EdmType::Int64), (2, true));
        assert_eq!(map.get(0, "A", EdmType::Int32), Some(0));
        assert_eq!(map.get(0, "C", EdmType::Int32), None);
        assert_eq!(map.get(5, "A", EdmType::Double), None);
        assert_eq!(map.into_keys().len(), 3);
    }
}

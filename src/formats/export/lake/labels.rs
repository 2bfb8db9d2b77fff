//! The lake's text columns of few values (`recording`, `format`, `channel`, `entity`, `key`)
//! as the Parquet table's label writer takes them: text row by row, or indices into a list
//! of texts known beforehand (a recording's name, a frame's signals), which it reads without
//! comparing any text (docs/performance.md, "Lake, fifth pass"). The file's schema says
//! utf8 either way: the label writer writes the same pages from both.

use std::mem::replace;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, Int32Builder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, Int32Array, StringArray};

use super::file::BATCH_ROWS;

/// A column of one text, made once and lent a slice per batch: a recording's name and
/// format are the same on every row of its files.
pub struct Constant {
    text: ArrayRef,
    column: DictionaryArray<Int32Type>,
}

impl Constant {
    pub fn new(text: &str) -> Constant {
        let text: ArrayRef = Arc::new(StringArray::from(vec![text]));
        Constant {
            column: DictionaryArray::new(Int32Array::from(Vec::<i32>::new()), text.clone()),
            text,
        }
    }

    pub fn column(&mut self, rows: usize) -> ArrayRef {
        if self.column.len() < rows {
            let zeros = Int32Array::from(vec![0; rows.max(BATCH_ROWS)]);
            self.column = DictionaryArray::new(zeros, self.text.clone());
        }
        Arc::new(self.column.slice(0, rows))
    }
}

/// A column of few texts, filled as text or, once given its [`Label::dictionary`], as
/// indices into it; a batch is one or the other (the rows of the kind that comes second
/// are turned into the first's).
pub struct Label {
    text: StringBuilder,
    keys: Int32Builder,
    dictionary: Option<StringArray>,
}

impl Label {
    pub fn new() -> Label {
        Label {
            text: text_builder(),
            keys: Int32Builder::new(),
            dictionary: None,
        }
    }

    /// The texts that [`Label::push_keys`] indexes. A dictionary given again begins with the
    /// one before (a recording's particles, as many as a frame had at most), so that the
    /// keys already pushed keep their texts.
    pub fn dictionary(&mut self, texts: StringArray) {
        self.dictionary = Some(texts);
    }

    /// The texts given last to [`Label::dictionary`].
    pub fn texts(&self) -> Option<&StringArray> {
        self.dictionary.as_ref()
    }

    pub fn push(&mut self, text: Option<&str>) {
        self.texts_first();
        self.text.append_option(text);
    }

    /// Rows of the dictionary's texts at `keys` (a null key: a null row).
    pub fn push_keys(&mut self, keys: &Int32Array) {
        match &self.dictionary {
            Some(_) if self.text.is_empty() => self.keys.append_array(keys),
            Some(texts) => (keys.iter()).for_each(|k| self.text.append_option(text_at(texts, k))),
            None => self.text.append_nulls(keys.len()),
        }
    }

    /// `n` rows of the dictionary's text at `key`.
    pub fn push_key_n(&mut self, key: i32, n: usize) {
        match &self.dictionary {
            Some(_) if self.text.is_empty() => self.keys.append_value_n(key, n),
            Some(texts) => match text_at(texts, Some(key)) {
                Some(text) => self.text.append_value_n(text, n),
                None => self.text.append_nulls(n),
            },
            None => self.text.append_nulls(n),
        }
    }

    /// Turns the batch's keys, if any, into their texts: text comes after them.
    fn texts_first(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        let keys = self.keys.finish();
        if let Some(texts) = &self.dictionary {
            (keys.iter()).for_each(|k| self.text.append_option(text_at(texts, k)));
        }
    }

    /// The batch's column: indices into the dictionary if any were pushed, else text. The
    /// builder used starts the next batch at a batch's size.
    pub fn finish(&mut self) -> ArrayRef {
        match &self.dictionary {
            Some(texts) if !self.keys.is_empty() => {
                let fresh = Int32Builder::with_capacity(BATCH_ROWS);
                let keys = replace(&mut self.keys, fresh).finish();
                Arc::new(DictionaryArray::new(keys, Arc::new(texts.clone())))
            }
            _ => Arc::new(replace(&mut self.text, text_builder()).finish()),
        }
    }
}

/// The text at `key` of `texts`; `None` for a null key or one out of them.
fn text_at(texts: &StringArray, key: Option<i32>) -> Option<&str> {
    let k = usize::try_from(key?).ok().filter(|&k| k < texts.len())?;
    texts.is_valid(k).then(|| texts.value(k))
}

/// A builder with room for a batch of short texts.
fn text_builder() -> StringBuilder {
    StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;

    /// The texts of a finished label column, whether keys or text.
    fn texts(column: &ArrayRef) -> Vec<Option<String>> {
        match column.as_dictionary_opt::<Int32Type>() {
            Some(d) => {
                let values = d.values().as_string::<i32>();
                (d.keys().iter())
                    .map(|k| k.map(|k| values.value(k as usize).to_string()))
                    .collect()
            }
            None => (column.as_string::<i32>().iter())
                .map(|t| t.map(str::to_string))
                .collect(),
        }
    }

    fn label() -> Label {
        let mut label = Label::new();
        label.dictionary(StringArray::from(vec![Some("a"), Some("b")]));
        label
    }

    #[test]
    fn keys_and_text_in_one_batch_become_text_in_their_order() {
        let want = ["b", "b", "a", "x", "a", "b"].map(|t| Some(t.to_string()));
        let mut keys_first = label();
        keys_first.push_key_n(1, 2);
        keys_first.push_keys(&Int32Array::from(vec![0]));
        keys_first.push(Some("x"));
        keys_first.push_keys(&Int32Array::from(vec![0, 1]));
        let column = keys_first.finish();
        assert_eq!(column.data_type(), &arrow_schema::DataType::Utf8);
        assert_eq!(texts(&column), want);

        // The next batch starts afresh, as indices.
        keys_first.push_key_n(0, 1);
        let column = keys_first.finish();
        assert!(column.as_dictionary_opt::<Int32Type>().is_some());
        assert_eq!(texts(&column), [Some("a".to_string())]);
    }

    #[test]
    fn a_dictionary_given_again_keeps_the_keys_pushed() {
        let mut label = label();
        label.push_keys(&Int32Array::from(vec![1]));
        label.dictionary(StringArray::from(vec![Some("a"), Some("b"), Some("c")]));
        label.push_keys(&Int32Array::from(vec![2, 0]));
        let want = ["b", "c", "a"].map(|t| Some(t.to_string()));
        assert_eq!(texts(&label.finish()), want);
    }
}

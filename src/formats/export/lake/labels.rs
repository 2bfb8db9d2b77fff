//! The lake's text columns of few values (`recording`, `format`, `channel`, `entity`, `key`)
//! as the Parquet table's label writer takes them: text row by row, or indices into a list
//! of texts known beforehand (a recording's name, a frame's signals), which it reads without
//! comparing any text (docs/performance.md, "Lake, fifth pass"). The file's schema says
//! utf8 either way: the label writer writes the same pages from both.

use std::mem::replace;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, Int32Builder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, StringArray};

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

/// A column of few texts, filled either as text or, once given its [`Label::dictionary`], as
/// indices into it (not both in one batch).
pub struct Label {
    text: StringBuilder,
    keys: Int32Builder,
    dictionary: Option<ArrayRef>,
}

impl Label {
    pub fn new() -> Label {
        Label {
            text: text_builder(),
            keys: Int32Builder::new(),
            dictionary: None,
        }
    }

    /// The texts that [`Label::push_keys`] indexes.
    pub fn dictionary(&mut self, texts: StringArray) {
        self.dictionary = Some(Arc::new(texts));
    }

    pub fn push(&mut self, text: Option<&str>) {
        self.text.append_option(text);
    }

    /// `n` rows of `text`.
    pub fn push_n(&mut self, text: &str, n: usize) {
        self.text.append_value_n(text, n);
    }

    /// Rows of `texts` (a pattern made once: appending it cannot overflow a batch's
    /// offsets, which stay far below 2 GiB).
    pub fn push_texts(&mut self, texts: &StringArray) {
        let _ = self.text.append_array(texts);
    }

    /// Rows of the dictionary's texts at `keys` (a null key: a null row).
    pub fn push_keys(&mut self, keys: &Int32Array) {
        self.keys.append_array(keys);
    }

    /// The batch's column: indices into the dictionary if any were pushed, else text. The
    /// builder used starts the next batch at a batch's size.
    pub fn finish(&mut self) -> ArrayRef {
        match &self.dictionary {
            Some(texts) if !self.keys.is_empty() => {
                let fresh = Int32Builder::with_capacity(BATCH_ROWS);
                let keys = replace(&mut self.keys, fresh).finish();
                Arc::new(DictionaryArray::new(keys, texts.clone()))
            }
            _ => Arc::new(replace(&mut self.text, text_builder()).finish()),
        }
    }
}

/// A builder with room for a batch of short texts.
fn text_builder() -> StringBuilder {
    StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 16)
}

//! Commands through the built `simrec` binary that hold for every format.

mod align;
mod conventions;
mod convert;
mod diff;
mod docs_examples;
mod each;
mod every_pair;
mod inspect;
mod json_contract;
mod many_inputs;
mod merge_cat;
mod outputs;
mod plot;
mod recover;
mod resample;
mod signal_selection;
mod slice;
mod time;
mod validate;

//! A slice as a source: the format's own when it builds one (3es), else the generic window
//! over the recording (context folded per channel and entity), with a selection applied.

use std::path::PathBuf;

use crate::formats::origin::with_origin;
use crate::formats::{registry, Conflict, ReadError, ReadOptions, SliceRequest, Source};
use crate::model::time::unordered_window;

use super::select::{Selected, Selection, SelectionHandle};
use super::{open_aligned, resolve, Window};

/// The slice `request` asks for of the recording `paths` make (lined up by their starts
/// when `starts`), with `selection` applied; its report fills the handle returned.
///
/// Every window, on every format, keeps one rule (`model::time`): one that ends where or
/// before it starts is refused here, before anything is opened, when its bounds say so
/// alone, else where they are resolved; one outside the recording where the slice finds
/// it (a format's own slice, or [`Window`]); one that selects no record, as any selection
/// that leaves nothing to write.
pub fn open_slice(
    paths: &[PathBuf],
    request: &SliceRequest,
    options: ReadOptions,
    starts: bool,
    selection: Selection,
) -> Result<(Box<dyn Source>, SelectionHandle), ReadError> {
    if let Some(why) = unordered_window(request.start, request.end) {
        return Err(why.into());
    }
    let format = paths.first().map(|p| registry::detect(p)).transpose()?;
    if let Some(format) = format {
        let same = paths[1..]
            .iter()
            .all(|p| registry::detect(p).is_ok_and(|f| f.name() == format.name()));
        if same {
            let slice = format
                .slicer()
                .and_then(|s| s.open_slice(paths, request, options));
            if let Some(source) = slice {
                let source = with_origin(source?, &paths[0], options)?;
                let report = windowed();
                let selected = Selected::reporting(source, selection, report.clone());
                return Ok((Box::new(selected), report));
            }
        }
    }
    if let Some((name, _)) = request.selectors.first() {
        return Err(ReadError::Conflict(Conflict::SelectorNotXrec(
            name.to_string(),
        )));
    }
    let walk = ReadOptions {
        decode: false,
        ..options
    };
    let span = resolve(request.start, request.end, || {
        open_aligned(paths, walk, starts)
    })?;
    let source = open_aligned(paths, options, starts)?;
    let report = windowed();
    let window = Window::new(source, span, request.rebase);
    let selected = Selected::reporting(window, selection, report.clone());
    Ok((Box::new(selected), report))
}

/// A selection report for a window: a window (or a format's selector) selects, so one
/// that leaves no record to write is refused as any selection is.
fn windowed() -> SelectionHandle {
    let report = SelectionHandle::default();
    report.borrow_mut().selective = true;
    report
}

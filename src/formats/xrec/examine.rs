//! The checks on an Event packet's bytes and on each event, apart from reading them: each
//! `examine_*` says what is wrong with one thing, as a finding for the reader to place and
//! report.

use super::codes::*;
use super::layout::{self, Bounds, Event};
use crate::report::{Finding, Severity};

fn err(code: &'static str, message: impl Into<String>) -> Finding {
    Finding::new(Severity::Error, code, message)
}

/// Bounds whose times are not numbers: the packet is refused.
pub fn examine_finite_bounds(b: &Bounds) -> Option<Finding> {
    (!(b.rtss_begin.is_finite() && b.rtss_end.is_finite()))
        .then(|| err(NONFINITE_TIME, "a packet's rtss bounds are not finite"))
}

/// Bounds that begin after they end.
pub fn examine_bounds_order(b: &Bounds) -> Option<Finding> {
    (b.frame_begin > b.frame_end || b.rtss_begin > b.rtss_end).then(|| {
        err(
            BOUNDS_VIOLATION,
            format!(
                "bounds begin after they end (frames {}..{}, rtss {}..{})",
                b.frame_begin, b.frame_end, b.rtss_begin, b.rtss_end
            ),
        )
    })
}

/// A packet that begins before the one before it.
pub fn examine_packet_order(b: &Bounds, previous_begin: Option<f64>) -> Option<Finding> {
    let prev = previous_begin.filter(|&prev| b.rtss_begin < prev)?;
    Some(Finding::new(
        Severity::Info,
        PACKET_OVERLAP,
        format!(
            "rtss_begin {} is before the previous packet's {prev}",
            b.rtss_begin
        ),
    ))
}

/// A compressed area that would decompress beyond simrec's limit: refused before inflating.
pub fn examine_events_bytes(b: &Bounds) -> Option<Finding> {
    (b.events_bytes > layout::MAX_EVENTS_BYTES).then(|| {
        err(
            DECOMPRESS,
            format!(
                "events_bytes {} is above simrec's limit of 1 GiB per packet",
                b.events_bytes
            ),
        )
    })
}

/// A stored (uncompressed) area whose length is not the one its bounds declare.
pub fn examine_stored_area(area_len: usize, b: &Bounds) -> Option<Finding> {
    (area_len != b.events_bytes as usize).then(|| {
        err(
            EVENTS_BYTES,
            format!(
                "the events area has {area_len} bytes; events_bytes says {}",
                b.events_bytes
            ),
        )
    })
}

/// A gzip member that does not decompress, or not to the length the bounds declare.
pub fn examine_inflated(read: std::io::Result<usize>, b: &Bounds) -> Option<Finding> {
    match read {
        Err(e) => Some(err(
            DECOMPRESS,
            format!("the gzip member does not decompress: {e}"),
        )),
        Ok(n) if n != b.events_bytes as usize => Some(err(
            DECOMPRESS,
            format!(
                "the gzip member holds {}{} bytes; events_bytes says {}",
                if n > b.events_bytes as usize {
                    "more than "
                } else {
                    ""
                },
                n.min(b.events_bytes as usize),
                b.events_bytes
            ),
        )),
        Ok(_) => None,
    }
}

/// A packet that holds no event.
pub fn examine_event_count(b: &Bounds) -> Option<Finding> {
    (b.event_count == 0).then(|| {
        Finding::new(
            Severity::Warning,
            EMPTY_PACKET,
            "an Event packet with no events",
        )
    })
}

/// An event with no type, or times that are not numbers: it is not read.
pub fn examine_event(ev: &Event) -> Option<Finding> {
    if ev.type_name.is_empty() {
        return Some(err(EMPTY_TYPE, "an empty type name"));
    }
    if !(ev.create_time.is_finite() && ev.capture_time.is_finite()) {
        return Some(err(
            NONFINITE_TIME,
            format!(
                "create_time {} or capture_time {} is not finite",
                ev.create_time, ev.capture_time
            ),
        ));
    }
    None
}

/// An event outside its packet's bounds.
pub fn examine_event_bounds(ev: &Event, b: &Bounds) -> Option<Finding> {
    let outside = ev.create_frame < b.frame_begin
        || ev.create_frame > b.frame_end
        || ev.create_time < b.rtss_begin
        || ev.create_time > b.rtss_end;
    outside.then(|| {
        err(
            BOUNDS_VIOLATION,
            format!(
                "frame {} at rtss {} is outside the packet's bounds (frames {}..{}, rtss {}..{})",
                ev.create_frame,
                ev.create_time,
                b.frame_begin,
                b.frame_end,
                b.rtss_begin,
                b.rtss_end
            ),
        )
    })
}

/// An event whose time is before the one before it in its packet.
pub fn examine_event_order(out_of_order: bool) -> Option<Finding> {
    out_of_order.then(|| {
        Finding::new(
            Severity::Warning,
            EVENT_ORDER,
            "create_time decreases inside the packet",
        )
    })
}

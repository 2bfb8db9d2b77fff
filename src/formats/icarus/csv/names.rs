//! The header line: `time` and the column names, unquoted as Icarus writes them, or quoted
//! per RFC 4180 when a name holds a comma, a quote or a line break (simrec's writer does that,
//! with a warning; Icarus's names never need it).

/// Whether a name must be quoted.
pub fn needs_quotes(name: &str) -> bool {
    name.bytes()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
}

/// Appends `name` as a header cell.
pub fn push_name(out: &mut Vec<u8>, name: &str) {
    if needs_quotes(name) {
        out.push(b'"');
        for b in name.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(name.as_bytes());
    }
}

/// Where the header's quoting stands after some bytes: whether a quoted cell is still open,
/// so that the header goes on past a line break.
pub fn quote_open(bytes: &[u8]) -> bool {
    let mut open = false;
    let mut at_cell_start = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if open {
            if b == b'"' {
                if bytes.get(i + 1) == Some(&b'"') {
                    i += 1;
                } else {
                    open = false;
                }
            }
        } else if b == b'"' && at_cell_start {
            open = true;
        }
        at_cell_start = b == b',' && !open;
        i += 1;
    }
    open
}

/// The cells of a header (without its final line break). A quote that does not open a cell
/// is kept as text; an unterminated quoted cell runs to the end. Names that are not UTF-8
/// are read lossily.
pub fn split_header(bytes: &[u8]) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = Vec::new();
    let mut i = 0;
    let mut quoted = false;
    let mut at_cell_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        if quoted {
            if b == b'"' {
                if bytes.get(i + 1) == Some(&b'"') {
                    cell.push(b'"');
                    i += 1;
                } else {
                    quoted = false;
                }
            } else {
                cell.push(b);
            }
            at_cell_start = false;
        } else if b == b',' {
            cells.push(String::from_utf8_lossy(&cell).into_owned());
            cell.clear();
            at_cell_start = true;
            i += 1;
            continue;
        } else if b == b'"' && at_cell_start {
            quoted = true;
            at_cell_start = false;
        } else {
            cell.push(b);
            at_cell_start = false;
        }
        i += 1;
    }
    cells.push(String::from_utf8_lossy(&cell).into_owned());
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_quoting() {
        let names = [
            "time",
            "Rocket.Vehicle.position.x",
            "a,b",
            "say \"hi\"",
            "two\nlines",
        ];
        let mut line = Vec::new();
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            push_name(&mut line, n);
        }
        assert_eq!(
            String::from_utf8_lossy(&line),
            "time,Rocket.Vehicle.position.x,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\""
        );
        assert!(!quote_open(&line));
        assert!(quote_open(b"time,\"two"));
        assert_eq!(split_header(&line), names);
        assert_eq!(split_header(b"time"), ["time"]);
        assert_eq!(split_header(b"time,a\"b"), ["time", "a\"b"]);
    }
}

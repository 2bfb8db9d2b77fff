//! The Vulcan schema attribute (`/metadata` `schema`, spec §B2): read strictly as JSON, else
//! leniently as Vulcan writes it (names and units concatenated into the text without
//! escaping), and written as valid JSON in the same shape.

use serde_json::Value as Json;

/// One signal as the schema lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaSignal {
    pub name: String,
    /// `double`, `int32`, `int64` as Vulcan writes them (`float`, `bool` accepted).
    pub ty: Option<String>,
    pub lifecycle: Option<String>,
    /// Vulcan's slot offset (8 × registration index).
    pub offset: Option<i64>,
    pub unit: Option<String>,
    pub semantic: Option<String>,
}

impl SchemaSignal {
    /// Whether the schema says the signal is static (any other lifecycle is dynamic,
    /// spec §B2: Icarus may leave an input's lifecycle uninitialised).
    pub fn is_static(&self) -> bool {
        self.lifecycle.as_deref() == Some("static")
    }
}

/// How the schema text was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// Valid JSON.
    Strict,
    /// Not valid JSON, read as Vulcan concatenates it (names taken verbatim).
    Lenient,
}

impl Parsed {
    pub fn name(self) -> &'static str {
        match self {
            Parsed::Strict => "strict",
            Parsed::Lenient => "lenient",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    pub signals: Vec<SchemaSignal>,
    pub frame_size_bytes: Option<u64>,
    pub parsed: Parsed,
}

/// The readings of `text` that succeed, strict first. Both are offered because a valid JSON
/// text can still be Vulcan's unescaped one (`a\tb` parses as a tab): the caller keeps the
/// one whose names the file's datasets have.
pub fn readings(text: &str) -> Vec<Schema> {
    let mut found = Vec::new();
    if let Some(s) = strict(text) {
        found.push(s);
    }
    if let Some(s) = lenient(text) {
        if !found.iter().any(|f| f.signals == s.signals) {
            found.push(s);
        }
    }
    found
}

fn strict(text: &str) -> Option<Schema> {
    let json: Json = serde_json::from_str(text).ok()?;
    let object = json.as_object()?;
    let mut signals = Vec::new();
    for s in object.get("signals")?.as_array()? {
        let s = s.as_object()?;
        let text = |key: &str| s.get(key).and_then(Json::as_str).map(str::to_string);
        signals.push(SchemaSignal {
            name: text("name")?,
            ty: text("type"),
            lifecycle: text("lifecycle"),
            offset: s.get("offset").and_then(Json::as_i64),
            unit: text("unit").or_else(|| text("units")),
            semantic: text("semantic"),
        });
    }
    Some(Schema {
        signals,
        frame_size_bytes: object.get("frame_size_bytes").and_then(Json::as_u64),
        parsed: Parsed::Strict,
    })
}

/// Reads Vulcan's text: `{"signals": [{"key": value, …}, …], "frame_size_bytes": n}` where a
/// string value runs verbatim to the quote that ends the value (one followed by `}` or by
/// `,` and the next `"key":`), whatever it holds.
fn lenient(text: &str) -> Option<Schema> {
    let mut p = Scanner {
        s: text.as_bytes(),
        at: 0,
    };
    p.expect(b'{')?;
    let mut signals = None;
    let mut frame_size_bytes = None;
    loop {
        let key = p.key()?.to_string();
        match key.as_str() {
            "signals" => signals = Some(p.signal_list()?),
            _ => {
                let v = p.value()?;
                if key == "frame_size_bytes" {
                    frame_size_bytes = v.parse().ok();
                }
            }
        }
        if !p.next_member(b'}')? {
            break;
        }
    }
    Some(Schema {
        signals: signals?,
        frame_size_bytes,
        parsed: Parsed::Lenient,
    })
}

struct Scanner<'a> {
    s: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.skip_space();
        (self.s.get(self.at) == Some(&b)).then(|| self.at += 1)
    }

    /// `"key":`, a key being plain text up to the next quote.
    fn key(&mut self) -> Option<&str> {
        self.expect(b'"')?;
        let start = self.at;
        let len = self.s.get(start..)?.iter().position(|&b| b == b'"')?;
        self.at = start + len + 1;
        self.expect(b':')?;
        std::str::from_utf8(&self.s[start..start + len]).ok()
    }

    /// After a member: `,` (true: another follows) or `close` (false).
    fn next_member(&mut self, close: u8) -> Option<bool> {
        self.skip_space();
        match self.s.get(self.at)? {
            b',' => {
                self.at += 1;
                Some(true)
            }
            &b if b == close => {
                self.at += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// A number or a verbatim string, as text.
    fn value(&mut self) -> Option<String> {
        self.skip_space();
        if self.s.get(self.at) == Some(&b'"') {
            let start = self.at + 1;
            let mut end = start;
            loop {
                end += self.s.get(end..)?.iter().position(|&b| b == b'"')?;
                if self.ends_value(end + 1) {
                    break;
                }
                end += 1;
            }
            self.at = end + 1;
            return std::str::from_utf8(&self.s[start..end])
                .ok()
                .map(str::to_string);
        }
        let start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|b| b.is_ascii_digit() || b"-+.eE".contains(b))
        {
            self.at += 1;
        }
        (self.at > start).then(|| String::from_utf8_lossy(&self.s[start..self.at]).into_owned())
    }

    /// Whether a string value can end just before `at`: what follows is `}` or `]`, or `,`
    /// and then the next `"key":` of the same object (a plain key, no quote inside).
    fn ends_value(&self, at: usize) -> bool {
        let rest = self.s.get(at..).unwrap_or_default();
        let rest = trim_start(rest);
        match rest.first() {
            Some(b'}') | Some(b']') => true,
            Some(b',') => {
                let next = trim_start(&rest[1..]);
                let Some(key) = next.strip_prefix(b"\"") else {
                    return false;
                };
                let Some(close) = key.iter().position(|&b| b == b'"') else {
                    return false;
                };
                close > 0
                    && key[..close]
                        .iter()
                        .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    && trim_start(&key[close + 1..]).first() == Some(&b':')
            }
            _ => false,
        }
    }

    fn signal_list(&mut self) -> Option<Vec<SchemaSignal>> {
        self.expect(b'[')?;
        let mut signals = Vec::new();
        self.skip_space();
        if self.s.get(self.at) == Some(&b']') {
            self.at += 1;
            return Some(signals);
        }
        loop {
            signals.push(self.signal()?);
            if !self.next_member(b']')? {
                return Some(signals);
            }
        }
    }

    fn signal(&mut self) -> Option<SchemaSignal> {
        self.expect(b'{')?;
        let mut s = SchemaSignal {
            name: String::new(),
            ty: None,
            lifecycle: None,
            offset: None,
            unit: None,
            semantic: None,
        };
        let mut named = false;
        loop {
            let key = self.key()?.to_string();
            let value = self.value()?;
            match key.as_str() {
                "name" => {
                    s.name = value;
                    named = true;
                }
                "type" => s.ty = Some(value),
                "lifecycle" => s.lifecycle = Some(value),
                "offset" => s.offset = value.parse().ok(),
                "unit" | "units" => s.unit = Some(value),
                "semantic" => s.semantic = Some(value),
                _ => {}
            }
            if !self.next_member(b'}')? {
                break;
            }
        }
        named.then_some(s)
    }
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &b[n..]
}

/// The schema text simrec writes: Vulcan's shape (`signals` with `name`, `type`,
/// `lifecycle`, `offset` = 8 × index, `unit` and `semantic` when not empty, then
/// `frame_size_bytes`), laid out as Vulcan lays it out, but valid JSON (strings escaped).
pub fn render(signals: &[SchemaSignal]) -> String {
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut out = String::from("{\n  \"signals\": [\n");
    for (i, s) in signals.iter().enumerate() {
        out.push_str("    {\n");
        out.push_str(&format!("      \"name\": {},\n", quoted(&s.name)));
        let ty = s.ty.as_deref().unwrap_or("double");
        out.push_str(&format!("      \"type\": {},\n", quoted(ty)));
        let lifecycle = s.lifecycle.as_deref().unwrap_or("dynamic");
        out.push_str(&format!("      \"lifecycle\": {},\n", quoted(lifecycle)));
        out.push_str(&format!("      \"offset\": {}", 8 * i));
        for (key, value) in [("unit", &s.unit), ("semantic", &s.semantic)] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                out.push_str(&format!(",\n      \"{key}\": {}", quoted(v)));
            }
        }
        out.push_str("\n    }");
        if i + 1 < signals.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "  ],\n  \"frame_size_bytes\": {}\n}}",
        8 * signals.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(name: &str, ty: &str, offset: i64, unit: Option<&str>) -> SchemaSignal {
        SchemaSignal {
            name: name.into(),
            ty: Some(ty.into()),
            lifecycle: Some("dynamic".into()),
            offset: Some(offset),
            unit: unit.map(str::to_string),
            semantic: None,
        }
    }

    #[test]
    fn vulcan_text_without_escaping_is_read_leniently() {
        // As Vulcan concatenates it (spec §B2), with a quote and a backslash in names.
        let text = "{\n  \"signals\": [\n    {\n      \"name\": \"A.say\"hi\"\",\n      \"type\": \"double\",\n      \"lifecycle\": \"dynamic\",\n      \"offset\": 0,\n      \"unit\": \"in\"\"\n    },\n    {\n      \"name\": \"A.dir\\name\",\n      \"type\": \"int64\",\n      \"lifecycle\": \"static\",\n      \"offset\": 8\n    }\n  ],\n  \"frame_size_bytes\": 16\n}";
        let r = readings(text);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].parsed, Parsed::Lenient);
        assert_eq!(r[0].frame_size_bytes, Some(16));
        assert_eq!(
            r[0].signals[0],
            signal("A.say\"hi\"", "double", 0, Some("in\""))
        );
        assert_eq!(r[0].signals[1].name, "A.dir\\name");
        assert!(r[0].signals[1].is_static());
    }

    #[test]
    fn a_valid_escape_gives_two_readings_strict_first() {
        let text = r#"{"signals":[{"name":"A.tab\table","type":"double","lifecycle":"dynamic","offset":0}],"frame_size_bytes":8}"#;
        let r = readings(text);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].signals[0].name, "A.tab\table");
        assert_eq!(r[1].signals[0].name, "A.tab\\table");
    }

    #[test]
    fn what_simrec_writes_reads_back_strictly() {
        let signals = vec![
            signal("Rocket.q\"uote", "double", 0, Some("m")),
            SchemaSignal {
                semantic: Some("boolean".into()),
                lifecycle: Some("static".into()),
                ..signal("Rocket.on", "int32", 8, None)
            },
        ];
        let text = render(&signals);
        let r = readings(&text);
        assert_eq!(r[0].parsed, Parsed::Strict);
        assert_eq!(r[0].signals, signals);
        assert_eq!(r[0].frame_size_bytes, Some(16));
        assert!(
            text.starts_with("{\n  \"signals\": [\n    {\n      \"name\": \"Rocket.q\\\"uote\",\n")
        );
    }

    #[test]
    fn garbage_has_no_reading() {
        for text in [
            "",
            "not json",
            "{\"signals\": 3}",
            "{\"signals\": [{\"type\": \"double\"}]}",
            "{",
            "{\"signals\": [{\"name\": \"a",
        ] {
            assert!(readings(text).is_empty(), "{text}");
        }
        assert_eq!(readings("{\"signals\": []}")[0].signals, vec![]);
    }
}

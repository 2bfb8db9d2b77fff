//! Compatibility of an Icarus recording with a current schema (spec §A12): the rules of
//! Icarus's documentation, made precise. Both sides are schema documents in the `.icarec`
//! `schema.json` shape; a flat recording (HDF5, CSV) has one derived from its channels.

use semver::Version;
use serde_json::{json, Map, Value as Json};

use super::common::{SignalType, ICAREC_HEADER_KEY};
use crate::model::Header;
use crate::report::{Finding, Severity};

pub const COMPAT_SAME: &str = "ICAREC_COMPAT_SAME";
pub const COMPAT_TOO_OLD: &str = "ICAREC_COMPAT_TOO_OLD";
pub const COMPAT_BREAKING: &str = "ICAREC_COMPAT_BREAKING";
pub const COMPAT_MAJOR: &str = "ICAREC_COMPAT_MAJOR";
pub const COMPAT_DEFAULTED: &str = "ICAREC_COMPAT_DEFAULTED";
pub const COMPAT_MISSING_OPTIONAL: &str = "ICAREC_COMPAT_MISSING_OPTIONAL";
pub const COMPAT_MISSING: &str = "ICAREC_COMPAT_MISSING";
pub const COMPAT_IGNORED: &str = "ICAREC_COMPAT_IGNORED";
pub const COMPAT_TYPE: &str = "ICAREC_COMPAT_TYPE";
pub const COMPAT_UNITS: &str = "ICAREC_COMPAT_UNITS";
pub const COMPAT_LIFECYCLE: &str = "ICAREC_COMPAT_LIFECYCLE";

/// The schema document of an Icarus recording: an `.icarec`'s `schema.json` as read, or
/// for the flat layouts (HDF5, CSV: one channel per signal) one built from the channels'
/// field specs. `None` for a recording of another family.
pub fn schema_of(header: &Header) -> Option<Json> {
    match header.format.as_str() {
        "icarec" => header
            .metadata
            .get(ICAREC_HEADER_KEY)
            .and_then(|m| m.get("schema"))
            .cloned(),
        "icarus-hdf5" | "icarus-csv" => Some(derived_schema(header)),
        _ => None,
    }
}

fn derived_schema(header: &Header) -> Json {
    let signals: Vec<Json> = header
        .channels
        .iter()
        .filter_map(|c| {
            let spec = c.fields.first()?;
            let ty = SignalType::of_field(spec)?;
            Some(json!({
                "name": c.name,
                "type": ty.to_string(),
                "size": ty.size(),
                "units": spec.unit,
                "lifecycle": if spec.is_static { "static" } else { "dynamic" },
            }))
        })
        .collect();
    json!({ "signals": signals })
}

/// One signal of a schema document, as far as the rules look at it.
struct Signal<'a> {
    name: &'a str,
    object: &'a Map<String, Json>,
}

impl Signal<'_> {
    fn text(&self, key: &str) -> Option<&str> {
        self.object.get(key).and_then(Json::as_str)
    }

    fn flag(&self, key: &str) -> bool {
        self.object
            .get(key)
            .and_then(Json::as_bool)
            .unwrap_or(false)
    }

    /// `type`, compared in its canonical spelling where it parses.
    fn ty(&self) -> Option<String> {
        let text = self.text("type")?;
        Some(SignalType::parse(text).map_or_else(|| text.to_string(), |t| t.to_string()))
    }

    /// `size`, or the type's own size where the document has none (Vulcan's schema).
    fn size(&self) -> Option<u64> {
        (self.object.get("size").and_then(Json::as_u64)).or_else(|| {
            self.ty()
                .and_then(|t| SignalType::parse(&t))
                .map(|t| t.size() as u64)
        })
    }

    /// `units`, or Vulcan's `unit`; empty and null mean none.
    fn units(&self) -> Option<&str> {
        (self.text("units").or_else(|| self.text("unit"))).filter(|u| !u.is_empty())
    }

    /// Anything but `static` is dynamic (spec §B2).
    fn lifecycle(&self) -> &str {
        match self.text("lifecycle") {
            Some("static") => "static",
            _ => "dynamic",
        }
    }
}

fn signals(schema: &Json) -> Vec<Signal<'_>> {
    (schema
        .get("signals")
        .and_then(Json::as_array)
        .into_iter()
        .flatten())
    .filter_map(|s| {
        let object = s.as_object()?;
        Some(Signal {
            name: object.get("name")?.as_str()?,
            object,
        })
    })
    .collect()
}

/// Whether `name` is a state (spec §A13): marked `state: true`, or, where no signal of the
/// schema carries the key, the value side of a `P` / `P_dot` pair (`A.b.P.x` pairs with
/// `A.b.P_dot.x`).
pub fn state_names(schema: &Json) -> Vec<String> {
    let all = signals(schema);
    if all.iter().any(|s| s.object.contains_key("state")) {
        return (all.iter().filter(|s| s.flag("state")))
            .map(|s| s.name.to_string())
            .collect();
    }
    let names: std::collections::HashSet<&str> = all.iter().map(|s| s.name).collect();
    (all.iter())
        .filter(|s| {
            derivative_names(s.name)
                .iter()
                .any(|d| names.contains(d.as_str()))
        })
        .map(|s| s.name.to_string())
        .collect()
}

/// The names `P`'s derivative may have: `P_dot`, and for a flattened composite
/// component `A.b.P.x` also `A.b.P_dot.x`.
fn derivative_names(name: &str) -> Vec<String> {
    let mut names = vec![format!("{name}_dot")];
    if let Some((path, last)) = name.rsplit_once('.') {
        if is_component_suffix(last) {
            names.push(format!("{path}_dot.{last}"));
        }
    }
    names
}

/// Suffixes of flattened composites (`x`, `qw`, `m01` …).
fn is_component_suffix(segment: &str) -> bool {
    SignalType::parse("Vec3<double>")
        .into_iter()
        .chain(SignalType::parse("Quat<double>"))
        .chain(SignalType::parse("Mat3<double>"))
        .any(|t| t.component_names().contains(&segment))
}

/// Signals marked `required: true`.
pub fn required_names(schema: &Json) -> Vec<String> {
    (signals(schema).iter().filter(|s| s.flag("required")))
        .map(|s| s.name.to_string())
        .collect()
}

fn version(schema: &Json, key: &str) -> Option<Version> {
    let text = schema.get(key).and_then(Json::as_str)?;
    Version::parse(text).ok()
}

/// The findings of `rec` against `current` (spec §A12 table, in its order).
pub fn check(rec: &Json, current: &Json) -> Vec<Finding> {
    let mut out = Vec::new();
    let checksum = |s: &Json| s.get("checksum").and_then(Json::as_str).map(str::to_string);
    if let (Some(a), Some(b)) = (checksum(rec), checksum(current)) {
        if a == b {
            out.push(Finding::new(
                Severity::Info,
                COMPAT_SAME,
                format!("the schemas are the same ({a})"),
            ));
            return out;
        }
    }
    examine_icarus_version(rec, current, &mut out);
    examine_schema_version(rec, current, &mut out);
    let (ours, theirs) = (signals(rec), signals(current));
    let states = state_names(current);
    for want in &theirs {
        match ours.iter().find(|s| s.name == want.name) {
            Some(have) => examine_signal(have, want, &mut out),
            None => examine_missing(want, &states, &mut out),
        }
    }
    for have in &ours {
        if !theirs.iter().any(|s| s.name == have.name) {
            out.push(Finding::new(
                Severity::Info,
                COMPAT_IGNORED,
                format!(
                    "{} is not in the current schema: it will be ignored",
                    have.name
                ),
            ));
        }
    }
    out
}

/// The recording's Icarus version against the current schema's minimum.
fn examine_icarus_version(rec: &Json, current: &Json, out: &mut Vec<Finding>) {
    let min = current
        .get("compatibility")
        .and_then(|c| c.get("min_icarus_version"))
        .and_then(Json::as_str);
    if let (Some(min_text), Some(rec_version)) = (min, version(rec, "icarus_version")) {
        match Version::parse(min_text) {
            Ok(min) if rec_version < min => out.push(Finding::new(
                Severity::Error,
                COMPAT_TOO_OLD,
                format!(
                    "recording too old: made by Icarus {rec_version}, the current schema needs \
                     {min} or later"
                ),
            )),
            _ => {}
        }
    }
}

/// A new major schema version: breaking when the current schema lists breaking changes.
fn examine_schema_version(rec: &Json, current: &Json, out: &mut Vec<Finding>) {
    if let (Some(a), Some(b)) = (
        version(rec, "schema_version"),
        version(current, "schema_version"),
    ) {
        if a.major != b.major {
            let breaking: Vec<&str> = (current.get("compatibility"))
                .and_then(|c| c.get("breaking_changes"))
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect();
            if breaking.is_empty() {
                out.push(Finding::new(
                    Severity::Warning,
                    COMPAT_MAJOR,
                    format!("schema version {a} against {b}: a new major version"),
                ));
            } else {
                out.push(Finding::new(
                    Severity::Error,
                    COMPAT_BREAKING,
                    format!(
                        "schema version {a} against {b}, with breaking changes: {}",
                        breaking.join("; ")
                    ),
                ));
            }
        }
    }
}

/// A current signal the recording lacks: defaulted, missing (required or a state), or
/// an optional one left out.
fn examine_missing(want: &Signal<'_>, states: &[String], out: &mut Vec<Finding>) {
    let name = want.name;
    if let Some(default) = want.object.get("default") {
        out.push(Finding::new(
            Severity::Info,
            COMPAT_DEFAULTED,
            format!("{name} is not in the recording: its default {default} is used"),
        ));
    } else if want.flag("required") || states.iter().any(|s| s == name) {
        let what = if want.flag("required") {
            "required"
        } else {
            "a state"
        };
        out.push(Finding::new(
            Severity::Error,
            COMPAT_MISSING,
            format!("{name} ({what}, no default) is not in the recording"),
        ));
    } else {
        out.push(Finding::new(
            Severity::Info,
            COMPAT_MISSING_OPTIONAL,
            format!("{name} (optional, no default) is not in the recording"),
        ));
    }
}

/// A signal both schemas have: the same type and size, units and lifecycle.
fn examine_signal(have: &Signal<'_>, want: &Signal<'_>, out: &mut Vec<Finding>) {
    let name = want.name;
    let (ty_a, ty_b) = (have.ty(), want.ty());
    let (size_a, size_b) = (have.size(), want.size());
    if ty_a != ty_b || size_a != size_b {
        let show = |t: Option<String>, s: Option<u64>| {
            format!(
                "{} ({} bytes)",
                t.as_deref().unwrap_or("no type"),
                s.map_or("?".into(), |s| s.to_string())
            )
        };
        out.push(Finding::new(
            Severity::Error,
            COMPAT_TYPE,
            format!(
                "{name} is {} in the recording and {} in the current schema",
                show(ty_a, size_a),
                show(ty_b, size_b)
            ),
        ));
    }
    if have.units() != want.units() {
        out.push(Finding::new(
            Severity::Warning,
            COMPAT_UNITS,
            format!(
                "{name} is in {} in the recording and in {} in the current schema",
                have.units().unwrap_or("no units"),
                want.units().unwrap_or("no units")
            ),
        ));
    }
    if have.lifecycle() != want.lifecycle() {
        out.push(Finding::new(
            Severity::Warning,
            COMPAT_LIFECYCLE,
            format!(
                "{name} is {} in the recording and {} in the current schema",
                have.lifecycle(),
                want.lifecycle()
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(f: &[Finding]) -> Vec<(&'static str, Severity)> {
        f.iter().map(|f| (f.code, f.severity)).collect()
    }

    /// The §A2 example schema, with `changes` applied to a copy.
    fn a2() -> Json {
        serde_json::from_str(
            r#"{"schema_version":"1.0.0","icarus_version":"0.6.0",
            "signals":[
             {"name":"Vehicle.Nav.position","type":"Vec3<double>","units":"m","lifecycle":"dynamic","offset":0,"size":24},
             {"name":"Vehicle.Aero.alpha","type":"double","units":"rad","lifecycle":"dynamic","offset":24,"size":8},
             {"name":"Vehicle.Mass.dry","type":"float","units":"kg","lifecycle":"static","offset":0,"size":4}],
            "compatibility":{"min_icarus_version":"0.6.0","warmstart_compatible":true,"breaking_changes":[]},
            "checksum":"sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9"}"#,
        )
        .unwrap()
    }

    fn signal(s: &mut Json, i: usize) -> &mut Map<String, Json> {
        s["signals"][i].as_object_mut().unwrap()
    }

    #[test]
    fn equal_checksums_are_the_same_schema() {
        assert_eq!(codes(&check(&a2(), &a2())), [(COMPAT_SAME, Severity::Info)]);
    }

    #[test]
    fn each_row_of_the_table() {
        let rec = a2();
        let mut cur = a2();
        cur["checksum"] = json!("sha256:other");
        cur["compatibility"]["min_icarus_version"] = json!("0.7.0");
        cur["schema_version"] = json!("2.0.0");
        cur["compatibility"]["breaking_changes"] = json!(["alpha is now in degrees"]);
        signal(&mut cur, 0).insert("units".into(), json!("km"));
        signal(&mut cur, 1).insert("type".into(), json!("float"));
        signal(&mut cur, 1).insert("size".into(), json!(4));
        signal(&mut cur, 2).insert("lifecycle".into(), json!("dynamic"));
        let added = |name: &str, extra: Json| {
            let mut s = json!({"name": name, "type": "double", "lifecycle": "dynamic", "size": 8});
            s.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            s
        };
        let list = cur["signals"].as_array_mut().unwrap();
        list.push(added("New.a", json!({"default": 1.5})));
        list.push(added("New.b", json!({})));
        list.push(added("New.c", json!({"required": true})));
        list.remove(0);
        let found = check(&rec, &cur);
        assert_eq!(
            codes(&found),
            [
                (COMPAT_TOO_OLD, Severity::Error),
                (COMPAT_BREAKING, Severity::Error),
                (COMPAT_TYPE, Severity::Error),
                (COMPAT_LIFECYCLE, Severity::Warning),
                (COMPAT_DEFAULTED, Severity::Info),
                (COMPAT_MISSING_OPTIONAL, Severity::Info),
                (COMPAT_MISSING, Severity::Error),
                (COMPAT_IGNORED, Severity::Info),
            ]
        );
        assert_eq!(
            found[0].message,
            "recording too old: made by Icarus 0.6.0, the current schema needs 0.7.0 or later"
        );
        assert_eq!(
            found[1].message,
            "schema version 1.0.0 against 2.0.0, with breaking changes: alpha is now in degrees"
        );
        assert_eq!(
            found[2].message,
            "Vehicle.Aero.alpha is double (8 bytes) in the recording and float (4 bytes) in the \
             current schema"
        );
        assert_eq!(
            found[7].message,
            "Vehicle.Nav.position is not in the current schema: it will be ignored"
        );
        // Units, and a major change without breaking changes listed.
        let mut cur = a2();
        cur["checksum"] = json!("sha256:other");
        cur["schema_version"] = json!("2.1.0");
        signal(&mut cur, 0).insert("units".into(), json!("km"));
        assert_eq!(
            codes(&check(&rec, &cur)),
            [
                (COMPAT_MAJOR, Severity::Warning),
                (COMPAT_UNITS, Severity::Warning)
            ]
        );
    }

    #[test]
    fn states_are_marked_or_paired_with_their_derivative() {
        let s = json!({"signals": [
            {"name": "Body.position.x"}, {"name": "Body.position_dot.x"},
            {"name": "Body.mass"}, {"name": "Body.q"}, {"name": "Body.q_dot"},
        ]});
        assert_eq!(state_names(&s), ["Body.position.x", "Body.q"]);
        let marked =
            json!({"signals": [{"name": "A", "state": true}, {"name": "B"}, {"name": "B_dot"}]});
        assert_eq!(state_names(&marked), ["A"]);
    }
}

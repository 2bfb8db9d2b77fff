//! A JSON Schema (2020-12) validator for exactly the keywords simrec's contracts in
//! `docs/schema/` use, so that the contract tests need no validator crate: `jsonschema` and
//! its own dependencies were about a sixth of a cold test build (docs/performance.md,
//! "Build"). A keyword outside that subset panics rather than being ignored, so a schema that
//! grows a new keyword cannot pass unchecked.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use regex::Regex;
use serde_json::Value;

/// Keywords that describe and do not constrain.
const ANNOTATIONS: [&str; 5] = ["$schema", "$id", "title", "description", "$defs"];

pub struct Validator {
    /// Schema documents by file name, the name a `$ref` gives before its `#`.
    docs: BTreeMap<String, Value>,
    root: String,
    /// `pattern`s compiled once: the contract tests check thousands of findings.
    patterns: RefCell<HashMap<String, Regex>>,
}

impl Validator {
    /// The contract `name` of docs/schema/, with the other contracts there for its `$ref`s.
    pub fn contract(name: &str) -> Validator {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
        let docs = std::fs::read_dir(&dir).unwrap().map(|e| {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).unwrap())
        });
        Validator::new(name, docs)
    }

    pub fn new(root: &str, docs: impl IntoIterator<Item = (String, Value)>) -> Validator {
        let docs: BTreeMap<_, _> = docs.into_iter().collect();
        assert!(docs.contains_key(root), "no schema {root}");
        Validator {
            docs,
            root: root.to_string(),
            patterns: RefCell::default(),
        }
    }

    /// Every way `value` breaks the schema, each with where (a JSON pointer).
    pub fn errors(&self, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.check(&self.root, &self.docs[&self.root], value, "", &mut out);
        out
    }

    pub fn is_valid(&self, value: &Value) -> bool {
        self.errors(value).is_empty()
    }

    fn check(&self, doc: &str, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
        let keywords = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return out.push(format!("{at}: no value is allowed here")),
            Value::Object(o) => o,
            _ => panic!("{doc}: a schema is an object or a boolean, not {schema}"),
        };
        for (keyword, arg) in keywords {
            match keyword.as_str() {
                k if ANNOTATIONS.contains(&k) => {}
                "$ref" => {
                    let (doc, target) = self.resolve(doc, arg.as_str().unwrap());
                    self.check(doc, target, v, at, out);
                }
                "type" => {
                    let types: Vec<&str> = match arg {
                        Value::Array(a) => a.iter().map(|t| t.as_str().unwrap()).collect(),
                        t => vec![t.as_str().unwrap()],
                    };
                    if !types.iter().any(|t| is_type(v, t)) {
                        out.push(format!("{at}: {v} is not of type {arg}"));
                    }
                }
                "const" => {
                    if !same(v, arg) {
                        out.push(format!("{at}: {v} is not {arg}"));
                    }
                }
                "enum" => {
                    if !arg.as_array().unwrap().iter().any(|e| same(v, e)) {
                        out.push(format!("{at}: {v} is not one of {arg}"));
                    }
                }
                "minimum" => {
                    if let (Some(x), Some(min)) = (v.as_f64(), arg.as_f64()) {
                        if x < min {
                            out.push(format!("{at}: {v} is less than {arg}"));
                        }
                    }
                }
                "pattern" => {
                    if let Some(s) = v.as_str() {
                        if !self.matches(arg.as_str().unwrap(), s) {
                            out.push(format!("{at}: {v} does not match {arg}"));
                        }
                    }
                }
                "minItems" => {
                    if let Some(a) = v.as_array() {
                        if (a.len() as u64) < arg.as_u64().unwrap() {
                            out.push(format!("{at}: fewer than {arg} items"));
                        }
                    }
                }
                "items" => {
                    for (i, x) in v.as_array().into_iter().flatten().enumerate() {
                        self.check(doc, arg, x, &format!("{at}/{i}"), out);
                    }
                }
                "required" => {
                    if let Some(o) = v.as_object() {
                        for key in arg.as_array().unwrap() {
                            if !o.contains_key(key.as_str().unwrap()) {
                                out.push(format!("{at}: {key} is required"));
                            }
                        }
                    }
                }
                "properties" => {
                    for (key, x) in v.as_object().into_iter().flatten() {
                        if let Some(sub) = arg.get(key) {
                            self.check(doc, sub, x, &format!("{at}/{key}"), out);
                        }
                    }
                }
                "additionalProperties" => {
                    assert_eq!(arg, &Value::Bool(false), "{doc}: only `false` is supported");
                    let listed = keywords.get("properties");
                    for key in v.as_object().into_iter().flat_map(|o| o.keys()) {
                        if listed.and_then(|p| p.get(key)).is_none() {
                            out.push(format!("{at}: {key:?} is not allowed"));
                        }
                    }
                }
                "oneOf" => {
                    let branches: Vec<Vec<String>> = (arg.as_array().unwrap())
                        .iter()
                        .map(|s| {
                            let mut e = Vec::new();
                            self.check(doc, s, v, at, &mut e);
                            e
                        })
                        .collect();
                    let valid = branches.iter().filter(|e| e.is_empty()).count();
                    if valid != 1 {
                        out.push(format!(
                            "{at}: matches {valid} of the oneOf schemas, not one: {branches:?}"
                        ));
                    }
                }
                k => panic!("{doc}: keyword {k} is not in the subset this validator knows"),
            }
        }
    }

    /// The document and the schema a `$ref` names: `#/pointer` in this document, or
    /// `name.schema.json#/pointer` in another of the same folder.
    fn resolve<'a>(&'a self, doc: &'a str, reference: &str) -> (&'a str, &'a Value) {
        let (name, pointer) = reference.split_once('#').unwrap_or((reference, ""));
        let (name, schema) = match name {
            "" => self.docs.get_key_value(doc),
            name => self.docs.get_key_value(name),
        }
        .unwrap_or_else(|| panic!("{doc}: $ref {reference} names no loaded schema"));
        let target = schema
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{doc}: $ref {reference} points nowhere"));
        (name, target)
    }

    fn matches(&self, pattern: &str, s: &str) -> bool {
        let mut patterns = self.patterns.borrow_mut();
        let re = patterns
            .entry(pattern.to_string())
            .or_insert_with(|| Regex::new(pattern).unwrap());
        re.is_match(s)
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "number" => v.is_number(),
        // JSON Schema counts 1.0 as an integer.
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|x| x.fract() == 0.0),
        _ => panic!("unknown type {t}"),
    }
}

/// JSON equality as JSON Schema has it: 1 and 1.0 are the same number.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::Validator;

    fn one(schema: Value) -> Validator {
        Validator::new("s.json", [("s.json".to_string(), schema)])
    }

    /// Each keyword accepts what it should and rejects what it should.
    #[test]
    fn each_keyword_accepts_and_rejects() {
        let cases = [
            (
                json!({"type": "integer"}),
                vec![json!(3), json!(-3), json!(3.0)],
                vec![json!(3.5), json!("3"), json!(null)],
            ),
            (
                json!({"type": ["string", "null"]}),
                vec![json!("a"), json!(null)],
                vec![json!(1), json!([]), json!(false)],
            ),
            (
                json!({"type": "number"}),
                vec![json!(1), json!(0.5)],
                vec![json!("1")],
            ),
            (
                json!({"type": "boolean"}),
                vec![json!(true)],
                vec![json!(0)],
            ),
            (json!({"type": "object"}), vec![json!({})], vec![json!([])]),
            (
                json!({"const": 1}),
                vec![json!(1), json!(1.0)],
                vec![json!(2), json!("1")],
            ),
            (
                json!({"enum": ["a", null]}),
                vec![json!("a"), json!(null)],
                vec![json!("b"), json!(0)],
            ),
            (
                json!({"minimum": 0}),
                vec![json!(0), json!(7), json!("-1")],
                vec![json!(-1), json!(-0.5)],
            ),
            (
                json!({"pattern": "^[A-Z]+$"}),
                vec![json!("AB"), json!(5)],
                vec![json!("Ab"), json!("")],
            ),
            // Unanchored, as JSON Schema's patterns are.
            (
                json!({"pattern": "b"}),
                vec![json!("abc")],
                vec![json!("ac")],
            ),
            (
                json!({"minItems": 1}),
                vec![json!([0]), json!("")],
                vec![json!([])],
            ),
            (
                json!({"items": {"type": "string"}}),
                vec![json!([]), json!(["a", "b"])],
                vec![json!(["a", 1])],
            ),
            (
                json!({"required": ["a"]}),
                vec![json!({"a": null}), json!(1)],
                vec![json!({"b": 1})],
            ),
            (
                json!({"properties": {"a": {"type": "string"}}}),
                vec![json!({"a": "x", "b": 1}), json!({})],
                vec![json!({"a": 1})],
            ),
            (
                json!({"properties": {"a": true}, "additionalProperties": false}),
                vec![json!({"a": 1}), json!({})],
                vec![json!({"a": 1, "b": 1})],
            ),
            (
                json!({"oneOf": [{"type": "integer"}, {"minimum": 10}]}),
                vec![json!(3), json!(10.5)],
                // Both branches, and neither.
                vec![json!(12), json!(2.5)],
            ),
            (
                json!({"$defs": {"n": {"type": "null"}}, "$ref": "#/$defs/n"}),
                vec![json!(null)],
                vec![json!(0)],
            ),
        ];
        for (schema, good, bad) in cases {
            let v = one(schema.clone());
            for x in good {
                assert_eq!(v.errors(&x), Vec::<String>::new(), "{schema} {x}");
            }
            for x in bad {
                assert!(!v.is_valid(&x), "{schema} accepted {x}");
            }
        }
    }

    #[test]
    fn a_ref_reaches_another_document_and_errors_say_where() {
        let v = Validator::new(
            "a.json",
            [
                (
                    "a.json".to_string(),
                    json!({"properties": {"x": {"items": {"$ref": "b.json#/$defs/pos"}}}}),
                ),
                (
                    "b.json".to_string(),
                    json!({"$defs": {"pos": {"$ref": "#/$defs/int"}, "int": {"minimum": 1}}}),
                ),
            ],
        );
        assert!(v.is_valid(&json!({"x": [1, 2]})));
        assert_eq!(v.errors(&json!({"x": [1, 0]})), ["/x/1: 0 is less than 1"]);
    }

    #[test]
    #[should_panic(expected = "keyword maximum is not in the subset")]
    fn a_keyword_outside_the_subset_is_refused() {
        one(json!({"maximum": 3})).is_valid(&json!(1));
    }

    /// The real contracts: a damaged object is caught.
    #[test]
    fn the_contracts_reject_broken_objects() {
        let validate = Validator::contract("validate.schema.json");
        let unreadable = json!({
            "schema_version": 1, "path": "x", "error": "e", "finding": null
        });
        let inspect = Validator::contract("inspect.schema.json");
        assert_eq!(inspect.errors(&unreadable), Vec::<String>::new());
        let mut wrong = unreadable.clone();
        wrong["schema_version"] = json!(2);
        assert!(!inspect.is_valid(&wrong));
        let mut extra = unreadable.clone();
        extra["extra"] = json!(0);
        assert!(!inspect.is_valid(&extra));
        let mut missing = unreadable;
        missing.as_object_mut().unwrap().remove("error");
        assert!(!inspect.is_valid(&missing));
        assert!(!validate.is_valid(&json!({"schema_version": 1})));
    }
}

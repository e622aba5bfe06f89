//! The `--json` report's shape, pinned: every key path with the JSON types it takes, over runs
//! that reach each part of the report (a pass, a gate failure, wrong results, a kernel fault,
//! a compile error, a contract mismatch). tests/golden/report-keys.txt holds the shape with the
//! schema version it belongs to. A change to the shape fails here; a key removed or a type
//! changed must also raise `SCHEMA_VERSION` (src/report/mod.rs), since grading scripts and CI
//! jobs read these keys. Added keys only need the file updated:
//! `HALOSCOPE_BLESS=1 cargo test --release --test json_schema`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

const GOLDEN: &str = "tests/golden/report-keys.txt";

/// The runs whose reports together reach every key.
const RUNS: [(&str, &str); 7] = [
    ("stencil-1d", "kernels/stencil-1d/solution.cu"),
    ("stencil-1d", "kernels/stencil-1d/starter.cu"),
    ("stencil-2d", "tests/fixtures/kernels/skips_last_row.cu"),
    ("stencil-1d", "kernels/stencil-1d/no_halo.cu"),
    ("stencil-2d", "tests/fixtures/kernels/oob_write.cu"),
    ("stencil-2d", "tests/fixtures/kernels/does_not_compile.cu"),
    ("stencil-2d", "tests/fixtures/kernels/wrong_signature.cu"),
];

type Shape = BTreeMap<String, BTreeSet<&'static str>>;

fn type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(n) if n.is_f64() => "number",
        serde_json::Value::Number(_) => "integer",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Adds every path under `v` (`a.b[].c`) with the type found there. Maps keyed by data (line
/// numbers, say) are objects whose keys are numbers: they are written `{n}`.
fn walk(path: &str, v: &serde_json::Value, shape: &mut Shape) {
    shape.entry(path.to_string()).or_default().insert(type_name(v));
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                let key = if key.bytes().all(|b| b.is_ascii_digit()) {
                    "{n}"
                } else {
                    key.as_str()
                };
                walk(&format!("{path}.{key}"), value, shape);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                walk(&format!("{path}[]"), item, shape);
            }
        }
        _ => {}
    }
}

fn render(schema: u64, shape: &Shape) -> String {
    let mut text = format!("schema {schema}\n");
    for (path, types) in shape {
        // An integer where a number is also seen is a number that happened to be whole.
        let mut types = types.clone();
        if types.contains("number") {
            types.remove("integer");
        }
        text.push_str(&format!(
            "{path}\t{}\n",
            types.into_iter().collect::<Vec<_>>().join("|")
        ));
    }
    text
}

fn parse(text: &str) -> (u64, BTreeMap<String, String>) {
    let mut lines = text.lines();
    let schema = lines
        .next()
        .and_then(|l| l.strip_prefix("schema "))
        .and_then(|v| v.parse().ok())
        .expect("the golden file starts with `schema N`");
    let paths = lines
        .filter_map(|l| l.split_once('\t'))
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    (schema, paths)
}

#[test]
fn the_json_report_keeps_its_keys_and_types() {
    let mut shape = Shape::new();
    let mut schema = None;
    for (lesson, kernel) in RUNS {
        let out = Command::new(common::binary())
            .args([
                "run",
                "--lesson",
                lesson,
                "--kernel",
                kernel,
                "--json",
                "--backend",
                "emu",
                "--seed",
                "5",
            ])
            .current_dir(common::root())
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{kernel}: no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
        schema = report["schema"].as_u64();
        walk("", &report, &mut shape);
    }
    let schema = schema.expect("reports carry `schema`");
    let now = render(schema, &shape);
    let golden_path = common::root().join(GOLDEN);
    if std::env::var_os("HALOSCOPE_BLESS").is_some() {
        std::fs::write(&golden_path, &now).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap_or_default();
    if golden == now {
        return;
    }
    let (golden_schema, before) = parse(&golden);
    let (_, after) = parse(&now);
    let broken: Vec<String> = before
        .iter()
        .filter(|(path, types)| after.get(*path) != Some(types))
        .map(|(path, types)| format!("{path}: {types} -> {}", after.get(path).map_or("gone", String::as_str)))
        .collect();
    let added: Vec<&String> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert!(
        broken.is_empty() || schema != golden_schema,
        "keys removed or retyped without raising SCHEMA_VERSION ({schema}):\n{}",
        broken.join("\n")
    );
    panic!(
        "the --json shape changed (schema {golden_schema} -> {schema}); if intended, run \
         HALOSCOPE_BLESS=1 cargo test --release --test json_schema\nchanged:\n{}\nadded:\n{}",
        broken.join("\n"),
        added.iter().map(|p| p.as_str()).collect::<Vec<_>>().join("\n")
    );
}

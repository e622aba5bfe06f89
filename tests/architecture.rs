//! The layers of src/ stay a picture a reader can draw top to bottom (docs/architecture.md):
//! no module imports one that imports it back, directly or through others, at the top level
//! (src/X) or among the files of one module (src/X/Y.rs). Reads `crate::`/`super::` paths in
//! code (comments skipped), so a new cycle fails here with its members named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

fn code_lines(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Identifiers following `prefix` in `text` (`crate::backend::emu::x` with prefix `crate::` -> `emu`).
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    text.match_indices(prefix)
        .filter(|(i, _)| {
            // `crate::` not as part of a longer word (`$crate::`, `my_crate::`).
            !text[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$')
        })
        .map(|(i, _)| {
            text[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// `file` of `module` uses its sibling `to`.
fn add_edge(inner: &mut BTreeMap<String, Graph>, module: &str, file: &str, to: String) {
    inner
        .entry(module.to_string())
        .or_default()
        .entry(file.to_string())
        .or_default()
        .insert(to);
}

fn graphs(src: &Path) -> (Graph, BTreeMap<String, Graph>) {
    let mut top = Graph::new();
    let mut inner: BTreeMap<String, Graph> = BTreeMap::new();
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    for path in files {
        let rel = path.strip_prefix(src).unwrap();
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if parts.len() == 1 && (parts[0] == "main" || parts[0] == "lib") {
            continue;
        }
        let module = parts[0].clone();
        let file = if parts.len() >= 2 {
            parts[1].clone()
        } else {
            "mod".into()
        };
        let mut text = code_lines(&std::fs::read_to_string(&path).unwrap());
        if parts.len() == 1 {
            // A top-level file's `super::` is the crate root (the emulator crate's files
            // were written as one module's files and still say `super::`).
            text = text.replace("super::", "crate::");
        }
        top.entry(module.clone()).or_default();
        for name in names_after(&text, "crate::") {
            if name == module {
                let after = names_after(&text, &format!("crate::{module}::"));
                for sibling in after {
                    if sibling != file {
                        add_edge(&mut inner, &module, &file, sibling);
                    }
                }
            } else if src.join(&name).is_dir() || src.join(format!("{name}.rs")).is_file() {
                top.get_mut(&module).unwrap().insert(name);
            }
        }
        if parts.len() >= 2 {
            for sibling in names_after(&text, "super::") {
                if sibling != file
                    && (src.join(&module).join(format!("{sibling}.rs")).is_file()
                        || src.join(&module).join(&sibling).is_dir())
                {
                    add_edge(&mut inner, &module, &file, sibling);
                }
            }
        }
    }
    (top, inner)
}

/// Strongly connected components with more than one member (Tarjan).
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Import cycles in `src` as lines (`src/: a <-> b`).
fn cycles_in(src: &Path, label: &str) -> Vec<String> {
    let (top, inner) = graphs(src);
    let mut found = Vec::new();
    for c in cycles(&top) {
        found.push(format!("{label}: {}", c.join(" <-> ")));
    }
    for (module, g) in &inner {
        for c in cycles(g) {
            found.push(format!("{label}{module}/: {}", c.join(" <-> ")));
        }
    }
    found
}

/// The emulator crate stands alone (it builds without haloscope: Cargo would refuse a
/// dependency back), and its own modules form layers too.
#[test]
fn the_emulator_crate_has_no_import_cycles_and_no_haloscope_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/ptx-emu");
    let found = cycles_in(&root.join("src"), "crates/ptx-emu/src/");
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(!manifest.contains("haloscope"), "{manifest}");
}

#[test]
fn no_import_cycles_in_src() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (top, _) = graphs(&src);
    assert!(
        top.contains_key("pipeline") && top["backend_policy"].contains("pipeline") && top["pipeline"].contains("trace"),
        "the graph was read: {top:?}"
    );
    let found = cycles_in(&src, "src/");
    assert!(
        found.is_empty(),
        "import cycles (docs/architecture.md draws the layers):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    g.entry("d".into()).or_default().insert("a".into());
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".into(), "c".into()]]);
}

/// The functions of an app file that draw (take a `Ui` or an `egui::Context`) yet can change
/// the app: a parameter of type `App`, or a method of `impl App`.
fn drawing_with_the_app(text: &str) -> Vec<String> {
    let code = code_lines(text);
    let mut found = Vec::new();
    let mut in_impl_app = false;
    for (i, line) in code.lines().enumerate() {
        let trimmed = line.trim_start();
        if line.starts_with("impl") {
            in_impl_app = trimmed.starts_with("impl App ") || trimmed.starts_with("impl eframe::App for App");
        }
        let Some(at) = trimmed.find("fn ") else { continue };
        if !(at == 0 || trimmed[..at].trim_end().ends_with("pub") || trimmed[..at].contains("pub(")) {
            continue;
        }
        // The signature runs to its body's brace.
        let signature: String = code
            .lines()
            .skip(i)
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take_while(|&c| c != '{' && c != ';')
            .collect();
        let draws = signature.contains("Ui") || signature.contains("egui::Context");
        let takes_app = signature.contains("App") || (in_impl_app && signature.contains("self"));
        if draws && takes_app {
            found.push(signature.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    found
}

/// Every part of the window draws from the read-only `ViewContext` and asks for changes with
/// actions (src/app/view.rs); only the frame itself (src/app/mod.rs) holds the app mutably.
#[test]
fn the_apps_parts_draw_without_the_app() {
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app");
    let mut found = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(&app).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("mod.rs") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for f in drawing_with_the_app(&text) {
            found.push(format!("{}: {f}", path.display()));
        }
    }
    assert!(files > 20, "read the app's files ({files})");
    assert!(
        found.is_empty(),
        "parts that draw with the app in hand:\n{}",
        found.join("\n")
    );
}

#[test]
fn drawing_with_the_app_is_found() {
    let old = "impl App {\n    pub(super) fn top_bar(&mut self, ui: &mut egui::Ui) {\n    }\n}\n\
               pub fn show(app: &mut App, ui: &mut Ui) {\n}\n\
               impl View for X {\n    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {}\n}\n";
    assert_eq!(drawing_with_the_app(old).len(), 2, "{:?}", drawing_with_the_app(old));
}

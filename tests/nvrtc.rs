//! NVRTC: every kernel in kernels/ compiles against its lesson's contract, and compile and
//! contract errors come back as diagnostics on the right lines.

mod common;

use haloscope::compile::{CompileFailure, Severity, Target, compile_kernel};

fn compile(lesson_id: &str, path: &std::path::Path) -> Result<haloscope::compile::CompiledKernel, CompileFailure> {
    let lesson = common::lesson(lesson_id);
    let source = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    compile_kernel(&source, &name, &lesson, Target::EMULATOR, None)
}

#[test]
fn every_kernel_in_kernels_compiles_with_line_info() {
    // Every CUDA file under kernels/ is a lesson's starter, solution or variant, and each of
    // them compiles: the files on disk and the files the course declares are the same 14.
    let course = common::course();
    let mut declared = std::collections::BTreeMap::new();
    for lesson in &course.lessons {
        let files = [lesson.starter.clone(), lesson.solution.clone()]
            .into_iter()
            .chain(lesson.variants.iter().map(|v| v.path.clone()));
        for file in files {
            declared.insert(file.canonicalize().unwrap(), lesson.id.clone());
        }
    }
    let mut on_disk = std::collections::BTreeSet::new();
    for lesson_dir in std::fs::read_dir(common::root().join("kernels")).unwrap() {
        for file in std::fs::read_dir(lesson_dir.unwrap().path()).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "cu") {
                on_disk.insert(file.canonicalize().unwrap());
            }
        }
    }
    assert_eq!(
        declared.keys().cloned().collect::<std::collections::BTreeSet<_>>(),
        on_disk,
        "CUDA files in kernels/ that no lesson declares, or declared ones missing"
    );
    assert_eq!(on_disk.len(), 23, "{on_disk:?}");
    for (file, lesson_id) in &declared {
        let kernel = compile(lesson_id, file).unwrap_or_else(|e| panic!("{}: {}", file.display(), e.headline()));
        assert!(kernel.ptx.contains(".entry"), "{}", file.display());
        assert!(kernel.ptx.contains(".loc"), "{}: no line info", file.display());
        assert!(
            kernel.diagnostics.iter().all(|d| d.severity != Severity::Error),
            "{}",
            file.display()
        );
    }
}

#[test]
fn a_syntax_error_is_reported_at_its_line() {
    let path = common::root().join("tests/fixtures/kernels/does_not_compile.cu");
    let Err(CompileFailure::Errors { diagnostics, .. }) = compile("stencil-2d", &path) else {
        panic!("expected a compile error")
    };
    let error = diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error");
    // The missing `;` ends line 7; NVRTC reports it where the next statement starts.
    assert!(error.line == 7 || error.line == 8, "{error}");
    assert_eq!(error.file, "does_not_compile.cu");
    assert!(error.column.is_some());
    assert!(error.message.contains(';'), "{error}");
}

#[test]
fn a_wrong_signature_is_a_contract_error() {
    let path = common::root().join("tests/fixtures/kernels/wrong_signature.cu");
    let Err(CompileFailure::Contract { message, .. }) = compile("stencil-2d", &path) else {
        panic!("expected a contract error")
    };
    assert!(
        message.contains("stencil2d(const float* in, float* out, int n)"),
        "{message}"
    );
}

#[test]
fn a_wrong_name_is_a_contract_error() {
    let path = common::root().join("tests/fixtures/kernels/wrong_name.cu");
    let Err(CompileFailure::Contract { message, .. }) = compile("stencil-2d", &path) else {
        panic!("expected a contract error")
    };
    assert!(message.contains("no function named `stencil2d`"), "{message}");
}

#[test]
fn cpp_linkage_is_a_contract_error() {
    let path = common::root().join("tests/fixtures/kernels/no_extern_c.cu");
    let Err(CompileFailure::Contract { message, .. }) = compile("stencil-2d", &path) else {
        panic!("expected a contract error")
    };
    assert!(message.contains("extern \"C\""), "{message}");
}

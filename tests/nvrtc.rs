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
    let mut compiled = 0;
    for lesson_dir in std::fs::read_dir(common::root().join("kernels")).unwrap() {
        let lesson_dir = lesson_dir.unwrap().path();
        let lesson_id = lesson_dir.file_name().unwrap().to_string_lossy().into_owned();
        if common::course().get(&lesson_id).is_none() {
            continue;
        }
        for file in std::fs::read_dir(&lesson_dir).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_none_or(|e| e != "cu") {
                continue;
            }
            let kernel = compile(&lesson_id, &file).unwrap_or_else(|e| panic!("{}: {}", file.display(), e.headline()));
            assert!(kernel.ptx.contains(".entry"), "{}", file.display());
            assert!(kernel.ptx.contains(".loc"), "{}: no line info", file.display());
            assert!(kernel.diagnostics.iter().all(|d| d.severity != Severity::Error));
            compiled += 1;
        }
    }
    assert!(compiled >= 6, "only {compiled} kernels found");
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

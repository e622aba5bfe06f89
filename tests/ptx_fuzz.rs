//! Property tests: the PTX parser and decoder never panic, whatever the text, and real NVRTC
//! output mutated at random is either parsed or rejected with a line number.

use haloscope::emu::load_program;
use haloscope::ptx::parse_module;
use proptest::prelude::*;

fn corpus() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ptx");
    let mut texts: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    texts.sort();
    texts
}

#[test]
fn every_corpus_module_decodes() {
    for text in corpus() {
        let module = parse_module(&text).expect("NVRTC output parses");
        let entry = module
            .functions
            .iter()
            .find(|f| f.is_entry)
            .expect("an entry")
            .name
            .clone();
        load_program(&text, &entry).expect("and decodes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        let _ = parse_module(&text);
        let _ = load_program(&text, "k");
    }

    #[test]
    fn ptx_shaped_text_never_panics(parts in proptest::collection::vec(
        prop_oneof![
            Just(".reg .b32 %r<4>;"), Just(".reg .pred %p<2>;"), Just("ld.global.f32 %f1, [%rd1+4];"),
            Just("@%p1 bra $L1;"), Just("$L1:"), Just("}"), Just("{"), Just(".entry k("), Just(")"),
            Just(".param .u64 k_0"), Just(","), Just("add.s32 %r1, %r2, -3;"), Just("ret;"),
            Just(".shared .align 4 .b8 t[16];"), Just("st.shared.v2.f32 [t+8], {%f1, %f2};"),
            Just("mov.u32 %r1, %tid.x;"), Just(".loc 1 2 3"), Just("bar.sync 0;"), Just("setp.lt.s32 %p1|%p2, %r1, 7;"),
            Just(".version 9.0"), Just(".target sm_90"), Just(".visible"), Just("0f3F800000"), Just("["), Just("]"),
        ], 0..60)) {
        let text = parts.join("\n");
        let _ = parse_module(&text);
        let _ = load_program(&text, "k");
    }

    #[test]
    fn mutated_nvrtc_output_never_panics(index in 0usize..16, cut in 0usize..20_000, len in 0usize..200, insert in "\\PC{0,20}") {
        let texts = corpus();
        let text = &texts[index % texts.len()];
        let mut chars: Vec<char> = text.chars().collect();
        let start = cut.min(chars.len());
        let end = (start + len).min(chars.len());
        chars.splice(start..end, insert.chars());
        let mutated: String = chars.into_iter().collect();
        match parse_module(&mutated) {
            Ok(module) => {
                if let Some(f) = module.functions.iter().find(|f| f.is_entry) {
                    let _ = load_program(&mutated, &f.name.clone());
                }
            }
            Err(e) => prop_assert!(e.line > 0 || mutated.trim().is_empty() || e.message.contains("entry"), "{e}"),
        }
    }
}

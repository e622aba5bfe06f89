//! Source appended after the learner's kernel so that NVRTC itself checks the signature
//! against the lesson contract. It sits under a `#line` directive naming a file of its own,
//! so its diagnostics never land on the learner's lines and are recognised as contract
//! failures.

use crate::lesson::{Lesson, ParamKind};

/// File name NVRTC reports for lines of the probe.
pub const PROBE_FILE: &str = "haloscope-contract";

/// The probe for a lesson: a static_assert that `&entry` has one of the accepted types.
/// An input declared `float*` instead of `const float*` is accepted.
pub fn probe_source(lesson: &Lesson) -> String {
    let mut accepted: Vec<Vec<&str>> = vec![Vec::new()];
    for param in &lesson.params {
        let choices: &[&str] = match param.kind {
            ParamKind::ConstFloatPtr => &["const float*", "float*"],
            ParamKind::FloatPtr => &["float*"],
            ParamKind::Int => &["int"],
        };
        accepted = accepted
            .into_iter()
            .flat_map(|prefix| {
                choices.iter().map(move |c| {
                    let mut next = prefix.clone();
                    next.push(c);
                    next
                })
            })
            .collect();
    }
    let checks: Vec<String> = accepted
        .iter()
        .map(|types| {
            format!(
                "haloscope_same_<decltype(&{}), void (*)({})>::value",
                lesson.entry,
                types.join(", ")
            )
        })
        .collect();
    format!(
        "\n#line 1 \"{PROBE_FILE}\"\n\
         template <class A, class B> struct haloscope_same_ {{ enum {{ value = 0 }}; }};\n\
         template <class A> struct haloscope_same_<A, A> {{ enum {{ value = 1 }}; }};\n\
         static_assert({}, \"the kernel's signature does not match the lesson\");\n",
        checks.join(" || ")
    )
}

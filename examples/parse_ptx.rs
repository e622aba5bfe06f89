fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        match haloscope::ptx::parse_module(&text) {
            Ok(m) => {
                let ops: std::collections::BTreeSet<String> = m
                    .functions
                    .iter()
                    .flat_map(|f| f.body.iter())
                    .filter_map(|s| match s {
                        haloscope::ptx::ast::Statement::Instruction(i) => Some(i.opcode_text()),
                        _ => None,
                    })
                    .collect();
                println!("{path}: ok {} functions; opcodes: {:?}", m.functions.len(), ops);
            }
            Err(e) => println!("{path}: {e}"),
        }
    }
}

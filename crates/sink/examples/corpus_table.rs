//! Prints, for `smart`, `tail` and head+tail (`both`) at the same budget, per corpus log and in
//! total: needles kept, outputs with every needle kept, bytes shown, and how often `smart` loses
//! a needle that `tail` keeps. Run with `cargo xtask corpus` (or `cargo run --release -p
//! agent-exec-sink --example corpus_table [-- MAX_BYTES]`).

#[path = "../tests/common/corpus.rs"]
mod corpus;

use agent_exec_sink::Direction;

fn main() {
    let max_bytes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(51_200);
    let cases = corpus::cases();
    let directions = [Direction::Smart, Direction::Tail, Direction::Both];
    let mut needles_kept = [0usize; 3];
    let mut outputs_kept = [0usize; 3];
    let mut bytes = [0u64; 3];
    let mut needles = 0usize;
    let mut worse_than_tail = 0usize;
    println!("budget {max_bytes} bytes; kept/needles and bytes shown per window\n");
    println!("| log | size | needles | smart | tail | head+tail |");
    println!("|---|---:|---:|---|---|---|");
    for case in &cases {
        let mut row = Vec::new();
        let mut flags = Vec::new();
        for (i, direction) in directions.into_iter().enumerate() {
            let view = corpus::view_of(&case.data, direction, max_bytes, 64 * 1024);
            let kept = case.kept(&view);
            needles_kept[i] += kept;
            outputs_kept[i] += usize::from(kept == case.needles());
            bytes[i] += view.output_bytes;
            flags.push(case.each_kept(&view));
            let mark = if kept == case.needles() { "✓" } else { "✗" };
            row.push(format!("{mark} {kept} · {}", view.output_bytes));
        }
        if flags[0].iter().zip(&flags[1]).any(|(s, t)| *t && !s) {
            worse_than_tail += 1;
        }
        needles += case.needles();
        println!(
            "| {} | {} | {} | {} |",
            case.name,
            case.data.len(),
            case.needles(),
            row.join(" | ")
        );
    }
    let n = cases.len().max(1);
    let total = |i: usize| {
        format!(
            "**{}/{} outputs, {}/{} needles, {} B mean**",
            outputs_kept[i],
            cases.len(),
            needles_kept[i],
            needles,
            bytes[i] / n as u64
        )
    };
    println!(
        "| **total** | | {needles} | {} | {} | {} |",
        total(0),
        total(1),
        total(2)
    );
    println!(
        "\nsmart worse than tail (loses a needle tail keeps): {worse_than_tail} of {n} outputs"
    );
}

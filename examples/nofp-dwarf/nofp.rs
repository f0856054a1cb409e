// nofp.rs - a release-style Rust program without frame pointers (rustc's
// default at -O), for unwinding with DWARF CFI (.eh_frame) instead.
//
// Chain: main -> parse -> tokenize -> classify (all #[inline(never)]).
// Usage: nofp [N]   (N lines parsed, default 1000)

use std::hint::black_box;

#[inline(never)]
fn classify(b: u8) -> u32 {
    if b.is_ascii_digit() { 1 } else if b == b' ' { 2 } else { 3 }
}

#[inline(never)]
fn tokenize(line: &[u8]) -> u32 {
    let mut kinds = 0;
    for &b in line {
        kinds += classify(black_box(b));
    }
    kinds
}

#[inline(never)]
fn parse(n: usize) -> u64 {
    let mut total = 0u64;
    for i in 0..n {
        let line = format!("item {} costs {}", i, i * 3);
        total += tokenize(black_box(line.as_bytes())) as u64;
    }
    total
}

fn main() {
    let n = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    println!("{}", parse(n));
}

//! `fuzz`: a mutational fuzzer for the FEN and move-text parsers. Stable Rust has no
//! libFuzzer, so this is the equivalent: seeds from real positions, byte-level mutations,
//! every input run under `catch_unwind`, and any panic reported with its input.

use super::numbers::whole;
use super::progress_bar;
use clap::Args;
use ninjazero_rules::{Position, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::panic::{self, AssertUnwindSafe};

#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Number of inputs to try. [range: 1 to 1000000000000]
    #[arg(long, value_parser = whole::<u64>(1, 1_000_000_000_000), default_value_t = 1_000_000)]
    inputs: u64,
    /// Random seed (the same seed replays the same inputs).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Characters that FEN and move text are made of, so mutations stay near valid input.
const ALPHABET: &[u8] = b"KQRBNPMGWIJLCSYkqrbnpmgwijlcsy*/0123456789 -wbabcdefghij[]@,xX\t";

pub fn run(args: FuzzArgs) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(args.seed);
    let corpus = seed_corpus(&mut rng);
    let bar = progress_bar(
        args.inputs,
        "{bar:40} {pos}/{len} inputs, {per_sec}, eta {eta} {msg}",
    );
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let (mut parsed, mut panics) = (0u64, Vec::new());
    for i in 0..args.inputs {
        let (own_variant, base_fen, moves) = &corpus[rng.random_range(0..corpus.len())];
        // Mostly the FEN's own variant; sometimes another one, to test foreign boards.
        let variant = if rng.random_bool(0.8) {
            *own_variant
        } else {
            Variant::ALL[rng.random_range(0..Variant::ALL.len())]
        };
        let fen = mutate(base_fen, &mut rng);
        let move_text = mutate(&moves[rng.random_range(0..moves.len())], &mut rng);
        let result = panic::catch_unwind(AssertUnwindSafe(|| exercise(variant, &fen, &move_text)));
        match result {
            Ok(true) => parsed += 1,
            Ok(false) => {}
            Err(_) => panics.push(format!(
                "variant {variant}, FEN {fen:?}, move {move_text:?}"
            )),
        }
        if i % 4096 == 0 {
            bar.set_position(i);
            bar.set_message(format!("{parsed} parsed, {} panics", panics.len()));
        }
    }
    bar.finish_and_clear();
    panic::set_hook(default_hook);
    println!(
        "fuzz: {} inputs, {parsed} parsed as valid positions, {} panics",
        args.inputs,
        panics.len()
    );
    for p in panics.iter().take(20) {
        println!("panic: {p}");
    }
    if !panics.is_empty() {
        anyhow::bail!("{} inputs made the parsers panic", panics.len());
    }
    Ok(())
}

/// Parses the FEN and, when valid, checks the printed FEN re-parses, tries the move text
/// and plays any legal move. Returns whether the FEN was valid.
fn exercise(variant: Variant, fen: &str, move_text: &str) -> bool {
    let Ok(pos) = Position::from_fen(variant, fen) else {
        return false;
    };
    let reparsed = Position::from_fen(variant, &pos.to_fen()).expect("printed FEN re-parses");
    assert_eq!(reparsed, pos, "FEN round trip");
    if let Ok(m) = pos.parse_move(move_text) {
        let next = pos.play(m).expect("parsed moves are legal");
        assert_eq!(next.hash(), next.recompute_hash(), "hash after {m}");
    }
    pos.outcome();
    true
}

/// Start positions and positions from short random games of every variant, each with the
/// legal move texts there (plus a few malformed ones).
fn seed_corpus(rng: &mut StdRng) -> Vec<(Variant, String, Vec<String>)> {
    let mut corpus = Vec::new();
    for variant in Variant::ALL {
        for _ in 0..20 {
            let mut pos = Position::start(variant);
            let plies = rng.random_range(0..60);
            for _ in 0..plies {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
            }
            let mut texts: Vec<String> = pos.legal_moves().iter().map(|m| m.to_string()).collect();
            texts.extend(["e2e4", "Y@e4", "f1i1g1", "a9a10q", ""].map(String::from));
            corpus.push((variant, pos.to_fen(), texts));
        }
    }
    corpus
}

/// Applies 0-4 random byte-level edits (replace, insert, delete, duplicate a chunk).
fn mutate(text: &str, rng: &mut StdRng) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..rng.random_range(0..5) {
        let at = rng.random_range(0..=bytes.len());
        let letter = ALPHABET[rng.random_range(0..ALPHABET.len())];
        match rng.random_range(0..4) {
            0 if at < bytes.len() => bytes[at] = letter,
            1 => bytes.insert(at, letter),
            2 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {
                let end = (at + rng.random_range(1..6)).min(bytes.len());
                let chunk = bytes[at..end].to_vec();
                bytes.splice(at..at, chunk);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

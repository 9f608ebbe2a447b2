//! Perft: the chessprogramming wiki suite on orthodox chess (external reference numbers),
//! plus a self-generated regression table for every variant's start position.

use ninjazero_rules::{perft, perft_divide, Position, Variant};

fn chess(fen: &str) -> Position {
    Position::from_fen(Variant::Chess, fen).unwrap_or_else(|e| panic!("bad FEN {fen}: {e}"))
}

fn check(pos: &Position, depth: u32, expected: u64) {
    let got = perft(pos, depth);
    assert_eq!(
        got,
        expected,
        "perft({depth}) of {} ({}): got {got}, expected {expected}",
        pos.to_fen(),
        pos.variant()
    );
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const POSITION_3: &str = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
const POSITION_4: &str = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";
const POSITION_4_MIRROR: &str = "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1";
const POSITION_5: &str = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8";
const POSITION_6: &str = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10";

fn suite(fen: &str, expected: &[u64]) {
    let pos = chess(fen);
    for (i, &n) in expected.iter().enumerate() {
        check(&pos, i as u32 + 1, n);
    }
}

#[test]
fn start_position_depth_1_to_4() {
    suite(START, &[20, 400, 8_902, 197_281]);
}

#[test]
fn start_position_depth_5() {
    check(&chess(START), 5, 4_865_609);
}

#[test]
#[ignore = "slow: 119M nodes"]
fn start_position_depth_6() {
    check(&chess(START), 6, 119_060_324);
}

#[test]
fn kiwipete_depth_1_to_3() {
    suite(KIWIPETE, &[48, 2_039, 97_862]);
}

#[test]
fn kiwipete_depth_4() {
    check(&chess(KIWIPETE), 4, 4_085_603);
}

#[test]
#[ignore = "slow: 194M nodes"]
fn kiwipete_depth_5() {
    check(&chess(KIWIPETE), 5, 193_690_690);
}

#[test]
fn position_3_depth_1_to_5() {
    suite(POSITION_3, &[14, 191, 2_812, 43_238, 674_624]);
}

#[test]
fn position_4_depth_1_to_4() {
    suite(POSITION_4, &[6, 264, 9_467, 422_333]);
}

#[test]
fn position_4_depth_5() {
    check(&chess(POSITION_4), 5, 15_833_292);
}

#[test]
fn position_4_mirrored_depth_1_to_4() {
    suite(POSITION_4_MIRROR, &[6, 264, 9_467, 422_333]);
}

#[test]
fn position_4_mirrored_depth_5() {
    check(&chess(POSITION_4_MIRROR), 5, 15_833_292);
}

#[test]
fn position_5_depth_1_to_4() {
    suite(POSITION_5, &[44, 1_486, 62_379, 2_103_487]);
}

#[test]
fn position_6_depth_1_to_4() {
    suite(POSITION_6, &[46, 2_079, 89_890, 3_894_594]);
}

/// Start position perft of every variant, depths 1-3.
///
/// These numbers are SELF-GENERATED regression values: they were computed by this engine
/// (no external reference exists for these variants). They guard against unintended changes
/// to move generation; a deliberate rule change must update them (and say why).
const VARIANT_START_PERFT: &[(Variant, [u64; 3])] = &[
    (Variant::Chess, [20, 400, 8_902]),
    (Variant::Palace, [20, 400, 9_062]),
    (Variant::PalaceScepter, [20, 400, 9_062]),
    (Variant::Ninjutsu, [18, 324, 6_113]),
    (Variant::Asylum, [42, 1_764, 83_948]),
    (Variant::AsylumFriendlyFire, [56, 3_138, 194_566]),
    (Variant::InsaneNinja, [42, 1_764, 79_970]),
    (Variant::InsaneNinja2, [36, 1_296, 50_042]),
    (Variant::InsaneNinjaDrops, [42, 1_764, 82_490]),
];

#[test]
fn variant_start_positions_regression() {
    assert_eq!(VARIANT_START_PERFT.len(), Variant::ALL.len());
    for &v in &Variant::ALL {
        let (_, expected) = VARIANT_START_PERFT
            .iter()
            .find(|(w, _)| *w == v)
            .unwrap_or_else(|| panic!("no regression row for {v}"));
        let pos = Position::start(v);
        for (i, &n) in expected.iter().enumerate() {
            check(&pos, i as u32 + 1, n);
        }
    }
}

#[test]
fn perft_depth_0_is_one() {
    for &v in &Variant::ALL {
        assert_eq!(perft(&Position::start(v), 0), 1);
    }
}

/// `perft_divide` lists every legal root move once and its counts sum to `perft`.
#[test]
fn perft_divide_sums_to_perft() {
    let mut cases: Vec<Position> = Variant::ALL.iter().map(|&v| Position::start(v)).collect();
    cases.extend([KIWIPETE, POSITION_3, POSITION_4, POSITION_5].map(chess));
    for pos in &cases {
        for depth in 1..=3 {
            let divide = perft_divide(pos, depth);
            let legal = pos.legal_moves();
            assert_eq!(divide.len(), legal.len(), "{pos:?}");
            for (m, _) in &divide {
                assert!(legal.contains(m), "{pos:?}: divide lists {m}");
            }
            let sum: u64 = divide.iter().map(|(_, n)| n).sum();
            assert_eq!(sum, perft(pos, depth), "{pos:?} depth {depth}");
            if depth == 1 {
                assert!(divide.iter().all(|&(_, n)| n == 1), "{pos:?}");
            }
        }
    }
}

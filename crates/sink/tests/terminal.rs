//! PTY rendering (`SinkConfig::terminal`): what a terminal shows, through the public sink.

use agent_exec_sink::{Direction, OutputSink, Sink, SinkConfig, Stream, TerminalSize};
use proptest::prelude::*;

fn sink(size: TerminalSize, max_bytes: usize) -> OutputSink {
    OutputSink::new(
        SinkConfig {
            terminal: Some(size),
            max_bytes,
            ..SinkConfig::default()
        },
        None,
    )
}

fn render_with(size: TerminalSize, chunks: &[&[u8]]) -> String {
    let mut s = sink(size, 1 << 20);
    for c in chunks {
        s.push(Stream::Stdout, c).unwrap();
    }
    s.finish_capture().view.text()
}

fn render(bytes: &[u8]) -> String {
    render_with(TerminalSize::DEFAULT, &[bytes])
}

#[test]
fn sizes_parse_and_say_what_is_expected() {
    assert_eq!(
        "120x40".parse::<TerminalSize>(),
        Ok(TerminalSize {
            cols: 120,
            rows: 40
        })
    );
    assert_eq!(" 80X24 ".parse::<TerminalSize>(), Ok(TerminalSize::DEFAULT));
    for bad in [
        "", "80", "80x", "x24", "80x24x3", "-80x24", "+80x24", "5x24", "80x1", "80x99999", "a x b",
    ] {
        let e = bad.parse::<TerminalSize>().expect_err(bad);
        assert_eq!(
            e.to_string(),
            format!(
                "{bad:?} is not a terminal size: write COLSxROWS, e.g. 120x40 (columns 10-1000, rows 2-500)"
            )
        );
    }
    assert_eq!(TerminalSize::DEFAULT.to_string(), "80x24");
    assert_eq!(TerminalSize::default(), TerminalSize::DEFAULT);
}

#[test]
fn plain_lines_pass_through() {
    assert_eq!(render(b"a\r\nb\r\n"), "a\nb");
    assert_eq!(render(b""), "");
    assert_eq!(render(b"\r\n\r\n"), "");
}

#[test]
fn a_progress_bar_shows_its_last_state() {
    assert_eq!(
        render(b"10%\r20%\r100% done\r\nnext\r\n"),
        "100% done\nnext"
    );
    // Overwritten in place: the rest of a longer line stays, as on a screen.
    assert_eq!(render(b"abcdef\rXY\r\n"), "XYcdef");
    // A bar redrawn with erase-line.
    assert_eq!(
        render(b"[##    ] 30%\r\x1b[K[######] 100%\r\n"),
        "[######] 100%"
    );
}

#[test]
fn colours_are_gone() {
    assert_eq!(
        render(b"\x1b[1;31mred\x1b[0m \x1b[38;5;42mplain\x1b[m\r\n"),
        "red plain"
    );
}

#[test]
fn a_cursor_addressed_screen_is_the_screen() {
    let out = render(b"junk\r\n\x1b[2J\x1b[H\x1b[3;5Hthird\x1b[1;1Hfirst\x1b[5;1H");
    assert_eq!(out, "first\n\n    third");
}

#[test]
fn lines_that_scroll_off_come_first_and_nothing_is_lost() {
    let mut input = Vec::new();
    for i in 1..=1000 {
        input.extend_from_slice(format!("line {i}\r\n").as_bytes());
    }
    let out = render_with(TerminalSize { cols: 20, rows: 5 }, &[&input]);
    let expected: Vec<String> = (1..=1000).map(|i| format!("line {i}")).collect();
    assert_eq!(out, expected.join("\n"));
}

#[test]
fn wrapped_lines_are_one_line_and_trailing_spaces_go() {
    let long = "x".repeat(25);
    let out = render_with(
        TerminalSize { cols: 10, rows: 3 },
        &[format!("{long}\r\nend   \r\n\r\n\r\n").as_bytes()],
    );
    assert_eq!(out, format!("{long}\nend"));
}

#[test]
fn a_full_screen_program_leaves_its_last_screen() {
    let out = render_with(
        TerminalSize { cols: 20, rows: 5 },
        &[b"before\r\n\x1b[?1049h\x1b[H\x1b[2J\x1b[2;3HDialog: OK?\x1b[?1049l\x1b[5;1Hafter\r\n"],
    );
    // `before` moved up into the history when the program took the screen; its screen stays;
    // `after` scrolled it up by one row.
    assert_eq!(out, "before\n\n  Dialog: OK?\n\n\nafter");
}

#[test]
fn the_other_modes_of_a_combined_sequence_still_apply() {
    // `?1049;6h` takes the screen and turns origin mode on: home is the scroll region's top.
    let out = render_with(
        TerminalSize { cols: 10, rows: 4 },
        &[b"\x1b[2;3r\x1b[?1049;6hx"],
    );
    assert_eq!(out, "\nx");
}

/// Renders `input` whole and cut in two at every byte, asserts they agree, and returns the text.
fn render_every_cut(input: &[u8]) -> String {
    let whole = render(input);
    for cut in 0..input.len() {
        let (a, b) = input.split_at(cut);
        assert_eq!(
            render_with(TerminalSize::DEFAULT, &[a, b]),
            whole,
            "cut at {cut}"
        );
    }
    whole
}

#[test]
fn chunking_does_not_matter() {
    render_every_cut(
        b"a\x1b[?1049hfull\x1b[?1049l\r\nb\x1b[31mc\x1b[0m\r\n\x1b[?25l\x1b[?1049;25h\xe2\x82\xac\x1b",
    );
}

/// A character cut between two reads keeps what follows it: the `\n` after a cut `é` or `😀`
/// still ends its line (the emulator's parser, handed the cut, would swallow it).
#[test]
fn a_character_cut_between_reads_keeps_what_follows() {
    let input = "\u{301}\n\u{ff}h\r\ne\u{301}\nx\r\n😀\ny\r\n漢字\r\nz".as_bytes();
    // A combining mark with nothing to combine with takes no cell.
    assert_eq!(
        render_every_cut(input),
        "\nÿh\ne\u{301}\n x\n😀\n  y\n漢字\nz"
    );
    // One long push is run through the emulator in slices; a slice does not cut either.
    for pad in 4090..4100 {
        let mut long = "a".repeat(pad).into_bytes();
        long.extend_from_slice("é\r\nb".as_bytes());
        let text = render_with(
            TerminalSize::new(TerminalSize::MAX_COLS, 24).unwrap(),
            &[&long],
        );
        assert!(
            text.ends_with("é\nb"),
            "pad {pad}: {:?}",
            &text[text.len() - 20..]
        );
    }
}

#[test]
fn the_window_budget_still_holds_and_totals_are_raw() {
    let mut s = OutputSink::new(
        SinkConfig {
            terminal: Some(TerminalSize::DEFAULT),
            max_bytes: 100,
            direction: Direction::Tail,
            ..SinkConfig::default()
        },
        None,
    );
    let mut raw = 0;
    for i in 0..10_000 {
        let line = format!("\x1b[32m{i:05}\x1b[0m progress\r{i:05} done\x1b[K\r\n");
        raw += line.len() as u64;
        s.push(Stream::Stdout, line.as_bytes()).unwrap();
    }
    let c = s.finish_capture();
    assert_eq!(c.totals.merged.bytes, raw);
    assert!(c.view.truncated);
    let text = c.view.text();
    assert!(text.len() <= 100, "{text}");
    assert!(text.ends_with("09999 done"), "{text}");
}

/// Bytes a terminal meets: text, line ends, cursor motion, scrolls, clears, screen switches,
/// colours, repeats, and junk.
fn terminal_bytes() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        6 => prop::sample::select(b"abc xyz".to_vec()).prop_map(|b| vec![b]),
        3 => Just(b"\r\n".to_vec()),
        2 => Just(b"\n".to_vec()),
        2 => Just(b"\r".to_vec()),
        1 => Just(b"\t".to_vec()),
        1 => Just(b"\x08".to_vec()),
        1 => Just(b"\x1b[31m".to_vec()),
        1 => Just(b"\x1b[2J".to_vec()),
        1 => Just(b"\x1b[K".to_vec()),
        1 => Just(b"\x1b[3J".to_vec()),
        1 => Just(b"\x1b[H".to_vec()),
        1 => (0u16..70, 0u16..70).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        1 => (0u32..100_000).prop_map(|n| format!("\x1b[{n}S").into_bytes()),
        1 => (0u32..100_000).prop_map(|n| format!("\x1b[{n}T").into_bytes()),
        1 => (0u32..300).prop_map(|n| format!("\x1b[{n}b").into_bytes()),
        1 => (0u16..30, 0u16..30).prop_map(|(t, b)| format!("\x1b[{t};{b}r").into_bytes()),
        1 => Just(b"\x1b[?1049h".to_vec()),
        1 => Just(b"\x1b[?1049l".to_vec()),
        1 => Just(b"\x1b[?47;1h".to_vec()),
        1 => Just(b"\x1b[?7l".to_vec()),
        1 => Just(b"\x1b[?6h".to_vec()),
        1 => Just(b"\x1b[?".to_vec()),
        1 => Just(b"\x1b".to_vec()),
        1 => Just(b"\x1b]0;title\x07".to_vec()),
        1 => Just(b"\x1bP1$r\x1b\\".to_vec()),
        1 => Just(b"\x1b7\x1b8\x1bM\x1bD\x1bE\x1bc".to_vec()),
        1 => Just(b"\x1b[8;5;200t".to_vec()),
        1 => Just("漢字😀e\u{301}".as_bytes().to_vec()),
        1 => Just(b"\xff\xfe\xe2\x82".to_vec()),
        1 => Just(b"\x00\x07\x9b\x1b[99999999999999;1H".to_vec()),
    ];
    prop::collection::vec(atom, 0..120).prop_map(|v| v.concat())
}

/// Splits `bytes` at the given cut points.
fn chunks<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut last = 0;
    for c in cuts {
        out.push(&bytes[last..c]);
        last = c;
    }
    out.push(&bytes[last..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Any bytes, however chunked: no panic, the same text, trimmed rows, no trailing blank
    /// line, and a text no larger than the screen can make of the input.
    #[test]
    fn rendering_is_total_bounded_and_chunking_free(
        bytes in terminal_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        cols in 10u16..40,
        rows in 2u16..8,
    ) {
        let size = TerminalSize::new(cols, rows).unwrap();
        let whole = render_with(size, &[&bytes]);
        let chunked = render_with(size, &chunks(&bytes, &cuts));
        prop_assert_eq!(&whole, &chunked);
        prop_assert!(!whole.ends_with('\n'));
        for line in whole.split('\n') {
            prop_assert!(!line.ends_with(' '), "{:?}", line);
            prop_assert!(!line.chars().any(|c| c.is_control() && c != '\t'), "{:?}", line);
        }
        // Every byte scrolls at most a screen off the top; a row is at most `cols` cells.
        let rows_out = (bytes.len() + 1) * usize::from(rows);
        prop_assert!(whole.len() <= rows_out * (usize::from(cols) * 22 + 1));
    }

    /// Under a small window the view stays within its budget, whatever the rendering.
    #[test]
    fn the_view_stays_within_the_budget(bytes in terminal_bytes(), max in 1usize..200) {
        let mut s = sink(TerminalSize::new(20, 4).unwrap(), max);
        s.push(Stream::Stdout, &bytes).unwrap();
        let c = s.finish_capture();
        prop_assert_eq!(c.totals.merged.bytes, bytes.len() as u64);
        prop_assert!(c.view.text().len() <= max);
    }
}

/// A repeat sequence (`CSI n b`) is capped at a row's width: a few bytes cannot make the
/// emulator draw thousands of characters.
#[test]
fn a_huge_repeat_is_capped_at_a_row() {
    let text = render(b"a\x1b[65535b\r\nnext\r\n");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"next"), "{text}");
    let drawn: usize = lines[..lines.len() - 1].iter().map(|l| l.len()).sum();
    assert_eq!(drawn, 81, "{text}");
    // A small one is drawn as asked.
    assert_eq!(render(b"a\x1b[3b\r\n"), "aaaa");
    // Whole, however the stream is cut.
    let whole = render(b"xy\x1b[900b\r\nz");
    for cut in 1..9 {
        let input = b"xy\x1b[900b\r\nz";
        assert_eq!(
            render_with(TerminalSize::DEFAULT, &[&input[..cut], &input[cut..]]),
            whole,
            "cut at {cut}"
        );
    }
}

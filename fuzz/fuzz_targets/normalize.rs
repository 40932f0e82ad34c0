//! `normalize` never panics, and leaves what it does not change byte for byte.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &str| {
    let n = agent_exec_normalize::normalize(data);
    if n.limit.is_none() {
        assert_eq!(n.command, data);
    }
    let _ = agent_exec_normalize::is_diff_command(data);
    let _ = agent_exec_normalize::apply_head_tail(data, Some(3), Some(2));
});

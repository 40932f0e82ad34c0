//! The seccomp filter of the sandbox, as a classic BPF program we write ourselves.
//!
//! Why not seccompiler (`dependencies.md`): it compiles a rule set to a linear chain — 269
//! instructions for ours — and the kernel here runs that chain on every system call of the
//! confined process: measured with a C harness, `fork` + `exec true` cost 0.82 ms bare, 1.62 ms
//! under a 269-instruction chain, 0.84 ms under a short one. This program finds a system call
//! in a binary search over the few it treats specially (~7 comparisons), everything else is
//! allowed after that; 60-odd instructions in all.
//!
//! Layout of `struct seccomp_data`: `nr` (u32) at 0, `arch` (u32) at 4, the instruction
//! pointer at 8, `args[6]` (u64 each) from 16; only the low 32 bits of an argument are read
//! (offset 16 + 8 i on these little-endian machines), which is all the flags and domains
//! checked here use.

// The kernel's numbers this filter is written in — system calls, flags, socket families,
// BPF opcodes, errnos — as libc names them, in one list: the rules below are data over
// these names.
use libc::{
    AF_INET, AF_INET6, AF_NETLINK, AF_UNIX, BPF_ABS, BPF_ALU, BPF_AND, BPF_JEQ, BPF_JGE, BPF_JMP,
    BPF_K, BPF_LD, BPF_RET, BPF_W, CLONE_NEWCGROUP, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS,
    CLONE_NEWPID, CLONE_NEWUSER, CLONE_NEWUTS, EAFNOSUPPORT, ENOSYS, EOPNOTSUPP, EPERM, O_CREAT,
    S_ISGID, S_ISUID, SECCOMP_SET_MODE_FILTER, SYS_acct, SYS_add_key, SYS_adjtimex, SYS_bpf,
    SYS_chroot, SYS_clock_adjtime, SYS_clock_settime, SYS_clone, SYS_clone3, SYS_delete_module,
    SYS_fchmod, SYS_fchmodat, SYS_finit_module, SYS_fsconfig, SYS_fsetxattr, SYS_fsmount,
    SYS_fsopen, SYS_fspick, SYS_init_module, SYS_io_uring_enter, SYS_io_uring_register,
    SYS_io_uring_setup, SYS_ioctl, SYS_kexec_file_load, SYS_kexec_load, SYS_keyctl, SYS_lsetxattr,
    SYS_mknodat, SYS_mount, SYS_mount_setattr, SYS_move_mount, SYS_open_by_handle_at,
    SYS_open_tree, SYS_openat, SYS_openat2, SYS_perf_event_open, SYS_pivot_root, SYS_quotactl,
    SYS_reboot, SYS_request_key, SYS_seccomp, SYS_setdomainname, SYS_sethostname, SYS_setns,
    SYS_settimeofday, SYS_setxattr, SYS_socket, SYS_socketpair, SYS_swapoff, SYS_swapon,
    SYS_syslog, SYS_umount2, SYS_unshare, SYS_userfaultfd, SYS_vhangup, TIOCLINUX, TIOCSTI, c_long,
    sock_filter, sock_fprog,
};
#[cfg(target_arch = "x86_64")]
use libc::{SYS_chmod, SYS_creat, SYS_ioperm, SYS_iopl, SYS_mknod, SYS_open};

/// One instruction: `struct sock_filter`.
pub(crate) type Instruction = sock_filter;

/// Installs `filter` on this process (it needs no_new_privs first); on failure, why.
pub(crate) fn install(filter: &[Instruction]) -> Result<(), rustix::io::Errno> {
    let prog = sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: a system call rustix has no wrapper for; `prog` points into `filter`, which
    // outlives it (the kernel copies the program).
    if unsafe { libc::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &raw const prog) } < 0 {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        return Err(rustix::io::Errno::from_raw_os_error(errno));
    }
    Ok(())
}

/// What a system call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Fails with this errno.
    Refuse(i32),
    /// Refused with EPERM when argument 0 (flags) has any of these bits (`clone(2)`).
    FlagsNone(u32),
    /// Refused with EPERM when argument `arg` (its low 32 bits) is one of `values`.
    RefuseWhen { arg: u32, values: &'static [u32] },
    /// Refused with EPERM when the mode in argument `mode` has any of `bits` — for a call that
    /// creates a file only when its flags (argument `flags.0`) have one of `flags.1`.
    ModeBits {
        mode: u32,
        flags: Option<(u32, u32)>,
        bits: u32,
    },
    /// `socket(2)`, `socketpair(2)`: only these address families (argument 0), and netlink
    /// only with these protocols (argument 2); the rest fail with EAFNOSUPPORT, as a family
    /// the kernel lacks does.
    Families {
        families: &'static [u32],
        netlink: &'static [u32],
    },
}

/// System calls no confined process needs that could widen or leave the sandbox, or reach
/// the whole machine: mounts (old and new API), namespaces, `chroot`, modules, kexec, reboot,
/// swap, `bpf`, `io_uring` (it makes sockets and opens files past this filter),
/// `open_by_handle_at`, keyrings, accounting, quotas, clocks, host names, port I/O,
/// `userfaultfd`, `perf_event_open`, the kernel log.
const REFUSED: &[c_long] = &[
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_unshare,
    SYS_setns,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
    SYS_move_mount,
    SYS_open_tree,
    SYS_mount_setattr,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_kexec_load,
    SYS_kexec_file_load,
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_bpf,
    SYS_io_uring_setup,
    SYS_io_uring_enter,
    SYS_io_uring_register,
    SYS_open_by_handle_at,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_acct,
    SYS_quotactl,
    SYS_settimeofday,
    SYS_clock_settime,
    SYS_clock_adjtime,
    SYS_adjtimex,
    SYS_sethostname,
    SYS_setdomainname,
    #[cfg(target_arch = "x86_64")]
    SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    SYS_ioperm,
    SYS_userfaultfd,
    SYS_perf_event_open,
    SYS_syslog,
    SYS_vhangup,
];

/// The namespace flags `clone(2)` may not carry.
const NEW_NAMESPACES: u32 = (CLONE_NEWUSER
    | CLONE_NEWNS
    | CLONE_NEWNET
    | CLONE_NEWPID
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWCGROUP) as u32;

/// `ioctl(2)` requests that reach past the sandbox through a terminal: `TIOCSTI` pushes
/// input into the terminal agent-exec was started from (commands typed into the user's shell,
/// run unconfined later), `TIOCLINUX` does the same on a Linux console.
const TERMINAL_INJECTION: &[u32] = &[TIOCSTI as u32, TIOCLINUX as u32];

/// `fchmodat2(2)` (Linux 6.6) and `setxattrat(2)` (Linux 6.13): one number on every
/// architecture (the common table), not in every libc yet.
const SYS_FCHMODAT2: c_long = 452;
const SYS_SETXATTRAT: c_long = 463;

/// The mode bits a file made or changed inside the sandbox may not carry: a setuid or setgid
/// file left in a writable root runs with the operator's ids for anyone who starts it later,
/// outside the sandbox (with a root operator, root for every local user).
const PRIVILEGE_BITS: u32 = S_ISUID | S_ISGID;

/// The open flags that make a file (`O_CREAT`, and `O_TMPFILE`'s own bit): only then is the
/// mode argument read.
const CREATING: u32 = (O_CREAT as u32) | 0o2000_0000;

/// Netlink protocols tools use read-only: routes and addresses (`ip addr`, `getaddrinfo`'s
/// `AI_ADDRCONFIG`) and socket diagnostics (`ss`). Others (audit, uevents, netfilter, …)
/// reach the host's kernel state past the network namespace.
const NETLINK: &[u32] = &[0 /* NETLINK_ROUTE */, 4 /* NETLINK_SOCK_DIAG */];

/// The socket families of each network mode. With the network off, the sandbox's own
/// network namespace holds only its loopback, so inet sockets reach nothing else (and the
/// proxy, with allowed hosts); Unix sockets stay out — a socket path can reach a host service,
/// a container engine, a session bus, and Landlock here cannot tell a path inside the sandbox
/// from one outside (`socketpair(2)` still works). Everything else — vsock (the host's
/// hypervisor sockets, outside any network namespace), packet, Bluetooth, CAN, AF_ALG, … — is
/// refused in both modes.
const FAMILIES_NETWORK_OFF: &[u32] = &[AF_INET as u32, AF_INET6 as u32];
const FAMILIES_NETWORK_ON: &[u32] = &[AF_UNIX as u32, AF_INET as u32, AF_INET6 as u32];
const FAMILIES_PAIR: &[u32] = &[AF_UNIX as u32];

/// The sandbox's filter (see the module doc and the constants above).
pub(crate) fn filter(network_off: bool) -> Vec<Instruction> {
    let mut rules: Vec<(i64, Rule)> = REFUSED
        .iter()
        .map(|&nr| (nr, Rule::Refuse(EPERM)))
        .collect();
    rules.push((SYS_clone, Rule::FlagsNone(NEW_NAMESPACES)));
    // clone3 passes its flags in memory, out of a filter's sight: ENOSYS makes libc fall back
    // to clone, whose flags are checked. openat2 likewise carries its mode in memory; callers
    // fall back to openat, whose mode is checked.
    rules.push((SYS_clone3, Rule::Refuse(ENOSYS)));
    rules.push((SYS_openat2, Rule::Refuse(ENOSYS)));
    rules.push((
        SYS_ioctl,
        Rule::RefuseWhen {
            arg: 1,
            values: TERMINAL_INJECTION,
        },
    ));
    // No setuid or setgid bit, by any call that sets a mode.
    let mode = |mode: u32| Rule::ModeBits {
        mode,
        flags: None,
        bits: PRIVILEGE_BITS,
    };
    let create = |flags: u32, mode: u32| Rule::ModeBits {
        mode,
        flags: Some((flags, CREATING)),
        bits: PRIVILEGE_BITS,
    };
    #[cfg(target_arch = "x86_64")]
    rules.extend([
        (SYS_chmod, mode(1)),
        (SYS_creat, mode(1)),
        (SYS_mknod, mode(1)),
        (SYS_open, create(1, 2)),
    ]);
    rules.extend([
        (SYS_fchmod, mode(1)),
        (SYS_fchmodat, mode(2)),
        (SYS_FCHMODAT2, mode(2)),
        (SYS_mknodat, mode(2)),
        (SYS_openat, create(2, 3)),
    ]);
    // No extended attribute can be set: seccomp cannot read the attribute's name, and
    // `security.capability` is a file capability — written by root in the sandbox's user
    // namespace it holds on the host. EOPNOTSUPP reads as "this file system has none", which
    // `cp -a`, `tar` and `rsync -X` pass over.
    let setxattr = [SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr, SYS_SETXATTRAT];
    rules.extend(setxattr.iter().map(|&nr| (nr, Rule::Refuse(EOPNOTSUPP))));
    rules.push((
        SYS_socket,
        Rule::Families {
            families: if network_off {
                FAMILIES_NETWORK_OFF
            } else {
                FAMILIES_NETWORK_ON
            },
            netlink: NETLINK,
        },
    ));
    rules.push((
        SYS_socketpair,
        Rule::Families {
            families: FAMILIES_PAIR,
            netlink: &[],
        },
    ));
    program(&rules)
}

const LD_W_ABS: u16 = (BPF_LD | BPF_W | BPF_ABS) as u16;
const JEQ_K: u16 = (BPF_JMP | BPF_JEQ | BPF_K) as u16;
const JGE_K: u16 = (BPF_JMP | BPF_JGE | BPF_K) as u16;
const AND_K: u16 = (BPF_ALU | BPF_AND | BPF_K) as u16;
const RET_K: u16 = (BPF_RET | BPF_K) as u16;

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the sandbox's seccomp filter knows x86_64 and aarch64");
#[cfg(target_endian = "big")]
compile_error!("the sandbox's seccomp filter reads arguments' low halves as little-endian");

fn stmt(code: u16, k: u32) -> Instruction {
    Instruction {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Instruction {
    Instruction { code, jt, jf, k }
}

fn arg_low(i: u32) -> u32 {
    16 + 8 * i
}

/// The program: system calls of another architecture (an i386 `int 0x80`, x32) fail with
/// ENOSYS; those in `rules` get their rule; all others are allowed.
pub(crate) fn program(rules: &[(i64, Rule)]) -> Vec<Instruction> {
    let mut rules: Vec<(u32, Rule)> = rules.iter().map(|&(nr, r)| (nr as u32, r)).collect();
    rules.sort_by_key(|&(nr, _)| nr);
    let count = rules.len();
    rules.dedup_by_key(|&mut (nr, _)| nr);
    assert_eq!(count, rules.len(), "one rule per system call");
    let enosys = RET_ERRNO | ENOSYS as u32;
    let mut prog = vec![
        stmt(LD_W_ABS, 4),
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, enosys),
        stmt(LD_W_ABS, 0),
    ];
    if cfg!(target_arch = "x86_64") {
        // x32 system calls share the architecture value with their own numbering.
        prog.push(jump(JGE_K, 0x4000_0000, 0, 1));
        prog.push(stmt(RET_K, enosys));
    }
    prog.extend(search(&rules));
    prog
}

/// A binary search over `rules` (sorted by number), the accumulator holding `nr`.
fn search(rules: &[(u32, Rule)]) -> Vec<Instruction> {
    match rules {
        [] => vec![stmt(RET_K, RET_ALLOW)],
        [(nr, rule)] => {
            let action = action(*rule);
            let mut out = vec![jump(JEQ_K, *nr, 1, 0), stmt(RET_K, RET_ALLOW)];
            out.extend(action);
            out
        }
        _ => {
            let mid = rules.len() / 2;
            let left = search(&rules[..mid]);
            let right = search(&rules[mid..]);
            // nr >= first of the right half: skip the left half.
            let skip = u8::try_from(left.len()).expect("a subtree fits a jump");
            let mut out = vec![jump(JGE_K, rules[mid].0, skip, 0)];
            out.extend(left);
            out.extend(right);
            out
        }
    }
}

/// The instructions of one rule, reached with `nr` in the accumulator; each path returns.
fn action(rule: Rule) -> Vec<Instruction> {
    let eperm = RET_ERRNO | EPERM as u32;
    match rule {
        Rule::Refuse(errno) => vec![stmt(RET_K, RET_ERRNO | errno as u32)],
        Rule::FlagsNone(mask) => vec![
            stmt(LD_W_ABS, arg_low(0)),
            stmt(AND_K, mask),
            jump(JEQ_K, 0, 0, 1),
            stmt(RET_K, RET_ALLOW),
            stmt(RET_K, eperm),
        ],
        Rule::RefuseWhen { arg, values } => {
            // One of `values` → EPERM; else allow.
            let mut out = vec![stmt(LD_W_ABS, arg_low(arg))];
            let n = values.len();
            for (i, &value) in values.iter().enumerate() {
                // Matched: jump past the remaining comparisons and the allow.
                let to_refusal = u8::try_from(n - i).expect("few values");
                out.push(jump(JEQ_K, value, to_refusal, 0));
            }
            out.push(stmt(RET_K, RET_ALLOW));
            out.push(stmt(RET_K, eperm));
            out
        }
        Rule::ModeBits { mode, flags, bits } => {
            let mut out = Vec::new();
            if let Some((flags, creating)) = flags {
                // Not creating: the mode is not read; allow (three ahead: the RET_ALLOW).
                out.extend([
                    stmt(LD_W_ABS, arg_low(flags)),
                    stmt(AND_K, creating),
                    jump(JEQ_K, 0, 3, 0),
                ]);
            }
            out.extend([
                stmt(LD_W_ABS, arg_low(mode)),
                stmt(AND_K, bits),
                jump(JEQ_K, 0, 0, 1),
                stmt(RET_K, RET_ALLOW),
                stmt(RET_K, eperm),
            ]);
            out
        }
        Rule::Families { families, netlink } => families_action(families, netlink),
    }
}

/// `Rule::Families`: `[load family] [== f → allow]… [== NETLINK, else → refuse]
/// [load protocol] [== p → allow]… (the last one's miss → refuse) [allow] [refuse]`; with no
/// netlink protocols, the netlink comparison refuses both ways.
fn families_action(families: &[u32], netlink: &[u32]) -> Vec<Instruction> {
    let refuse = RET_ERRNO | EAFNOSUPPORT as u32;
    let protocols = if netlink.is_empty() {
        0
    } else {
        1 + netlink.len()
    };
    let len = 1 + families.len() + 1 + protocols + 2;
    let (allow_at, refuse_at) = (len - 2, len - 1);
    let offset = |from: usize, to: usize| u8::try_from(to - from - 1).expect("a short rule");
    let mut out = vec![stmt(LD_W_ABS, arg_low(0))];
    for &family in families {
        let at = out.len();
        out.push(jump(JEQ_K, family, offset(at, allow_at), 0));
    }
    let at = out.len();
    let netlink_family = AF_NETLINK as u32;
    if netlink.is_empty() {
        let to_refusal = offset(at, refuse_at);
        out.push(jump(JEQ_K, netlink_family, to_refusal, to_refusal));
    } else {
        out.push(jump(JEQ_K, netlink_family, 0, offset(at, refuse_at)));
        out.push(stmt(LD_W_ABS, arg_low(2)));
        for (i, &protocol) in netlink.iter().enumerate() {
            let at = out.len();
            let miss = if i + 1 == netlink.len() {
                offset(at, refuse_at)
            } else {
                0
            };
            out.push(jump(JEQ_K, protocol, offset(at, allow_at), miss));
        }
    }
    out.push(stmt(RET_K, RET_ALLOW));
    out.push(stmt(RET_K, refuse));
    debug_assert_eq!(out.len(), len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use libc::{
        AF_ALG, AF_BLUETOOTH, AF_PACKET, AF_VSOCK, O_RDONLY, O_RDWR, O_TMPFILE, O_WRONLY,
        SYS_getxattr, SYS_read,
    };

    /// A classic BPF interpreter for the instructions used above, to check the program's
    /// decisions without installing it.
    fn run(prog: &[Instruction], nr: u32, arch: u32, args: [u32; 6]) -> u32 {
        run_counting(prog, nr, arch, args).0
    }

    /// [`run`], and how many instructions ran.
    fn run_counting(prog: &[Instruction], nr: u32, arch: u32, args: [u32; 6]) -> (u32, usize) {
        let load = |k: u32| match k {
            0 => nr,
            4 => arch,
            k if k >= 16 && (k - 16) % 8 == 0 => args[((k - 16) / 8) as usize],
            _ => panic!("unexpected load at {k}"),
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        for ran in 1.. {
            let i = prog[pc];
            match i.code {
                LD_W_ABS => acc = load(i.k),
                AND_K => acc &= i.k,
                RET_K => return (i.k, ran),
                JEQ_K | JGE_K => {
                    let taken = if i.code == JEQ_K {
                        acc == i.k
                    } else {
                        acc >= i.k
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                other => panic!("unexpected instruction {other}"),
            }
            pc += 1;
        }
        unreachable!("every path returns")
    }

    #[test]
    fn decides_as_the_rules_say() {
        const VALUES: &[u32] = &[7, 9];
        let rules: Vec<(i64, Rule)> = (0..40)
            .map(|n| (n * 7 + 3, Rule::Refuse(EPERM)))
            .chain([
                (1000, Rule::FlagsNone(0x1000_0000)),
                (
                    1001,
                    Rule::RefuseWhen {
                        arg: 1,
                        values: VALUES,
                    },
                ),
                (1002, Rule::Refuse(ENOSYS)),
            ])
            .collect();
        let prog = program(&rules);
        assert!(prog.len() < 200, "{}", prog.len());
        let eperm = RET_ERRNO | EPERM as u32;
        let arch = AUDIT_ARCH;
        for nr in 0..1100u32 {
            let expected = if (3..283).contains(&nr) && (nr - 3) % 7 == 0 {
                eperm
            } else if nr == 1002 {
                RET_ERRNO | ENOSYS as u32
            } else if nr == 1000 || nr == 1001 {
                continue;
            } else {
                RET_ALLOW
            };
            assert_eq!(run(&prog, nr, arch, [0; 6]), expected, "nr {nr}");
        }
        assert_eq!(run(&prog, 1000, arch, [0x11, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(run(&prog, 1000, arch, [0x1000_0011, 0, 0, 0, 0, 0]), eperm);
        for (value, expected) in [(7, eperm), (9, eperm), (8, RET_ALLOW), (0, RET_ALLOW)] {
            assert_eq!(run(&prog, 1001, arch, [0, value, 0, 0, 0, 0]), expected);
        }
        assert_eq!(
            run(&prog, 5, 0x4000_0003, [0; 6]),
            RET_ERRNO | ENOSYS as u32
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(
                run(&prog, 0x4000_0001, arch, [0; 6]),
                RET_ERRNO | ENOSYS as u32
            );
        }
    }

    #[test]
    fn the_sandbox_filter_is_short_and_refuses_what_it_says() {
        let eperm = RET_ERRNO | EPERM as u32;
        for network_off in [false, true] {
            let prog = filter(network_off);
            let nr = |n: c_long| n as u32;
            let arch = AUDIT_ARCH;
            // A binary search: few instructions run for any call, the most common included.
            let most = (0..500)
                .map(|n| run_counting(&prog, n, arch, [0; 6]).1)
                .max()
                .expect("calls");
            assert!(most <= 24, "{most} instructions for one call");
            let read = run_counting(&prog, nr(SYS_read), arch, [0; 6]).1;
            assert!(read <= 14, "{read} instructions for read(2)");
            assert_eq!(run(&prog, nr(SYS_mount), arch, [0; 6]), eperm);
            assert_eq!(run(&prog, nr(SYS_read), arch, [0; 6]), RET_ALLOW);
            let tiocsti = TIOCSTI as u32;
            assert_eq!(
                run(&prog, nr(SYS_ioctl), arch, [0, tiocsti, 0, 0, 0, 0]),
                eperm
            );
            assert_eq!(
                run(&prog, nr(SYS_ioctl), arch, [0, 0x5401, 0, 0, 0, 0]),
                RET_ALLOW
            );
            let newuser = CLONE_NEWUSER as u32;
            assert_eq!(
                run(&prog, nr(SYS_clone), arch, [newuser, 0, 0, 0, 0, 0]),
                eperm
            );
            let refused = RET_ERRNO | EAFNOSUPPORT as u32;
            let socket = |family: i32, protocol: u32| {
                let args = [family as u32, 1, protocol, 0, 0, 0];
                run(&prog, nr(SYS_socket), arch, args)
            };
            let unix = if network_off { refused } else { RET_ALLOW };
            assert_eq!(socket(AF_UNIX, 0), unix);
            assert_eq!(socket(AF_INET, 0), RET_ALLOW);
            assert_eq!(socket(AF_INET6, 0), RET_ALLOW);
            assert_eq!(socket(AF_NETLINK, 0), RET_ALLOW);
            assert_eq!(socket(AF_NETLINK, 4), RET_ALLOW);
            assert_eq!(socket(AF_NETLINK, 9), refused, "audit");
            assert_eq!(socket(AF_NETLINK, 15), refused, "uevents");
            for family in [AF_VSOCK, AF_PACKET, AF_ALG, AF_BLUETOOTH] {
                assert_eq!(socket(family, 0), refused, "family {family}");
            }
            let pair = |family: i32| {
                let args = [family as u32, 1, 0, 0, 0, 0];
                run(&prog, nr(SYS_socketpair), arch, args)
            };
            assert_eq!(pair(AF_UNIX), RET_ALLOW);
            assert_eq!(pair(AF_VSOCK), refused);
            assert_eq!(pair(AF_NETLINK), refused);
            // No setuid or setgid bit, whichever call sets the mode; plain modes pass.
            let (suid, sgid) = (0o4755, 0o2755);
            let call = |n: c_long, args: [u32; 6]| run(&prog, nr(n), arch, args);
            assert_eq!(call(SYS_fchmodat, [0, 0, suid, 0, 0, 0]), eperm);
            assert_eq!(call(SYS_FCHMODAT2, [0, 0, sgid, 0, 0, 0]), eperm);
            assert_eq!(call(SYS_fchmod, [0, suid, 0, 0, 0, 0]), eperm);
            assert_eq!(call(SYS_fchmodat, [0, 0, 0o755, 0, 0, 0]), RET_ALLOW);
            assert_eq!(call(SYS_mknodat, [0, 0, 0o104_755, 0, 0, 0]), eperm);
            let creat = O_CREAT as u32 | O_WRONLY as u32;
            assert_eq!(call(SYS_openat, [0, 0, creat, suid, 0, 0]), eperm);
            assert_eq!(call(SYS_openat, [0, 0, creat, 0o644, 0, 0]), RET_ALLOW);
            // Not creating: the mode argument is whatever was left in the register.
            let read_only = O_RDONLY as u32;
            assert_eq!(call(SYS_openat, [0, 0, read_only, suid, 0, 0]), RET_ALLOW);
            let tmpfile = O_TMPFILE as u32 | O_RDWR as u32;
            assert_eq!(call(SYS_openat, [0, 0, tmpfile, suid, 0, 0]), eperm);
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(call(SYS_chmod, [0, suid, 0, 0, 0, 0]), eperm);
                assert_eq!(call(SYS_open, [0, creat, suid, 0, 0, 0]), eperm);
                assert_eq!(call(SYS_creat, [0, sgid, 0, 0, 0, 0]), eperm);
            }
            let unsupported = RET_ERRNO | EOPNOTSUPP as u32;
            for set in [SYS_setxattr, SYS_lsetxattr, SYS_fsetxattr] {
                assert_eq!(call(set, [0; 6]), unsupported);
            }
            assert_eq!(call(SYS_SETXATTRAT, [0; 6]), unsupported);
            assert_eq!(call(SYS_getxattr, [0; 6]), RET_ALLOW);
        }
    }
}

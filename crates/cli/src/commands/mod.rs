//! One file per subcommand that does more than print: `run`, `artifact`, `check`, and the
//! servers' start (`serve`, `mcp`).

pub(crate) mod artifact;
pub(crate) mod check;
pub(crate) mod run;
pub(crate) mod serve;

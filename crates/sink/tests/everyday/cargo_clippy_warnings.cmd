cargo clippy

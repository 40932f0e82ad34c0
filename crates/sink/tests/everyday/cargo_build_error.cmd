cargo build

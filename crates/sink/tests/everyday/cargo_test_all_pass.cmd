cargo test

//! The `strata` command line.

fn main() {
    println!("strata");
}

//! What a run measures: the command line parsed into [`Options`].

use std::path::PathBuf;

use crate::error::BenchError;

/// Every figure the bench has.
pub const ALL_FIGURES: &[u8] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub quick: bool,
    pub reps: usize,
    pub sizes: Vec<usize>,
    pub handshakes: usize,
    pub out: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub provider: Option<PathBuf>,
    /// Figure 11's yardstick provider and CPU wrapper, instead of building them.
    pub yardstick: Option<PathBuf>,
    pub cpu_wrapper: Option<PathBuf>,
    /// The figures to run (figures 2 and 4 come from the same applies).
    pub figures: Vec<u8>,
}

impl Options {
    /// Whether figure `n` is run.
    pub fn wants(&self, n: u8) -> bool {
        self.figures.contains(&n)
    }
}

/// The command line (without the program name) as [`Options`]; `--quick` shrinks
/// everything that an explicit flag does not set.
pub fn parse_args(args: &[String]) -> Result<Options, BenchError> {
    let mut o = Options {
        quick: false,
        reps: 5,
        sizes: vec![1, 10, 100],
        handshakes: 50,
        out: None,
        json: None,
        provider: None,
        yardstick: None,
        cpu_wrapper: None,
        figures: ALL_FIGURES.to_vec(),
    };
    let mut reps = None;
    let mut sizes = None;
    let mut handshakes = None;
    let mut it = args.iter();
    let number = |v: Option<&String>, flag: &str| -> Result<usize, BenchError> {
        v.and_then(|v| v.parse::<usize>().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| BenchError::Usage(format!("{flag} needs a positive number")))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--reps" => reps = Some(number(it.next(), "--reps")?),
            "--handshakes" => handshakes = Some(number(it.next(), "--handshakes")?),
            "--out" => o.out = it.next().map(PathBuf::from),
            "--json" => o.json = it.next().map(PathBuf::from),
            "--provider" => o.provider = it.next().map(PathBuf::from),
            "--yardstick" => o.yardstick = it.next().map(PathBuf::from),
            "--cpu-wrapper" => o.cpu_wrapper = it.next().map(PathBuf::from),
            "--sizes" => {
                let list = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--sizes needs a list such as 1,10,100".into()))?;
                let parsed: Result<Vec<usize>, _> =
                    list.split(',').map(|s| s.trim().parse::<usize>()).collect();
                match parsed {
                    Ok(v) if !v.is_empty() && v.iter().all(|n| *n > 0) => sizes = Some(v),
                    _ => {
                        return Err(BenchError::Usage(format!(
                            "--sizes {list}: positive numbers, comma-separated"
                        )));
                    }
                }
            }
            "--figures" => {
                let list = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--figures needs a list such as 1,5,8".into()))?;
                let parsed: Result<Vec<u8>, _> = list.split(',').map(|s| s.trim().parse::<u8>()).collect();
                match parsed {
                    Ok(v) if !v.is_empty() && v.iter().all(|n| ALL_FIGURES.contains(n)) => o.figures = v,
                    _ => {
                        return Err(BenchError::Usage(format!(
                            "--figures {list}: figure numbers 1 to 11, comma-separated"
                        )));
                    }
                }
            }
            "-h" | "--help" => return Err(BenchError::Usage("help".into())),
            other => return Err(BenchError::Usage(format!("unknown argument {other}"))),
        }
    }
    if o.out.is_some() && o.figures != ALL_FIGURES {
        return Err(BenchError::Usage(
            "--figures makes a partial run, which does not rewrite the report: drop --out".into(),
        ));
    }
    if o.quick {
        o.reps = 1;
        o.sizes = vec![1];
        o.handshakes = 3;
    }
    o.reps = reps.unwrap_or(o.reps);
    o.sizes = sizes.unwrap_or(o.sizes);
    o.handshakes = handshakes.unwrap_or(o.handshakes);
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::parse_args;
    use crate::error::BenchError;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn quick_mode_shrinks_everything_but_explicit_flags_win() {
        let o = parse_args(&args(&["--quick"])).unwrap();
        assert_eq!((o.reps, o.sizes.clone(), o.handshakes), (1, vec![1], 3));
        let o = parse_args(&args(&["--quick", "--reps", "2", "--sizes", "1,5"])).unwrap();
        assert_eq!((o.reps, o.sizes), (2, vec![1, 5]));
        let o = parse_args(&args(&[])).unwrap();
        assert_eq!((o.reps, o.sizes), (5, vec![1, 10, 100]));
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        for bad in [
            &["--reps", "0"][..],
            &["--sizes", "1,x"],
            &["--what"],
            &["--figures", "12"],
            &["--figures", "1", "--out", "x.md"],
        ] {
            assert!(
                matches!(parse_args(&args(bad)), Err(BenchError::Usage(_))),
                "{bad:?}"
            );
        }
    }
}

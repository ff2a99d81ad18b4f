//! Exit statuses and the one shape of error messages, for every
//! subcommand: `sctp-handover: error: WHAT`, WHAT naming the file, frame
//! and reason where they are known; clap's own errors included.

use std::process::ExitCode;

/// What `--help` (and the man pages) say about exit statuses and errors.
pub const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  every input was read and everything written
  1  some inputs failed or were left out (each named on standard error; the
     rest was analysed and written), or the run stopped on an error after
     it started (e.g. an output could not be written)
  2  usage or option error: the command line was refused (unknown option,
     bad value, bad --filter, unreadable --events, `-` given twice);
     nothing was read
Errors are printed to standard error as `sctp-handover: error: WHAT`.
`-` as an input reads a capture from standard input (analyze, report).";

/// How a run ended, as its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: every input read, everything written.
    Complete,
    /// 1: some inputs failed or were left out, the rest written; or the
    /// run stopped on an error after it started.
    Partial,
    /// 2: the command line was refused; nothing read.
    Usage,
}

impl Status {
    /// Complete unless `some_failed`.
    pub fn partial_if(some_failed: bool) -> Status {
        if some_failed {
            Status::Partial
        } else {
            Status::Complete
        }
    }
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> ExitCode {
        ExitCode::from(match s {
            Status::Complete => 0,
            Status::Partial => 1,
            Status::Usage => 2,
        })
    }
}

/// A command line refused after clap accepted it: an option's value that
/// cannot be used (a capture filter that does not compile, an --events file
/// that cannot be read, `-` twice). Exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Marks an error as a usage error (its whole chain kept in the message).
pub fn usage(e: impl Into<anyhow::Error>) -> anyhow::Error {
    let e = e.into();
    anyhow::Error::new(UsageError(format!("{e:#}")))
}

/// Prints one error line (`sctp-handover: error: …`).
pub fn print_error(what: impl std::fmt::Display) {
    eprintln!("sctp-handover: error: {what}");
}

/// The exit status of a run that stopped on `e`, printed: 2 for a usage
/// error, 1 otherwise. A closed standard output (`analyze … | head`) ends
/// the run quietly with 0, as the reader asked for no more (ripgrep and
/// most Unix tools do the same).
pub fn failed(e: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(e) {
        return ExitCode::SUCCESS;
    }
    print_error(format_args!("{e:#}"));
    if e.downcast_ref::<UsageError>().is_some() {
        Status::Usage.into()
    } else {
        Status::Partial.into()
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// clap's refusal of the command line, in our format, exit status 2;
/// `--help` and `--version` print to standard output with status 0.
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            // Printing help can only fail on a closed standard output.
            let _ = e.print();
            ExitCode::SUCCESS
        }
        // `sctp-handover` or `sctp-handover SUBCOMMAND` alone: the help,
        // on standard error, as a usage error.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            Status::Usage.into()
        }
        _ => {
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("sctp-handover: error: {text}");
            Status::Usage.into()
        }
    }
}

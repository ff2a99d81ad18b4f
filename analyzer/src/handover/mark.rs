//! A place in the capture: the frame a packet came in and its time. The
//! engine's state, its TSN history and its logic all hold marks; a record
//! turns one into a [`Point`] when it is handed out.

use super::model::Point;
use crate::time::Timestamp;

#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    pub(super) frame: u64,
    pub(super) time: Timestamp,
}

impl Mark {
    pub(super) fn point(self, what: &'static str) -> Point {
        Point::frame(self.frame, self.time, what)
    }
}
